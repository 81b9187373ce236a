"""The command bus between the control plane and nodes, on a real redis-server."""

from __future__ import annotations

import json
import time

import pytest
import redis

from engine.cluster.bus import TIMEOUT, Command, CommandBus, CommandListener
from engine.cluster.keys import ClusterKeys
from engine.cluster.signing import CommandSigner

SIGNER = CommandSigner("the test cluster's key")


@pytest.fixture
def listeners(redis_server):
    started = []

    def start(node_id: str, **handlers):
        listener = CommandListener(redis.Redis(host="127.0.0.1", port=redis_server.port), ClusterKeys("test"),
                                   node_id, SIGNER, block_ms=200)
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
    bus = CommandBus(client, ClusterKeys("test"), SIGNER)
    started = time.monotonic()
    replies = bus.request(["n1", "n2", "n3"], "echo", {"x": 1}, timeout=1.5)
    assert replies["n1"].ok and replies["n1"].result == {"node": "n1", "args": {"x": 1}}
    assert replies["n2"].ok and replies["n2"].result["node"] == "n2"
    assert not replies["n3"].ok and replies["n3"].timed_out and replies["n3"].error == TIMEOUT
    assert 1.4 < time.monotonic() - started < 3


def test_answers_come_as_soon_as_every_node_replied(client, listeners):
    listeners("n1", echo=lambda command: "pong")
    started = time.monotonic()
    replies = CommandBus(client, ClusterKeys("test"), SIGNER).request(["n1"], "echo", timeout=10)
    assert replies["n1"].result == "pong"
    assert time.monotonic() - started < 2
    assert not client.keys("flowsite:test:reply:*"), "the reply list is removed once read"


def test_failures_and_unknown_commands_are_reported_not_raised(client, listeners):
    def broken(command):
        raise ValueError("no such processor: p9")

    listeners("n1", stop=broken)
    bus = CommandBus(client, ClusterKeys("test"), SIGNER)
    replies = bus.request(["n1"], "stop", timeout=5)
    assert not replies["n1"].ok and replies["n1"].error == "no such processor: p9"
    replies = bus.request(["n1"], "reboot", timeout=5)
    assert not replies["n1"].ok and replies["n1"].error == "unknown command 'reboot'"
    assert replies["n1"].code == ""


def test_a_failure_carries_the_code_of_its_exception(client, listeners):
    class Gone(LookupError):
        code = "not_found"

    def lookup(command):
        raise Gone("provenance event 7 is not known on this node")

    listeners("n1", lookup=lookup)
    [reply] = CommandBus(client, ClusterKeys("test"), SIGNER).request(["n1"], "lookup", timeout=5).values()
    assert (reply.ok, reply.code, reply.error) == (False, "not_found", "provenance event 7 is not known on this node")


def test_a_command_whose_deadline_passed_while_the_node_was_busy_is_not_run(client, listeners):
    ran = []

    def slow(command):
        ran.append(command.args["n"])
        time.sleep(1.0)
        return "done"

    listeners("n1", work=slow)
    bus = CommandBus(client, ClusterKeys("test"), SIGNER)
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
        answered = CommandBus(fresh, ClusterKeys("test"), SIGNER).request(["n1"], "echo", timeout=1)["n1"].ok
    assert answered


def _entry(client, node: str = "n1") -> dict:
    """The newest entry of ``node``'s command stream, as Redis gives it back."""
    (_, fields), = client.xrevrange(ClusterKeys("test").commands(node), count=1)
    return {key.decode(): value.decode() for key, value in fields.items()}


def _reply(client, reply_key: str) -> dict:
    popped = client.blpop([reply_key], timeout=5)
    assert popped is not None, "the node did not answer"
    return json.loads(popped[1])


def test_forged_altered_and_replayed_commands_are_refused_and_reported(client, listeners):
    ran, refused = [], []
    listener = listeners("n1", work=lambda command: ran.append(command.args) or "done")
    listener.on_refused = refused.append
    keys = ClusterKeys("test")
    assert CommandBus(client, keys, SIGNER).request(["n1"], "work", {"n": 1}, timeout=5)["n1"].result == "done"
    genuine = _entry(client)
    reply_to = json.loads(genuine["command"])["reply_to"]

    forged = CommandBus(client, keys, CommandSigner("a guessed key")).request(["n1"], "work", {"n": 2}, timeout=1.5)
    assert forged["n1"].timed_out, "refused (and the refusal, signed with the real key, does not verify there)"
    altered = {**json.loads(genuine["command"]), "args": {"n": 3}}
    client.xadd(keys.commands("n1"), {"command": json.dumps(altered), "mac": genuine["mac"]})
    reply = _reply(client, reply_to)
    assert reply["refused"] and not reply["ok"] and "forged or altered: the MAC does not match" in reply["error"]
    client.xadd(keys.commands("n1"), genuine)
    reply = _reply(client, reply_to)
    assert reply["refused"] and "replayed: command" in reply["error"]
    unsigned = {"command": genuine["command"]}
    client.xadd(keys.commands("n1"), unsigned)
    assert "unsigned" in _reply(client, reply_to)["error"]

    assert ran == [{"n": 1}], "nothing but the genuine command ran"
    assert len(refused) == 4 and all("refused" in message for message in refused)
    assert [m.split(": ", 1)[1].split(":")[0] for m in refused] == ["forged or altered", "forged or altered",
                                                                    "replayed", "unsigned"]


def test_a_command_issued_outside_the_window_is_refused_as_expired(client, listeners):
    refused = []
    listener = listeners("n1", work=lambda command: "done")
    listener.on_refused = refused.append
    old = time.time() - 3600
    command = Command("c-old", "work", {}, "flowsite:test:reply:c-old", 0.0, old)
    client.xadd(ClusterKeys("test").commands("n1"), command.encode(SIGNER, ClusterKeys("test"), "n1"))
    reply = _reply(client, "flowsite:test:reply:c-old")
    assert reply["refused"] and "expired" in reply["error"]
    assert SIGNER.valid("reply", {k: reply[k] for k in ("request", "node", "ok", "result", "error")}, reply["mac"])


def test_a_command_signed_for_another_node_is_refused(client, listeners):
    listeners("n1", work=lambda command: "done")
    command = Command("c-n2", "work", {}, "flowsite:test:reply:c-n2", 0.0, time.time())
    client.xadd(ClusterKeys("test").commands("n1"), command.encode(SIGNER, ClusterKeys("test"), "n2"))
    assert "forged or altered" in _reply(client, "flowsite:test:reply:c-n2")["error"]


def test_a_reply_that_does_not_verify_is_dropped(client, listeners):
    listeners("n1", echo=lambda command: "pong")
    replies = CommandBus(client, ClusterKeys("test"), CommandSigner("another key")).request(["n1"], "echo",
                                                                                          timeout=1.5)
    assert replies["n1"].timed_out, "the node refused it, and its signed refusal does not verify here either"
