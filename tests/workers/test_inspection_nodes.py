"""The inspection commands on real node processes (``manage.py runnode``) over a private
redis-server: a search, an event and its content, a replay that survives SIGKILL, a queued
FlowFile, and ``status`` answered at once while slow searches run."""

from __future__ import annotations

import base64
import json
import threading
import time

import pytest

from engine.provenance import ProvenanceConfig, ProvenanceEvent, ProvenanceEventType as E, ProvenanceRepository
from tests.engine.runtime.inspected import text_flow
from tests.workers.cluster import wait_until

SCOPE = ["gen", "rewrite", "sink"]
#: Events written into the node's provenance before it starts: enough that a search that must
#: read each of them takes about a second.
BACKLOG = 200_000


@pytest.fixture
def cluster(cluster_factory):
    made = cluster_factory(election_max_candidates=1)
    settings = json.loads(made.config.read_text())
    settings["provenance_repository"] = {"rollover-time": "1 sec"}
    made.config.write_text(json.dumps(settings))
    return made


def ok(bus, kind, timeout=15, **args):
    reply = bus.request(["n1"], kind, args, timeout=timeout)["n1"]
    assert reply.ok, reply.error
    return reply.result


def answering(bus) -> None:
    """Wait until node n1 runs a flow and answers."""
    wait_until(lambda: bus.request(["n1"], "status", {}, timeout=2)["n1"].ok, 60, "node n1 answering")


def modified(bus) -> dict:
    def found():
        events = ok(bus, "provenance.query", query={"event_types": ["CONTENT_MODIFIED"]}, scope=SCOPE,
                    limit=1)["events"]
        return events[0] if events else None
    return wait_until(found, 30, "a CONTENT_MODIFIED event searchable")


def test_search_content_and_a_replay_that_survives_sigkill(cluster, bus):
    node = cluster.start("n1", text_flow())
    cluster.wait_connected("n1")
    answering(bus)
    event = modified(bus)
    assert ok(bus, "provenance.event", id=event["id"], scope=SCOPE)["event"]["source_queue_id"] == "c1"
    content = ok(bus, "provenance.content", id=event["id"], scope=SCOPE, direction="input")
    assert base64.b64decode(content["data"]) == b"hello"

    assert ok(bus, "processor.stop", id="rewrite")["id"] == "rewrite"
    replay = ok(bus, "provenance.replay", id=event["id"], scope=SCOPE, requester="ann")
    assert replay["replayed"] is True
    node.kill()

    node = cluster.start("n1")
    answering(bus)  # the record of the killed process says CONNECTED until the new one writes its own
    flowfile = wait_until(lambda: _queued(bus, "c1", replay["flowfile_uuid"]), 30, "the replayed FlowFile back")
    assert flowfile["attributes"]["flowfile.replay"] == "true" and flowfile["size"] == 5
    data = ok(bus, "queue.content", id="c1", uuid=replay["flowfile_uuid"])
    assert base64.b64decode(data["data"]) == b"hello"
    listing = ok(bus, "queue.list", id="c1", max=1000)
    assert replay["flowfile_uuid"] in {f["uuid"] for f in listing["flowfiles"]}
    assert listing["destination_running"] is False


def _queued(bus, connection, uuid):
    reply = bus.request(["n1"], "queue.flowfile", {"id": connection, "uuid": uuid}, timeout=3)["n1"]
    return reply.result["flowfile"] if reply.ok else None


def test_status_is_answered_while_slow_searches_run(cluster, bus):
    data_dir = cluster.root / "n1"
    now = int(time.time() * 1000)
    attributes = {f"attribute-{i}": "x" * 20 for i in range(10)}
    with ProvenanceRepository(data_dir / "provenance_repository", ProvenanceConfig()) as repository:
        for start in range(0, BACKLOG, 1000):
            repository.register_events([ProvenanceEvent(E.ROUTE, now - BACKLOG + n, f"uuid-{n}", "rewrite", "Old",
                                                         previous_attributes=attributes, details="routed")
                                        for n in range(start, start + 1000)])
    cluster.start("n1", text_flow(gen_state="ENABLED"))
    cluster.wait_connected("n1")
    answering(bus)

    answers: dict[int, tuple[float, object]] = {}

    def search(index: int) -> None:
        started = time.monotonic()
        reply = bus.request(["n1"], "provenance.query", {"query": {"details": "*never*"}, "scope": SCOPE, "limit": 1},
                            timeout=60)["n1"]
        answers[index] = (time.monotonic() - started, reply)

    searches = [threading.Thread(target=search, args=(i,)) for i in range(3)]
    for thread in searches:
        thread.start()
    time.sleep(0.2)
    started = time.monotonic()
    status = bus.request(["n1"], "status", {}, timeout=10)["n1"]
    status_took = time.monotonic() - started
    running = sum(thread.is_alive() for thread in searches)
    for thread in searches:
        thread.join()
    assert status.ok, status.error
    assert all(reply.ok and reply.result["events"] == [] for _, reply in answers.values())
    slowest = max(took for took, _ in answers.values())
    assert running == 3, f"the searches ({slowest:.2f} s) ended before status was asked"
    assert status_took < slowest / 2, (status_took, slowest)
