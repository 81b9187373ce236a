"""Pins of FlowFiles in doubt: durable, settled by outcome, kept by the partitioned queue."""

from __future__ import annotations

import errno
import logging

import pytest

from engine.balance.partitioned_queue import PartitionedQueue
from engine.balance.pins import PinError, TransferPins
from engine.balance.topology import ClusterTopology
from engine.flowfile import FlowFile
from engine.queue.flowfile_queue import QueueSettings
from engine.testing.faults import FaultPlan


def flowfile(identifier: int) -> FlowFile:
    return FlowFile(identifier, f"u{identifier}", {}, None, 0, 0, 0)


def test_a_pin_survives_a_restart_and_a_delivery_settles_every_batch_of_its_flowfiles(tmp_path):
    pins = TransferPins(tmp_path)
    pins.pin("t1:a", "n2", [1, 2, 3])
    pins.pin("t2:b", "n2", [2, 3])  # sent again, in another batch
    assert TransferPins(tmp_path).node_of(2) == "n2"
    pins.settle("t2:b", delivered=False)  # a refusal of the resend: the first batch stays in doubt
    assert pins.node_of(2) == "n2"
    pins.pin("t3:c", "n2", [1, 2, 3])
    pins.settle("t3:c", delivered=True)
    assert pins.node_of(1) is None and len(pins) == 0
    assert not list(pins.directory.iterdir())
    assert len(TransferPins(tmp_path)) == 0


def test_settling_one_batch_frees_its_own_flowfiles_and_no_other_batchs(tmp_path):
    pins = TransferPins(tmp_path)
    pins.pin("t1:a", "n2", [1, 2])
    pins.pin("t2:b", "n3", [3])
    pins.settle("t2:b", delivered=True)
    assert pins.node_of(3) is None and pins.node_of(1) == pins.node_of(2) == "n2" and len(pins) == 2
    pins.settle("t1:a", delivered=False)  # refused: pinned by no other batch, so in doubt no more
    assert pins.node_of(1) is None and len(pins) == 0 and not list(pins.directory.iterdir())
    # Pins read back at a start settle the same way, one batch shared by a resend included.
    pins.pin("t3:c", "n2", [4, 5])
    pins.pin("t4:d", "n2", [5])
    reloaded = TransferPins(tmp_path)
    reloaded.settle("t4:d", delivered=False)
    assert reloaded.node_of(5) == "n2", "still pinned by the first batch"
    reloaded.pin("t5:e", "n2", [6])
    reloaded.settle("t5:e", delivered=True)
    assert reloaded.node_of(6) is None and reloaded.node_of(4) == reloaded.node_of(5) == "n2"
    reloaded.settle("t3:c", delivered=True)
    assert len(reloaded) == 0 and not list(reloaded.directory.iterdir())


def test_a_pin_that_cannot_be_written_pins_nothing(tmp_path):
    pins = TransferPins(tmp_path)
    with FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write"}).installed() as plan, \
            pytest.raises(PinError) as raised:
        pins.pin("t1:a", "n2", [1])
    assert plan.triggered
    assert "in-doubt" in str(raised.value) and "free space" in str(raised.value)
    assert pins.node_of(1) is None
    assert len(TransferPins(tmp_path)) == 0


@pytest.mark.parametrize("durable, syncs", [(True, 2), (False, 0)])
def test_pins_of_a_node_that_syncs_nothing_itself_are_written_without_syncs(tmp_path, durable, syncs):
    """Sync policy ``os``: a pin needs to survive a crash of the process only, as the node's commits do."""
    pins = TransferPins(tmp_path, durable=durable)
    with FaultPlan(operations={"sync"}).installed() as counted:
        pins.pin("t1:a", "n2", [1, 2])
    assert counted.count == syncs
    assert TransferPins(tmp_path).node_of(2) == "n2"
    with FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write"}).installed(), \
            pytest.raises(PinError) as raised:
        pins.pin("t2:b", "n2", [3])
    assert "t2-b.json" in str(raised.value) and "free space" in str(raised.value)
    assert pins.node_of(3) is None and TransferPins(tmp_path).node_of(3) is None


def test_a_damaged_pin_is_reported_and_skipped(tmp_path, caplog):
    pins = TransferPins(tmp_path)
    pins.pin("t1:a", "n2", [1])
    pins.pin("t2:b", "n3", [2])
    (pins.directory / "t1-a.json").write_bytes(b'{"node": "n2", "flowf')
    with caplog.at_level(logging.ERROR):
        reloaded = TransferPins(tmp_path)
    assert reloaded.node_of(1) is None and reloaded.node_of(2) == "n3"
    assert "t1-a.json" in caplog.text and "delivered twice" in caplog.text


def test_releasing_a_removed_node_frees_its_flowfiles(tmp_path):
    pins = TransferPins(tmp_path)
    pins.pin("t1:a", "n2", [1])
    pins.pin("t2:b", "n3", [2])
    assert pins.release_node("n2") == 1
    assert pins.node_of(1) is None and pins.node_of(2) == "n3"


def test_round_robin_fails_over_what_was_queued_but_keeps_what_is_in_doubt(tmp_path):
    pins = TransferPins(tmp_path)
    topology = ClusterTopology("n1", ("n1", "n2", "n3"), frozenset({"n2", "n3"}))
    queue = PartitionedQueue("c", QueueSettings(), topology, "ROUND_ROBIN", pins=pins)
    queue.put_all(flowfile(i) for i in range(1, 31))
    to_n2 = queue.remote_partitions()["n2"]
    in_flight = to_n2.poll(3).flowfiles
    pins.pin("t1:a", "n2", [f.id for f in in_flight])
    queue.transfer_failed("n2", in_flight)  # no acknowledgement came: in doubt
    queue.set_topology(topology.with_reachable("n2", False))
    assert sorted(f.id for f in to_n2.peek(100)) == sorted(f.id for f in in_flight)
    assert queue.size().total_count == 30
