"""The command bus between the control plane and nodes, on a real redis-server."""

from __future__ import annotations

import time

import pytest
import redis

from engine.cluster.bus import TIMEOUT, CommandBus, CommandListener
from engine.cluster.keys import ClusterKeys


@pytest.fixture
def listeners(redis_server):
    started = []

    def start(node_id: str, **handlers):
        listener = CommandListener(redis.Redis(host="127.0.0.1", port=redis_server.port), ClusterKeys("test"),
                                   node_id, block_ms=200)
        for kind, handler in handlers.items():
            listener.register(kind, handler)
        listener.start()
        started.append(listener)
        return listener

    yield start
    for listener in started:
        listener.stop()


def test_each_node_answers_and_a_silent_one_times_out(client, listeners):
    listeners("n1", echo=lambda command: {"node": "n1", "args": command.args})
    listeners("n2", echo=lambda command: {"node": "n2", "args": command.args})
    bus = CommandBus(client, ClusterKeys("test"))
    started = time.monotonic()
    replies = bus.request(["n1", "n2", "n3"], "echo", {"x": 1}, timeout=1.5)
    assert replies["n1"].ok and replies["n1"].result == {"node": "n1", "args": {"x": 1}}
    assert replies["n2"].ok and replies["n2"].result["node"] == "n2"
    assert not replies["n3"].ok and replies["n3"].timed_out and replies["n3"].error == TIMEOUT
    assert 1.4 < time.monotonic() - started < 3


def test_answers_come_as_soon_as_every_node_replied(client, listeners):
    listeners("n1", echo=lambda command: "pong")
    started = time.monotonic()
    replies = CommandBus(client, ClusterKeys("test")).request(["n1"], "echo", timeout=10)
    assert replies["n1"].result == "pong"
    assert time.monotonic() - started < 2
    assert not client.keys("flowsite:test:reply:*"), "the reply list is removed once read"


def test_failures_and_unknown_commands_are_reported_not_raised(client, listeners):
    def broken(command):
        raise ValueError("no such processor: p9")

    listeners("n1", stop=broken)
    bus = CommandBus(client, ClusterKeys("test"))
    replies = bus.request(["n1"], "stop", timeout=5)
    assert not replies["n1"].ok and replies["n1"].error == "no such processor: p9"
    replies = bus.request(["n1"], "reboot", timeout=5)
    assert not replies["n1"].ok and replies["n1"].error == "unknown command 'reboot'"


def test_a_command_whose_deadline_passed_while_the_node_was_busy_is_not_run(client, listeners):
    ran = []

    def slow(command):
        ran.append(command.args["n"])
        time.sleep(1.0)
        return "done"

    listeners("n1", work=slow)
    bus = CommandBus(client, ClusterKeys("test"))
    bus.send(["n1"], "work", {"n": 1})
    time.sleep(0.3)  # the node is busy with the first command
    assert bus.request(["n1"], "work", {"n": 2}, timeout=0.3)["n1"].timed_out
    time.sleep(1.5)
    assert ran == [1]


def test_a_listener_rides_out_a_redis_restart(redis_server, listeners, client):
    listeners("n1", echo=lambda command: "pong")
    redis_server.stop()
    time.sleep(1.5)
    redis_server.start()
    fresh = redis.Redis(host="127.0.0.1", port=redis_server.port)
    deadline = time.monotonic() + 10
    answered = False
    while time.monotonic() < deadline and not answered:
        answered = CommandBus(fresh, ClusterKeys("test")).request(["n1"], "echo", timeout=1)["n1"].ok
    assert answered
