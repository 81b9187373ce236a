"""PartitionedQueue in memory: partitioning, figures, back pressure, topology changes, offload."""

from __future__ import annotations

import threading
from collections import Counter

from engine.balance.partitioned_queue import PartitionedQueue
from engine.balance.partitioners import PARTITION_BY_ATTRIBUTE, ROUND_ROBIN, SINGLE_NODE
from engine.balance.topology import ClusterTopology
from engine.queue import FlowFileAvailability, QueueSettings
from tests.engine.queue.conftest import make

THREE = ClusterTopology("b", ("a", "b", "c"), frozenset({"a", "c"}))
SETTINGS = QueueSettings(back_pressure_object_threshold=100, back_pressure_data_size_threshold=0)


def counts(queue: PartitionedQueue) -> dict[str, int]:
    result = {node: len(partition) for node, partition in queue.remote_partitions().items()}
    result[queue.topology.local_node] = len(queue.local_partition())
    return result


def test_round_robin_puts_spread_and_processors_see_only_the_local_partition():
    queue = PartitionedQueue("c1", SETTINGS, THREE, ROUND_ROBIN)
    queue.put_all([make(size=10) for _ in range(30)])
    assert counts(queue) == {"a": 10, "b": 10, "c": 10}
    size = queue.size()
    assert size.count == 30 and size.bytes == 300 and len(queue) == 30
    assert queue.awaiting_transfer() == (20, 200)
    polled = queue.poll(100)
    assert len(polled.flowfiles) == 10 and queue.availability() is FlowFileAvailability.ACTIVE_QUEUE_EMPTY
    assert queue.size().count == 20 and queue.size().unacknowledged_count == 10
    queue.acknowledge(polled.flowfiles)
    assert queue.size().total_count == 20 and queue.peek(5) == []


def test_back_pressure_counts_every_partition_and_what_is_in_flight():
    queue = PartitionedQueue("c1", SETTINGS, THREE, SINGLE_NODE)  # everything waits for node a
    queue.put_all([make() for _ in range(99)])
    assert not queue.is_full() and len(queue.local_partition()) == 0
    queue.put(make())
    assert queue.is_full()
    partition = queue.remote_partitions()["a"]
    taken = partition.poll(50).flowfiles  # the transfer code took 50: still counted
    assert queue.is_full() and queue.awaiting_transfer()[0] == 100
    queue.transfer_succeeded("a", taken)
    assert not queue.is_full() and queue.awaiting_transfer()[0] == 50


def test_a_failed_transfer_goes_back_to_its_node_or_to_the_others():
    waiting = PartitionedQueue("c1", SETTINGS, THREE, SINGLE_NODE)
    waiting.put_all([make() for _ in range(10)])
    taken = waiting.remote_partitions()["a"].poll(10).flowfiles
    waiting.transfer_failed("a", taken)
    assert counts(waiting) == {"a": 10, "b": 0, "c": 0} and waiting.size().unacknowledged_count == 0
    spreading = PartitionedQueue("c1", SETTINGS, THREE, ROUND_ROBIN)
    spreading.put_all([make() for _ in range(30)])
    taken = spreading.remote_partitions()["a"].poll(10).flowfiles
    spreading.transfer_failed("a", taken)
    assert sum(counts(spreading).values()) == 30 and spreading.size().unacknowledged_count == 0
    assert counts(spreading)["a"] < 10


def test_an_unreachable_node_hands_its_data_over_for_round_robin_only():
    spreading = PartitionedQueue("c1", SETTINGS, THREE, ROUND_ROBIN)
    spreading.put_all([make() for _ in range(30)])
    spreading.node_unreachable("a")
    assert counts(spreading) == {"a": 0, "b": 15, "c": 15}
    spreading.put_all([make() for _ in range(10)])
    assert counts(spreading)["a"] == 0  # nothing new for it either
    spreading.node_reachable("a")
    spreading.put_all([make() for _ in range(30)])
    assert counts(spreading)["a"] == 10
    by_attribute = PartitionedQueue("c1", SETTINGS, THREE, PARTITION_BY_ATTRIBUTE, "k")
    by_attribute.put_all([make(k=str(n)) for n in range(60)])
    before = counts(by_attribute)
    by_attribute.node_unreachable("a")
    assert counts(by_attribute) == before and before["a"] > 0  # waits for a


def test_a_removed_node_s_data_is_partitioned_again_even_for_round_robin():
    queue = PartitionedQueue("c1", SETTINGS, THREE, ROUND_ROBIN)
    queue.put_all([make() for _ in range(30)])
    in_flight = queue.remote_partitions()["c"].poll(4).flowfiles
    queue.set_topology(ClusterTopology("b", ("a", "b"), frozenset({"a"})))
    assert set(queue.remote_partitions()) == {"a"}
    assert counts(queue) == {"a": 13, "b": 13} and queue.size().count == 26
    assert queue.awaiting_transfer() == (17, 0)  # a's 13 and the 4 still in flight to c
    queue.transfer_failed("c", in_flight)  # c is gone: they are partitioned again
    assert queue.size().count == 30 and queue.size().unacknowledged_count == 0
    assert queue.awaiting_transfer()[0] == sum(counts(queue).values()) - counts(queue)["b"]


def test_partition_by_attribute_rebalances_on_resize_and_keeps_keys_together():
    queue = PartitionedQueue("c1", SETTINGS, THREE, PARTITION_BY_ATTRIBUTE, "k")
    flowfiles = [make(k=str(n % 40)) for n in range(400)]
    queue.put_all(flowfiles)
    four = ClusterTopology("b", ("a", "b", "c", "d"), frozenset({"a", "c", "d"}))
    queue.set_topology(four)
    where = {}
    partitions = {**queue.remote_partitions(), "b": queue.local_partition()}
    for node, partition in partitions.items():
        for flowfile in partition.peek(1_000):
            where.setdefault(flowfile.attributes["k"], set()).add(node)
    assert len(where) == 40 and all(len(nodes) == 1 for nodes in where.values())
    assert counts(queue)["d"] > 0 and queue.size().count == 400


