"""Queue semantics without swapping: order, back pressure, penalties, expiration, counts."""

from __future__ import annotations

import random

import pytest

from engine.queue import FlowFileAvailability, FlowFileQueue, QueueSettings, UnknownPrioritizerError
from tests.engine.queue.conftest import make


def drain(queue: FlowFileQueue) -> list:
    out = []
    while True:
        polled = queue.poll(7)
        if not polled.flowfiles:
            return out
        out.extend(polled.flowfiles)
        queue.acknowledge(polled.flowfiles)


def test_default_order_is_first_in_first_out(clock):
    queue = FlowFileQueue("q", clock=clock)
    flowfiles = [make(clock) for _ in range(50)]
    shuffled = flowfiles[:]
    random.Random(1).shuffle(shuffled)
    queue.put_all(shuffled)
    assert drain(queue) == flowfiles


def test_oldest_and_newest_first_order_by_lineage_start(clock):
    flowfiles = [make(clock, lineage=1000 + (i * 7919) % 100) for i in range(100)]
    oldest = FlowFileQueue("q", QueueSettings(prioritizers=("OldestFlowFileFirstPrioritizer",)), clock=clock)
    oldest.put_all(flowfiles)
    assert [f.lineage_start_date for f in drain(oldest)] == sorted(f.lineage_start_date for f in flowfiles)
    newest = FlowFileQueue(
        "q", QueueSettings(prioritizers=("org.apache.nifi.prioritizer.NewestFlowFileFirstPrioritizer",)), clock=clock)
    newest.put_all(flowfiles)
    assert [f.lineage_start_date for f in drain(newest)] == sorted((f.lineage_start_date for f in flowfiles),
                                                                   reverse=True)


def test_priority_attribute_numbers_first_then_text_then_missing(clock):
    queue = FlowFileQueue("q", QueueSettings(prioritizers=("PriorityAttributePrioritizer",)), clock=clock)
    values = ["10", "2", "b", None, "-1", "a", "2", " 3 "]
    flowfiles = [make(clock) if v is None else make(clock, priority=v) for v in values]
    queue.put_all(reversed(flowfiles))
    order = [f.attributes.get("priority") for f in drain(queue)]
    assert order == ["-1", "2", "2", " 3 ", "10", "a", "b", None]


def test_combined_prioritizers_apply_in_order(clock):
    settings = QueueSettings(prioritizers=("PriorityAttributePrioritizer", "NewestFlowFileFirstPrioritizer"))
    queue = FlowFileQueue("q", settings, clock=clock)
    a = make(clock, lineage=1, priority=1)
    b = make(clock, lineage=2, priority=1)
    c = make(clock, lineage=3, priority=0)
    queue.put_all([a, b, c])
    assert drain(queue) == [c, b, a]


def test_unknown_prioritizer_is_named():
    with pytest.raises(UnknownPrioritizerError, match="com.example.Mine"):
        QueueSettings(prioritizers=("com.example.Mine",))


def test_back_pressure_by_count_includes_unacknowledged(clock):
    queue = FlowFileQueue("q", QueueSettings(back_pressure_object_threshold=3), clock=clock)
    queue.put_all([make(clock), make(clock)])
    assert not queue.is_full()
    queue.put(make(clock))
    assert queue.is_full()
    polled = queue.poll(2).flowfiles
    assert queue.is_full(), "FlowFiles held by a session still count"
    queue.acknowledge(polled)
    assert not queue.is_full()


def test_back_pressure_by_size_and_disabled_thresholds(clock):
    queue = FlowFileQueue("q", QueueSettings(back_pressure_object_threshold=0,
                                             back_pressure_data_size_threshold=100), clock=clock)
    queue.put_all([make(clock, size=60) for _ in range(100)][:1])
    assert not queue.is_full()
    queue.put(make(clock, size=40))
    assert queue.is_full()
    never = FlowFileQueue("q", QueueSettings(back_pressure_object_threshold=0, back_pressure_data_size_threshold=0),
                          clock=clock)
    never.put_all(make(clock, size=10**9) for _ in range(20_000))
    assert not never.is_full()


def test_penalized_flowfiles_are_skipped_until_their_penalty_ends(clock):
    queue = FlowFileQueue("q", clock=clock)
    now_ms = int(clock() * 1000)
    penalized = make(clock, penalty=now_ms + 5_000)
    queue.put(penalized)
    assert queue.availability() is FlowFileAvailability.HEAD_OF_QUEUE_PENALIZED
    assert queue.poll(5).flowfiles == []
    ready = make(clock)
    queue.put(ready)
    assert queue.availability() is FlowFileAvailability.FLOWFILE_AVAILABLE
    assert queue.poll(5).flowfiles == [ready]
    clock.advance(5)
    assert queue.availability() is FlowFileAvailability.FLOWFILE_AVAILABLE
    assert queue.poll(5).flowfiles == [penalized]
    assert queue.availability() is FlowFileAvailability.ACTIVE_QUEUE_EMPTY


def test_expired_flowfiles_come_back_apart_from_the_poll(clock):
    queue = FlowFileQueue("q", QueueSettings(expiration=60), clock=clock)
    old = make(clock, entry=int(clock() * 1000) - 61_000)
    young = make(clock)
    queue.put_all([old, young])
    polled = queue.poll(5)
    assert polled.flowfiles == [young]
    assert polled.expired == [old]
    assert queue.size().unacknowledged_count == 2


def test_remove_expired_sweeps_memory(clock):
    queue = FlowFileQueue("q", QueueSettings(expiration=10), clock=clock)
    flowfiles = [make(clock) for _ in range(5)]
    queue.put_all(flowfiles)
    assert queue.remove_expired() == []
    clock.advance(11)
    late = make(clock)
    queue.put(late)
    assert sorted(f.id for f in queue.remove_expired()) == [f.id for f in flowfiles]
    assert len(queue) == 1
    assert queue.size().unacknowledged_count == 5


def test_size_figures_and_peek(clock):
    queue = FlowFileQueue("q", clock=clock)
    flowfiles = [make(clock, size=10) for _ in range(4)]
    queue.put_all(flowfiles)
    assert queue.peek(2) == flowfiles[:2]
    taken = queue.poll(1).flowfiles
    size = queue.size()
    assert (size.count, size.bytes, size.unacknowledged_count, size.unacknowledged_bytes) == (3, 30, 1, 10)
    assert (size.total_count, size.total_bytes) == (4, 40)
    queue.acknowledge(taken)
    assert queue.size().total_count == 3


def test_take_all_empties_the_queue(clock):
    queue = FlowFileQueue("q", clock=clock)
    flowfiles = [make(clock) for _ in range(3)] + [make(clock, penalty=int(clock() * 1000) + 10_000)]
    queue.put_all(flowfiles)
    taken, swapped = queue.take_all()
    assert taken == flowfiles and swapped == []
    assert len(queue) == 0 and queue.size().unacknowledged_count == 4


def test_changing_prioritizers_reorders_what_is_queued(clock):
    queue = FlowFileQueue("q", clock=clock)
    flowfiles = [make(clock, priority=p) for p in (3, 1, 2)]
    queue.put_all(flowfiles)
    queue.update_settings(QueueSettings(prioritizers=("PriorityAttributePrioritizer",)))
    assert [f.attributes["priority"] for f in drain(queue)] == ["1", "2", "3"]
