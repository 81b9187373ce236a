"""LoadBalancing follows the cluster's node records into its persisted topology, over a real Redis."""

from __future__ import annotations

import time

import pytest
import redis

from engine.balance.service import LoadBalancing
from engine.balance.trust import ClusterKeyTrust
from engine.cluster.keys import ClusterKeys
from engine.cluster.records import Heartbeat, NodeRecord, NodeState, remove_node
from engine.node import NodeConfig, StandaloneNode

KEYS = ClusterKeys("balance-test")


def register(client: redis.Redis, node: str, state: NodeState = NodeState.CONNECTED, beat: bool = True) -> None:
    client.hset(KEYS.nodes, node, NodeRecord(node, state, "test").encode())
    if beat:
        client.set(KEYS.heartbeat(node), Heartbeat(node, sent_at=time.time()).encode(), ex=60)


@pytest.fixture
def balancing(tmp_path, redis_server):
    """Makes node n1's LoadBalancing over ``tmp_path/n1`` (its node is stopped after the test)."""
    made = []

    def make(config: NodeConfig | None = None) -> LoadBalancing:
        trust = ClusterKeyTrust("a cluster key for the test", "n1")
        made.append(LoadBalancing(StandaloneNode(tmp_path / "n1", config), "n1",
                                  f"redis://127.0.0.1:{redis_server.port}/0", KEYS, trust, trust))
        return made[-1]
    yield make
    for lb in made:
        lb.node.stop()


def test_connected_peers_join_and_a_vanished_record_only_makes_a_peer_unreachable(balancing, redis_server):
    client = redis.Redis(port=redis_server.port)
    for node in ("n1", "n2", "n3"):
        register(client, node)
    lb = balancing()
    lb._watch()
    assert lb.store.current.nodes == ("n1", "n2", "n3")
    assert lb._reachable() == {"n2", "n3"}

    client.hdel(KEYS.nodes, "n3")  # as when Redis restarts empty: not a removal
    client.delete(KEYS.heartbeat("n3"))
    lb._watch()
    assert lb.store.current.nodes == ("n1", "n2", "n3")
    assert lb._reachable() == {"n2"}

    register(client, "n2", NodeState.DISCONNECTED)
    lb._watch()
    assert lb.store.current.nodes == ("n1", "n2", "n3") and lb._reachable() == set()
    remove_node(client, KEYS, "n2")  # an operator's removal is
    lb._watch()
    assert lb.store.current.nodes == ("n1", "n3")

    lb.node.stop()
    restarted = balancing()  # the list survives a restart
    assert restarted.store.current.nodes == ("n1", "n3")


def test_offloading_peers_leave_the_topology_and_a_removed_node_may_come_back(balancing, redis_server):
    client = redis.Redis(port=redis_server.port)
    for node in ("n1", "n2", "n3"):
        register(client, node)
    lb = balancing()
    lb._watch()
    register(client, "n3", NodeState.OFFLOADING)
    lb._watch()
    assert lb.store.current.nodes == ("n1", "n2")
    register(client, "n3", NodeState.DISCONNECTED)
    remove_node(client, KEYS, "n3")
    lb._watch()
    assert lb.store.current.nodes == ("n1", "n2")
    register(client, "n3")  # joins again later
    lb._watch()
    assert lb.store.current.nodes == ("n1", "n2", "n3")
    assert not client.hexists(KEYS.removed, "n3")


@pytest.mark.parametrize("policy, durable", [("grouped", True), ("always", True), ("os", False)])
def test_pins_are_synced_unless_the_node_syncs_nothing_itself(balancing, policy, durable):
    lb = balancing(NodeConfig.from_mapping({"flowfile_repository": {"sync_policy": policy}}))
    assert lb.pins.durable is durable