def test_single_node_follows_the_first_node_when_the_list_changes():
    queue = PartitionedQueue("c1", SETTINGS, ClusterTopology("b", ("b", "c")), SINGLE_NODE)
    queue.put_all([make() for _ in range(5)])
    assert counts(queue) == {"b": 5, "c": 0}
    queue.set_topology(THREE)
    assert counts(queue) == {"a": 5, "b": 0, "c": 0}


def test_received_data_stays_local_unless_the_strategy_rebalances_on_resize():
    spreading = PartitionedQueue("c1", SETTINGS, THREE, ROUND_ROBIN)
    spreading.receive_from_peer([make() for _ in range(9)])
    assert counts(spreading) == {"a": 0, "b": 9, "c": 0}
    by_attribute = PartitionedQueue("c1", SETTINGS, THREE, PARTITION_BY_ATTRIBUTE, "k")
    flowfiles = [make(k=str(n)) for n in range(30)]
    by_attribute.receive_from_peer(flowfiles)
    owner = PartitionedQueue("x", SETTINGS, THREE, PARTITION_BY_ATTRIBUTE, "k")
    owner.put_all(flowfiles)
    assert counts(by_attribute) == counts(owner) and counts(by_attribute)["b"] < 30  # forwarded what it does not own


def test_offload_sends_everything_to_the_other_nodes():
    queue = PartitionedQueue("c1", SETTINGS, THREE, SINGLE_NODE)
    queue.local_partition().put_all([make() for _ in range(20)])
    held = queue.poll(2).flowfiles
    queue.start_offload()
    assert counts(queue)["b"] == 0 and queue.size().count == 18
    assert Counter(counts(queue)) == Counter({"a": 9, "c": 9, "b": 0})
    queue.put_all(held)  # a processor rolled back: its FlowFiles leave too
    queue.acknowledge(held)
    assert counts(queue)["b"] == 0 and queue.size().total_count == 20
    queue.set_strategy(ROUND_ROBIN)
    assert queue.offloading and queue.strategy == ROUND_ROBIN
    queue.end_offload()  # reconnected: the connection's own strategy again
    assert not queue.offloading
    queue.local_partition().put_all([make() for _ in range(3)])
    queue.put_all([make() for _ in range(30)])
    assert counts(queue)["b"] > 3, "round robin keeps this node's share again"


def test_take_all_empties_every_partition_and_settles_each():
    queue = PartitionedQueue("c1", SETTINGS, THREE, ROUND_ROBIN)
    queue.put_all([make(size=1) for _ in range(30)])
    flowfiles, swapped = queue.take_all()
    assert len(flowfiles) == 30 and swapped == [] and queue.size().unacknowledged_count == 30
    assert queue.awaiting_transfer() == (20, 20)
    queue.acknowledge(flowfiles)
    assert queue.size() == (0,) * 9 and queue.awaiting_transfer() == (0, 0)
    assert all(p.size() == (0,) * 9 for p in [queue.local_partition(), *queue.remote_partitions().values()])


def test_a_strategy_change_partitions_everything_again_and_settings_reach_every_partition():
    queue = PartitionedQueue("c1", SETTINGS, THREE, SINGLE_NODE)
    queue.put_all([make() for _ in range(30)])
    queue.set_strategy(ROUND_ROBIN)
    assert counts(queue) == {"a": 10, "b": 10, "c": 10}
    queue.update_settings(QueueSettings(prioritizers=("PriorityAttributePrioritizer",)))
    assert queue.remote_partitions()["a"].settings.prioritizers == ("PriorityAttributePrioritizer",)
    assert queue.remote_partitions()["a"].settings.swap_threshold == 1_000
    assert queue.remote_partitions()["a"].settings.back_pressure_object_threshold == 0


def test_puts_while_the_topology_changes_lose_and_duplicate_nothing():
    queue = PartitionedQueue("c1", QueueSettings(back_pressure_object_threshold=0), THREE, ROUND_ROBIN)
    flowfiles = [make() for _ in range(20_000)]

    def put(start: int) -> None:
        for index in range(start, len(flowfiles), 4 * 50):
            queue.put_all(flowfiles[index:index + 50])

    threads = [threading.Thread(target=put, args=(start * 50,)) for start in range(4)]
    for thread in threads:
        thread.start()
    topologies = [THREE.with_reachable("a", False), ClusterTopology("b", ("b", "c", "d"), frozenset({"c", "d"})), THREE]
    for n in range(60):
        queue.set_topology(topologies[n % 3])
    for thread in threads:
        thread.join()
    held = [f.id for p in [queue.local_partition(), *queue.remote_partitions().values()] for f in p.peek(30_000)]
    assert sorted(held) == sorted(f.id for f in flowfiles) and queue.size().count == 20_000


def test_a_partition_whose_every_flowfile_is_in_flight_is_still_settled_and_kept():
    queue = PartitionedQueue("c1", SETTINGS, THREE, SINGLE_NODE)
    queue.put_all([make() for _ in range(5)])
    taken = queue.remote_partitions()["a"].poll(5).flowfiles
    queue.set_topology(ClusterTopology("b", ("b", "c")))  # a leaves with 5 in flight
    queue.set_topology(THREE)  # and comes back: the same partition object, its 5 still in flight
    assert queue.awaiting_transfer() == (5, 0)
    queue.transfer_succeeded("a", taken)
    assert queue.size() == (0,) * 9 and queue.awaiting_transfer() == (0, 0)
