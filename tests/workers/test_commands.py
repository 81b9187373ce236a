"""A node's command handlers, on a real node and a real redis-server, asked through the command bus."""

from __future__ import annotations

import pytest

from engine.cluster.keys import ClusterKeys
from engine.testing.flows import connection, flow, group, processor
from tests.cluster_nodes import InProcessNode
from tests.processes import wait_until

KEYS = ClusterKeys("test")


def _document() -> dict:
    inner = group("inner", processors=[processor("inner-gen", "GenerateFlowFile", {"File Size": "1 B"},
                                                 state="DISABLED")])
    return flow(processors=[processor("gen", "GenerateFlowFile", {"File Size": "10 B"}, schedulingPeriod="20 millis"),
                            processor("put", "PutFile", {"Directory": "/nonexistent-never-written"},
                                      auto_terminate=["success", "failure"], state="ENABLED"),
                            processor("broken", "PutFile", {}, auto_terminate=["success", "failure"],
                                      state="ENABLED")],
                connections=[connection("c", "gen", "put")], groups=[inner])


@pytest.fixture
def node(redis_server, tmp_path):
    running = InProcessNode("n1", tmp_path / "n1", redis_server.port, KEYS).start(_document())
    yield running
    running.stop()


def _ask(bus, kind, **args):
    return bus.request(["n1"], kind, args, timeout=5)["n1"]


def test_status_is_the_flow_status_and_a_group_status_with_the_node_figures(bus, node):
    reply = _ask(bus, "status")
    assert reply.ok, reply.error
    assert {p["id"] for p in reply.result["processors"]} == {"gen", "put", "broken", "inner-gen"}
    assert reply.result["node"]["max_timer_driven_threads"] > 0
    reply = _ask(bus, "status", group_id="inner")
    assert reply.ok, reply.error
    assert reply.result["group"]["id"] == "inner" and reply.result["group"]["disabled"] == 1
    assert "queued_count" in reply.result["node"]


def test_an_unknown_group_is_a_clear_error(bus, node):
    reply = _ask(bus, "status", group_id="ghost")
    assert not reply.ok and "no process group has identifier 'ghost'" in reply.error


def test_stop_and_start_a_processor(bus, node):
    reply = _ask(bus, "processor.stop", id="gen")
    assert reply.ok and reply.result["id"] == "gen" and reply.result["run_status"] in ("Stopped", "Stopping")
    wait_until(lambda: node.node.controller.processor("gen").run_status() == "Stopped", what="gen stopped")
    reply = _ask(bus, "processor.start", id="gen")
    assert reply.ok and reply.result == {"id": "gen", "run_status": "Running"}
    assert node.node.controller.processor("gen").run_status() == "Running"


def test_disable_and_enable_a_processor(bus, node):
    assert _ask(bus, "processor.disable", id="put").result == {"id": "put", "run_status": "Disabled"}
    assert _ask(bus, "processor.enable", id="put").result == {"id": "put", "run_status": "Stopped"}


def test_unknown_and_invalid_processors_are_clear_errors(bus, node):
    reply = _ask(bus, "processor.start", id="ghost")
    assert not reply.ok and "no processor has identifier 'ghost'" in reply.error
    reply = _ask(bus, "processor.start", id="broken")
    assert not reply.ok and "is invalid" in reply.error and "Directory" in reply.error
    reply = _ask(bus, "processor.start")
    assert not reply.ok and "needs the component's 'id'" in reply.error


def test_terminate_needs_a_stopping_processor(bus, node):
    reply = _ask(bus, "processor.terminate", id="gen")
    assert not reply.ok and "must be stopped" in reply.error


def test_empty_a_queue_drops_what_waits(bus, node):
    queue = node.node.controller.queue("c")
    wait_until(lambda: len(queue) >= 3, what="FlowFiles queued")
    _ask(bus, "processor.stop", id="gen")
    wait_until(lambda: node.node.controller.processor("gen").run_status() == "Stopped", what="gen stopped")
    waiting = len(queue)
    reply = _ask(bus, "queue.empty", id="c", requester="ann")
    assert reply.ok and reply.result == {"id": "c", "dropped": waiting, "dropped_bytes": 10 * waiting}
    assert len(queue) == 0
    reply = _ask(bus, "queue.empty", id="nope")
    assert not reply.ok and "no connection has identifier 'nope'" in reply.error


def test_a_node_without_a_flow_says_so(bus, redis_server, tmp_path):
    idle = InProcessNode("n1", tmp_path / "idle", redis_server.port, KEYS).start(None)
    try:
        reply = _ask(bus, "status")
        assert not reply.ok and reply.error == "node n1 runs no flow at the moment"
    finally:
        idle.stop()
