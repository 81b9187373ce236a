"""The coordinator's rules for node states, on a real redis-server."""

from __future__ import annotations

import pytest

from engine.cluster.coordinator import Coordinator
from engine.cluster.lease import Lease
from engine.cluster.records import (
    ClusterView,
    Heartbeat,
    NodeRecord,
    NodeState,
    NodeStateError,
    remove_node,
    request_disconnect,
    request_reconnect,
)


@pytest.fixture
def coordinator(client, keys):
    lease = Lease(client, keys, "coordinator", "n1", ttl=30)
    assert lease.hold()
    review = Coordinator(client, keys, missed_heartbeats_window=40)

    def run(fingerprint="F"):
        return review.review(lease.value, fingerprint)
    return run


def beat(client, keys, node, **fields):
    client.set(keys.heartbeat(node), Heartbeat(node, **fields).encode(), px=60_000)


def state(client, keys, node):
    return NodeRecord.decode(client.hget(keys.nodes, node)).state


def test_a_node_connects_once_it_runs_the_clusters_flow(client, keys, coordinator):
    beat(client, keys, "n2", flow_fingerprint="OTHER")
    assert coordinator() == {"n2": NodeState.CONNECTING}
    assert coordinator() == {}, "still running another flow"
    beat(client, keys, "n2", flow_fingerprint="F")
    assert coordinator() == {"n2": NodeState.CONNECTED}
    client.delete(keys.heartbeat("n2"))
    assert coordinator() == {"n2": NodeState.DISCONNECTED}
    assert "no heartbeat" in NodeRecord.decode(client.hget(keys.nodes, "n2")).reason
    beat(client, keys, "n2", flow_fingerprint="F")
    assert coordinator() == {"n2": NodeState.CONNECTING}, "a node that heartbeats again comes back"


def test_an_operators_disconnection_lasts_until_reconnected(client, keys, coordinator):
    beat(client, keys, "n2", flow_fingerprint="F")
    coordinator(), coordinator()
    assert state(client, keys, "n2") is NodeState.CONNECTED
    request_disconnect(client, keys, "n2")
    assert coordinator() == {}, "DISCONNECTING until the node acknowledges"
    beat(client, keys, "n2", flow_fingerprint="F", disconnected=True)
    assert coordinator() == {"n2": NodeState.DISCONNECTED}
    assert coordinator() == {}, "heartbeats of a disconnected node do not reconnect it"
    with pytest.raises(NodeStateError, match="already disconnected"):
        request_disconnect(client, keys, "n2")
    assert request_reconnect(client, keys, "n2").state is NodeState.CONNECTING
    with pytest.raises(NodeStateError, match="disconnect it before removing"):
        remove_node(client, keys, "n2")
    with pytest.raises(NodeStateError, match="not disconnected"):
        request_reconnect(client, keys, "n2")
    beat(client, keys, "n2", flow_fingerprint="F")
    assert coordinator() == {"n2": NodeState.CONNECTED}


def test_a_node_that_refused_the_flow_is_kept_out(client, keys, coordinator):
    beat(client, keys, "n2", flow_fingerprint="OTHER")
    coordinator()
    beat(client, keys, "n2", flow_fingerprint="OTHER", refused="connection c holds 3 FlowFiles")
    assert coordinator() == {"n2": NodeState.DISCONNECTED}
    assert coordinator() == {}
    beat(client, keys, "n2", flow_fingerprint="F")
    assert coordinator() == {"n2": NodeState.CONNECTING}


def test_removing_a_node_and_unknown_nodes(client, keys, coordinator):
    beat(client, keys, "n2", flow_fingerprint="F")
    coordinator()
    with pytest.raises(NodeStateError, match="no node 'zz'"):
        request_disconnect(client, keys, "zz")
    client.delete(keys.heartbeat("n2"))
    coordinator()
    remove_node(client, keys, "n2")
    assert "n2" not in ClusterView(client, keys).nodes


def test_a_former_coordinator_writes_nothing(client, keys):
    old = Coordinator(client, keys, 40)
    beat(client, keys, "n2")
    assert old.review("n9 1", "F") == {}
    assert client.hget(keys.nodes, "n2") is None
