"""The inspection commands of docs/provenance.md, on a real node answering a real redis-server
through the command bus: searches, events, content, lineage, replay, queues, and the pool that
keeps ``status`` quick while slow commands run."""

from __future__ import annotations

import base64
import threading
import time

import pytest

from engine.cluster.keys import ClusterKeys
from engine.provenance.event import ProvenanceEventType as E
from engine.provenance.query import ProvenanceQuery
from tests.cluster_nodes import InProcessNode
from tests.engine.runtime.inspected import text_flow
from tests.processes import wait_until

KEYS = ClusterKeys("test")
SCOPE = ["gen", "rewrite", "sink"]


@pytest.fixture
def node(redis_server, tmp_path):
    running = InProcessNode("n1", tmp_path / "n1", redis_server.port, KEYS).start(text_flow())
    provenance = running.node.controller.storage.provenance

    def modified():
        provenance.rollover()
        return len(provenance.query(ProvenanceQuery(event_type=E.CONTENT_MODIFIED, limit=2)).events) == 2

    wait_until(modified, 30, "two CONTENT_MODIFIED events")
    yield running
    running.stop()


def ask(bus, kind, **args):
    reply = bus.request(["n1"], kind, args, timeout=10)["n1"]
    return reply


def ok(bus, kind, **args):
    reply = ask(bus, kind, **args)
    assert reply.ok, reply.error
    return reply.result


def modified_event(bus) -> dict:
    result = ok(bus, "provenance.query", query={"event_types": ["CONTENT_MODIFIED"]}, scope=SCOPE, limit=1)
    return result["events"][0]


def test_search_answers_summaries_within_the_scope(bus, node):
    result = ok(bus, "provenance.query", query={"component_ids": ["rewrite", "gen"],
                                                "event_types": ["CONTENT_MODIFIED", "create"]},
                scope=SCOPE, limit=2)
    assert result["node"] == "n1" and len(result["events"]) == 2 and result["more"] is True
    assert result["oldest_event_time"] <= min(e["time"] for e in result["events"])
    first = result["events"][0]
    assert set(first) >= {"id", "type", "time", "flowfile_uuid", "component_id", "file_size", "parent_uuids"}
    assert "attributes" not in first
    assert [e["id"] for e in result["events"]] == sorted((e["id"] for e in result["events"]), reverse=True)
    outside = ok(bus, "provenance.query", query={}, scope=["sink"], limit=100)
    assert outside["events"] == [] and outside["more"] is False
    details = ok(bus, "provenance.query", query={"details": "*", "inverse": ["details"], "min_size": 11},
                 scope=SCOPE, limit=100)
    assert details["events"] and all(e["file_size"] >= 11 for e in details["events"])


def test_bad_requests_are_errors_that_say_what_is_wrong(bus, node):
    reply = ask(bus, "provenance.query", query={"colour": "red"}, scope=SCOPE)
    assert not reply.ok and "unknown query criteria 'colour'" in reply.error
    reply = ask(bus, "provenance.query", query={})
    assert not reply.ok and "needs 'scope' as a list" in reply.error
    reply = ask(bus, "provenance.event", id="x", scope=SCOPE)
    assert not reply.ok and "'id' must be a whole number" in reply.error
    reply = ask(bus, "provenance.content", id=1, scope=SCOPE, direction="sideways")
    assert not reply.ok and "'input' or its 'output'" in reply.error


def test_an_event_in_full_and_out_of_scope_exactly_as_unknown(bus, node):
    summary = modified_event(bus)
    event = ok(bus, "provenance.event", id=summary["id"], scope=SCOPE)["event"]
    assert event["id"] == summary["id"] and event["input_claim"]["length"] == 5
    assert event["replay_available"] and event["input_content_available"]
    assert {"name": "tag", "value": "t1", "previous_value": "t1"} in event["attributes"]
    outside = ask(bus, "provenance.event", id=summary["id"], scope=["gen"])
    unknown = ask(bus, "provenance.event", id=10**9, scope=SCOPE)
    assert not outside.ok and not unknown.ok
    assert outside.error == unknown.error.replace(str(10**9), str(summary["id"]))
    outside = ask(bus, "provenance.content", id=summary["id"], scope=["gen"], direction="input")
    assert outside.error == unknown.error.replace(str(10**9), str(summary["id"]))


def test_content_comes_in_base64_chunks(bus, node):
    summary = modified_event(bus)
    args = dict(id=summary["id"], scope=SCOPE)
    before = ok(bus, "provenance.content", **args, direction="input")
    assert before["size"] == 5 and base64.b64decode(before["data"]) == b"hello"
    parts = [ok(bus, "provenance.content", **args, direction="output", offset=offset, length=4)
             for offset in (0, 4, 8)]
    assert [p["offset"] for p in parts] == [0, 4, 8] and {p["size"] for p in parts} == {11}
    assert b"".join(base64.b64decode(p["data"]) for p in parts) == b"HELLO WORLD"
    capped = ok(bus, "provenance.content", **args, direction="output", length=10 << 20)
    assert base64.b64decode(capped["data"]) == b"HELLO WORLD"


