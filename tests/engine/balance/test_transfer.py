"""Load-balanced transfer between two nodes' storage over a real Redis: delivery and provenance."""

from __future__ import annotations

import pytest

from engine.balance.receiver import COMPONENT_TYPE
from engine.balance.sender import SEND_DETAILS
from engine.balance.wire import Compression
from engine.provenance.event import ProvenanceEventType as E
from tests.engine.balance.conftest import CONNECTION, wait_for


def _events(storage):
    storage.provenance.rollover()
    return storage.provenance.get_events(range(0, 100_000))


def _delivered(cluster, sent):
    """Assert node B holds each FlowFile of ``sent`` once, as it was, and node A holds none."""
    wait_for(lambda: len(cluster.received()) >= len(sent), what=f"{len(sent)} FlowFiles arriving on node B")
    wait_for(lambda: cluster.partition.size().unacknowledged_count == 0 and len(cluster.a.flowfiles.wal.records) == 0,
             what="node A forgetting what it sent")
    received = cluster.received()
    assert len(received) == len(sent)
    by_source = {}
    for event in _events(cluster.b):
        if event.event_type is E.RECEIVE:
            by_source[event.source_system_flowfile_id] = event
    assert sorted(by_source) == sorted(f.uuid for f in sent)
    originals = {f.uuid: f for f in sent}
    for flowfile in received:
        event = next(e for e in by_source.values() if e.flowfile_uuid == flowfile.uuid)
        original = originals[event.source_system_flowfile_id]
        assert flowfile.uuid != original.uuid and flowfile.attributes["uuid"] == flowfile.uuid
        assert {k: v for k, v in flowfile.attributes.items() if k != "uuid"} == \
               {k: v for k, v in original.attributes.items() if k != "uuid"}
        assert (flowfile.entry_date, flowfile.lineage_start_date) == (original.entry_date, original.lineage_start_date)
        assert flowfile.size == original.size
        if original.size:
            assert cluster.b.content.read_bytes(flowfile.content_claim) == \
                   cluster.a.content.read_bytes(original.content_claim)
        assert event.transit_uri == f"flowsite://node-a/loadbalance/{CONNECTION}"
        assert event.component_type == COMPONENT_TYPE and event.component_id == CONNECTION
        assert cluster.b.flowfiles.was_received(f"node-a:{original.uuid}")
    return received


@pytest.mark.parametrize("compression", list(Compression))
def test_small_and_large_contents_arrive_once_with_provenance_on_both_ends(cluster, compression):
    cluster.compression = compression
    sent = cluster.make([1024] * 30 + [0, -1] + [(1 << 20) + 4097] * 2, kind="test")
    cluster.start_receiver()
    cluster.start_sender(chunk_size=256 << 10)
    _delivered(cluster, sent)

    events = _events(cluster.a)
    sends = {e.flowfile_uuid: e for e in events if e.event_type is E.SEND}
    drops = {e.flowfile_uuid for e in events if e.event_type is E.DROP}
    assert set(sends) == drops == {f.uuid for f in sent}
    assert all(e.details == SEND_DETAILS and e.transit_uri == f"flowsite://node-b/loadbalance/{CONNECTION}"
               for e in sends.values())
    assert cluster.receiver_bulletins == [] and cluster.sender_bulletins == []


def test_node_b_recovers_what_it_received(cluster, tmp_path):
    sent = cluster.make([1024] * 5 + [300_000])
    cluster.start_receiver()
    cluster.start_sender()
    _delivered(cluster, sent)
    cluster.receiver.stop()
    cluster.receiver = None
    cluster.b.close()
    cluster.b = cluster.open_storage("b")
    recovered = cluster.b.recovered.queues[CONNECTION]
    assert len(recovered) == len(sent)
    assert all(cluster.b.flowfiles.was_received(f"node-a:{f.uuid}") for f in sent)
    assert cluster.b.verify().ok
