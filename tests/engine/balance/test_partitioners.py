"""The partitioners: rendezvous hashing, and each strategy's choice."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.balance.partitioners import (
    OFFLOAD, PARTITION_BY_ATTRIBUTE, ROUND_ROBIN, SINGLE_NODE, AttributePartitioner, FirstNodePartitioner,
    OffloadPartitioner, RoundRobinPartitioner, make_partitioner, rendezvous_node,
)
from engine.balance.topology import ClusterTopology
from engine.flowfile import FlowFile


def flowfile(**attributes) -> FlowFile:
    return FlowFile(1, "u", attributes, None, 0, 0, 0)


THREE = ClusterTopology("b", ("c", "a", "b"), frozenset({"a", "c"}))


def test_rendezvous_is_deterministic_and_spreads_evenly():
    nodes = ("a", "b", "c")
    assert rendezvous_node("alice", nodes) == rendezvous_node("alice", ("a", "b", "c"))
    counts = Counter(rendezvous_node.__wrapped__(f"v{n}", nodes) for n in range(30_000))
    assert all(9_400 <= count <= 10_600 for count in counts.values()), counts


def test_removing_any_node_moves_only_its_keys():
    four = ("a", "b", "c", "d")
    before = {n: rendezvous_node(f"key-{n}", four) for n in range(10_000)}
    for gone in four:
        rest = tuple(node for node in four if node != gone)
        moved = {n for n in before if rendezvous_node(f"key-{n}", rest) != before[n]}
        assert moved == {n for n, node in before.items() if node == gone}


def test_a_node_sorting_between_others_moves_only_the_keys_it_takes():
    before = {n: rendezvous_node(f"key-{n}", ("node-1", "node-3", "node-5")) for n in range(10_000)}
    after = {n: rendezvous_node(f"key-{n}", ("node-1", "node-2", "node-3", "node-5")) for n in range(10_000)}
    moved = [n for n in before if before[n] != after[n]]
    assert {after[n] for n in moved} == {"node-2"}
    assert 2_250 <= len(moved) <= 2_750


def test_equal_values_go_to_the_same_node_and_a_missing_attribute_is_a_value():
    partitioner = AttributePartitioner("customer")
    for value in ("alice", "bob", "", "ünïcödé"):
        nodes = {partitioner.partition(flowfile(customer=value, other=str(n)), THREE) for n in range(20)}
        assert len(nodes) == 1
    missing = {partitioner.partition(flowfile(other=str(n)), THREE) for n in range(20)}
    assert missing == {rendezvous_node(None, THREE.nodes)}
    assert len(missing) == 1


def test_a_fourth_node_moves_about_a_quarter_of_the_keys_and_only_to_itself():
    partitioner = AttributePartitioner("key")
    four = ClusterTopology("a", ("a", "b", "c", "d"))
    before = {key: partitioner.partition(flowfile(key=f"key-{key}"), THREE) for key in range(10_000)}
    after = {key: partitioner.partition(flowfile(key=f"key-{key}"), four) for key in range(10_000)}
    moved = [key for key in before if before[key] != after[key]]
    assert {after[key] for key in moved} == {"d"}
    assert 2_250 <= len(moved) <= 2_750  # 1/4 expected
    assert 3_000 <= Counter(before.values())["a"] <= 3_700


def test_round_robin_spreads_evenly_and_skips_unreachable_nodes():
    partitioner = RoundRobinPartitioner()
    counts = Counter(partitioner.partition(None, THREE) for _ in range(3_000))
    assert counts == {"a": 1_000, "b": 1_000, "c": 1_000}
    away = ClusterTopology("b", ("a", "b", "c"), frozenset({"a"}))
    counts = Counter(partitioner.partition(flowfile(), away) for _ in range(1_000))
    assert counts == {"a": 500, "b": 500}
    assert RoundRobinPartitioner().partition(None, ClusterTopology("b", ("a", "b"))) == "b"  # alone
    assert partitioner.rebalance_on_failure and not partitioner.rebalance_on_resize


def test_single_node_is_the_first_sorted_node_reachable_or_not():
    partitioner = FirstNodePartitioner()
    assert {partitioner.partition(flowfile(x=str(n)), THREE) for n in range(50)} == {"a"}
    assert FirstNodePartitioner().partition(None, ClusterTopology("c", ("c", "b", "a"))) == "a"  # any node agrees
    assert partitioner.partition(None, ClusterTopology("b", ("a", "b"), frozenset())) == "a"  # waits for a
    assert partitioner.rebalance_on_resize and not partitioner.rebalance_on_failure


def test_offload_sends_only_to_the_other_reachable_nodes():
    partitioner = OffloadPartitioner()
    assert Counter(partitioner.partition(None, THREE) for _ in range(100)) == {"a": 50, "c": 50}
    one_away = ClusterTopology("b", ("a", "b", "c"), frozenset({"c"}))
    assert {partitioner.partition(None, one_away) for _ in range(10)} == {"c"}
    none_reachable = ClusterTopology("b", ("a", "b", "c"))
    assert {partitioner.partition(None, none_reachable) for _ in range(10)} == {"a", "c"}  # they wait
    assert partitioner.partition(None, ClusterTopology.alone("b")) == "b"


def test_make_partitioner_knows_every_strategy():
    assert make_partitioner(ROUND_ROBIN).strategy == ROUND_ROBIN
    assert make_partitioner(SINGLE_NODE).strategy == SINGLE_NODE
    assert make_partitioner(PARTITION_BY_ATTRIBUTE, "k").attribute == "k"
    assert make_partitioner(OFFLOAD).strategy == OFFLOAD
    assert make_partitioner("DO_NOT_LOAD_BALANCE").partition(None, THREE) == "b"
    with pytest.raises(ValueError, match="unknown load balance strategy 'NOPE'"):
        make_partitioner("NOPE")
