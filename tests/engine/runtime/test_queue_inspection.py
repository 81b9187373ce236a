"""Queue listings and queued FlowFiles on a real node: priority order with penalties, swapped
FlowFiles counted not listed, one FlowFile with its attributes and content, and a large queue."""

from __future__ import annotations

import json
import time

import pytest

from engine.runtime import RuntimeConfig
from engine.runtime.queue_inspection import QueuedFlowFileError, queue_listing, queued_content, queued_flowfile
from engine.session import ProcessSession, SessionComponent
from engine.testing.flows import connection, flow, processor
from tests.engine.runtime.inspected import Node


def queue_flow(prioritizers=("PriorityAttributePrioritizer",)) -> dict:
    return flow(processors=[processor("src", "GenerateFlowFile", state="ENABLED"),
                            processor("dst", "LogAttribute", state="ENABLED", auto_terminate=["success"])],
                connections=[connection("q", "src", "dst", backPressureObjectThreshold=0,
                                        prioritizers=list(prioritizers))])


def fill(node: Node, items, *, penalty: float = 0.0) -> list:
    """Queue one FlowFile per ``(content, attributes)`` in ``items``, penalized for ``penalty`` s."""
    queue = node.controller.queue("q")
    session = ProcessSession(node.storage, SessionComponent("seed", "Seed", outgoing={"s": [queue]},
                                                            clock=node.clock.time, penalty_duration=penalty))
    made = []
    for content, attributes in items:
        flowfile = session.put_all_attributes(session.write_bytes(session.create(), content), attributes)
        if penalty:
            flowfile = session.penalize(flowfile)
        session.transfer(flowfile, "s")
        made.append(flowfile)
    session.commit()
    return made


@pytest.fixture
def node(tmp_path):
    running = Node(tmp_path / "node", queue_flow(), config=RuntimeConfig(swap_threshold=8, swap_batch_size=4))
    yield running
    running.close()


def test_a_listing_follows_the_prioritizers_with_penalized_flowfiles_last_by_their_penalty(node):
    fill(node, [(b"x" * n, {"priority": str(p), "filename": f"p{p}"}) for n, p in ((1, 3), (2, 1), (3, 2))])
    fill(node, [(b"late", {"priority": "0", "filename": "late"})], penalty=60)
    fill(node, [(b"soon", {"priority": "9", "filename": "soon"})], penalty=10)
    node.clock.advance(2)
    listing = queue_listing(node.controller, "q", 10)
    json.dumps(listing)
    assert [f["filename"] for f in listing["flowfiles"]] == ["p1", "p2", "p3", "soon", "late"]
    assert [f["position"] for f in listing["flowfiles"]] == [1, 2, 3, 4, 5]
    first, soon, late = listing["flowfiles"][0], listing["flowfiles"][3], listing["flowfiles"][4]
    assert first["size"] == 2 and not first["penalized"] and first["penalty_expires_in"] == 0
    assert first["queued_duration"] == 2000 and first["lineage_duration"] == 2000
    assert soon["penalized"] and soon["penalty_expires_in"] == 8000
    assert late["penalized"] and late["penalty_expires_in"] == 58000
    assert (listing["count"], listing["bytes"], listing["swapped_count"]) == (5, 14, 0)
    assert listing["source_running"] is False and listing["destination_running"] is False
    assert [f["filename"] for f in queue_listing(node.controller, "q", 2)["flowfiles"]] == ["p1", "p2"]
    node.controller.start_processor("src")
    assert queue_listing(node.controller, "q", 1)["source_running"] is True


def test_swapped_flowfiles_are_counted_not_listed_and_said_to_be_swapped_out(node):
    made = fill(node, [(b"%02d" % n, {"priority": str(n)}) for n in range(20)])
    listing = queue_listing(node.controller, "q", 100)
    assert listing["count"] == 20 and listing["bytes"] == 40
    assert listing["swapped_count"] == 20 - len(listing["flowfiles"]) >= 12
    listed = [f["uuid"] for f in listing["flowfiles"]]
    assert listed == [f.uuid for f in made[: len(listed)]], "the lowest-priority FlowFiles were swapped out"
    swapped = made[-1]
    with pytest.raises(QueuedFlowFileError, match=f"FlowFile {swapped.uuid} is swapped out of connection q "
                                                  r"\(swap file .*\.swap\)"):
        queued_flowfile(node.controller, "q", swapped.uuid)
    with pytest.raises(QueuedFlowFileError, match="FlowFile nope is not in connection q on this node"):
        queued_flowfile(node.controller, "q", "nope")


def test_one_queued_flowfile_with_its_attributes_claim_and_content(node):
    [flowfile] = fill(node, [(b"0123456789" * 300, {"priority": "1", "mime.type": "text/plain"})])
    data = queued_flowfile(node.controller, "q", flowfile.uuid)
    json.dumps(data)
    assert data["uuid"] == flowfile.uuid and data["size"] == 3000 and data["content_available"]
    assert data["attributes"]["mime.type"] == "text/plain" and data["attributes"]["uuid"] == flowfile.uuid
    assert data["claim"]["length"] == 3000 and data["claim"]["identifier"] == flowfile.content_claim.resource_claim.identifier
    assert queued_content(node.controller, "q", flowfile.uuid, 0, 1 << 20) == (3000, b"0123456789" * 300)
    assert queued_content(node.controller, "q", flowfile.uuid, 2995, 100) == (3000, b"56789")
    chunks = b"".join(queued_content(node.controller, "q", flowfile.uuid, offset, 1024)[1]
                      for offset in range(0, 3000, 1024))
    assert chunks == b"0123456789" * 300


def test_a_flowfile_without_content_has_none(node):
    queue = node.controller.queue("q")
    session = ProcessSession(node.storage, SessionComponent("seed", "Seed", outgoing={"s": [queue]},
                                                            clock=node.clock.time))
    flowfile = session.create()
    session.transfer(flowfile, "s")
    session.commit()
    data = queued_flowfile(node.controller, "q", flowfile.uuid)
    assert data["claim"] is None and data["content_available"] and data["size"] == 0
    assert queued_content(node.controller, "q", flowfile.uuid, 0, 10) == (0, b"")


def test_listing_a_large_mostly_swapped_queue_is_quick(tmp_path):
    node = Node(tmp_path / "big", queue_flow(prioritizers=()), config=RuntimeConfig(swap_threshold=2000,
                                                                                   swap_batch_size=1000))
    try:
        queue = node.controller.queue("q")
        for start in range(0, 50_000, 5_000):
            session = ProcessSession(node.storage, SessionComponent("seed", "Seed", outgoing={"s": [queue]},
                                                                    clock=node.clock.time))
            for _ in range(5_000):
                session.transfer(session.create(), "s")
            session.commit()
        assert queue.size().swapped_count >= 48_000
        begin = time.perf_counter()
        listing = queue_listing(node.controller, "q", 100)
        elapsed = time.perf_counter() - begin
        assert len(listing["flowfiles"]) == 100 and listing["count"] == 50_000
        assert elapsed < 0.1, f"listing took {elapsed * 1000:.0f} ms"
    finally:
        node.close()