def test_lineage_by_uuid_by_event_and_expanded(bus, node):
    summary = modified_event(bus)
    by_uuid = ok(bus, "provenance.lineage", uuid=summary["flowfile_uuid"], scope=SCOPE)
    types = {e["type"] for e in by_uuid["events"]}
    assert {"CREATE", "CONTENT_MODIFIED"} <= types and by_uuid["truncated"] is False
    by_event = ok(bus, "provenance.lineage", event_id=summary["id"], scope=SCOPE, max_nodes=1)
    assert by_event["truncated"] is True
    reply = ask(bus, "provenance.lineage", event_id=summary["id"], scope=SCOPE, direction="parents")
    assert not reply.ok and "is a CONTENT_MODIFIED event, so its parents cannot be expanded" in reply.error
    reply = ask(bus, "provenance.lineage", uuid=summary["flowfile_uuid"], scope=SCOPE, direction="children")
    assert not reply.ok and "needs 'event_id'" in reply.error


def test_replay_queues_a_new_flowfile_and_refusals_give_the_reason(bus, node):
    summary = modified_event(bus)
    controller = node.node.controller
    controller.stop_processor("rewrite", wait=5)
    result = ok(bus, "provenance.replay", id=summary["id"], scope=SCOPE, requester="ann")
    assert result["replayed"] is True and result["event"]["type"] == "REPLAY"
    assert result["event"]["details"] == "Replay requested by ann"
    assert result["event"]["parent_uuids"] == [summary["flowfile_uuid"]]
    assert result["event"]["child_uuids"] == [result["flowfile_uuid"]]
    queued = controller.queue("c1").find(result["flowfile_uuid"])
    assert queued is not None and queued.attributes["flowfile.replay"] == "true"
    created = ok(bus, "provenance.query", query={"event_types": ["CREATE"]}, scope=SCOPE, limit=1)["events"][0]
    refused = ok(bus, "provenance.replay", id=created["id"], scope=SCOPE, requester="ann")
    assert refused == {"node": "n1", "replayed": False, "reason": refused["reason"]}
    assert "does not name the connection its FlowFile came from" in refused["reason"]
    outside = ask(bus, "provenance.replay", id=summary["id"], scope=["gen"], requester="ann")
    assert not outside.ok and "is not known on this node" in outside.error


def test_queue_listing_flowfile_content_and_drop(bus, node):
    controller = node.node.controller
    controller.stop_processor("gen", wait=5)
    wait_until(lambda: len(controller.queue("c2")) >= 1, 10, "a FlowFile in c2")
    listing = ok(bus, "queue.list", id="c2", max=10)
    queued = len(controller.queue("c2"))
    assert listing["count"] == queued and listing["bytes"] == 11 * queued and listing["swapped_count"] == 0
    assert listing["source_running"] is True and listing["destination_running"] is False
    first = listing["flowfiles"][0]
    assert first["position"] == 1 and first["size"] == 11 and first["penalized"] is False
    flowfile = ok(bus, "queue.flowfile", id="c2", uuid=first["uuid"])["flowfile"]
    assert flowfile["attributes"]["tag"] == "t1" and flowfile["content_available"]
    content = ok(bus, "queue.content", id="c2", uuid=first["uuid"], offset=6, length=100)
    assert (content["size"], content["offset"], base64.b64decode(content["data"])) == (11, 6, b"WORLD")
    reply = ask(bus, "queue.flowfile", id="c2", uuid="nope")
    assert not reply.ok and "FlowFile nope is not in connection c2 on this node" in reply.error
    reply = ask(bus, "queue.list", id="ghost")
    assert not reply.ok and "no connection has identifier 'ghost'" in reply.error
    dropped = ok(bus, "queue.empty", id="c2", requester="ann")
    assert dropped["dropped"] >= queued and dropped["dropped_bytes"] == 11 * dropped["dropped"]


def test_status_is_answered_while_slow_commands_run(bus, node):
    release = threading.Event()
    running = threading.Semaphore(0)

    def slow(command):
        running.release()
        release.wait(20)
        return {"slow": True}

    node.listener.register("test.slow", slow, concurrent=True)
    results = {}
    askers = [threading.Thread(target=lambda i=i: results.__setitem__(i, ask(bus, "test.slow")))
              for i in range(4)]
    for asker in askers:
        asker.start()
    try:
        for _ in askers:
            assert running.acquire(timeout=10), "the pool runs four slow commands at once"
        start = time.monotonic()
        status = ask(bus, "status")
        assert status.ok and time.monotonic() - start < 2
        assert not results, "the slow commands are still running"
    finally:
        release.set()
        for asker in askers:
            asker.join()
    assert all(reply.ok and reply.result == {"slow": True} for reply in results.values())


def test_a_node_with_too_many_slow_commands_says_it_is_busy(bus, node):
    release = threading.Event()
    node.listener.max_pending = 1
    node.listener.register("test.slow", lambda command: release.wait(20), concurrent=True)
    first = threading.Thread(target=lambda: ask(bus, "test.slow"))
    first.start()
    try:
        wait_until(lambda: node.listener._pending == 1, 10, "the first slow command taken")
        reply = ask(bus, "test.slow")
        assert not reply.ok and "node n1 is busy: 1 slow commands are waiting or running" in reply.error
    finally:
        release.set()
        first.join()
