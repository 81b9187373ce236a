"""The coordinator's rules for node states, on a real redis-server."""

from __future__ import annotations

import threading

import pytest

from engine.cluster.bus import CommandBus, CommandListener
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
    request_offload,
    request_reconnect,
)
from engine.cluster.signing import CommandSigner


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


def _disconnected(client, keys, coordinator, node="n2"):
    beat(client, keys, node, flow_fingerprint="F")
    coordinator(), coordinator()
    request_disconnect(client, keys, node, "disconnected by alice")
    beat(client, keys, node, flow_fingerprint="F", disconnected=True)
    coordinator()
    assert state(client, keys, node) is NodeState.DISCONNECTED


def test_offloading_needs_a_disconnected_node_and_sends_it_a_signed_offload_command(client, keys, coordinator):
    signer = CommandSigner("cluster key")
    received, arrived = [], threading.Event()
    listener = CommandListener(client, keys, "n2", signer, block_ms=100)
    listener.register("offload", lambda command: (received.append(command), arrived.set()) and None)
    listener.start()
    try:
        bus = CommandBus(client, keys, signer)
        beat(client, keys, "n2", flow_fingerprint="F")
        coordinator(), coordinator()
        with pytest.raises(NodeStateError, match="'n2' is connected; disconnect it before offloading it"):
            request_offload(client, keys, "n2", bus)
        request_disconnect(client, keys, "n2")
        with pytest.raises(NodeStateError, match="is disconnecting; disconnect it before offloading it"):
            request_offload(client, keys, "n2", bus)
        beat(client, keys, "n2", flow_fingerprint="F", disconnected=True)
        coordinator()
        record = request_offload(client, keys, "n2", bus, "offloaded by alice")
        assert (record.state, record.reason, record.by_operator) == (NodeState.OFFLOADING, "offloaded by alice", True)
        assert state(client, keys, "n2") is NodeState.OFFLOADING
        assert arrived.wait(5), "the node was sent the offload command"
        assert received[0].kind == "offload" and received[0].args == {"reason": "offloaded by alice"}
        with pytest.raises(NodeStateError, match="already offloading"):
            request_offload(client, keys, "n2", bus)
    finally:
        listener.stop()


def test_a_forged_offload_command_is_refused_by_the_node(client, keys):
    refused, done = [], threading.Event()
    listener = CommandListener(client, keys, "n2", CommandSigner("cluster key"), block_ms=100,
                               on_refused=lambda reason: (refused.append(reason), done.set()))
    listener.register("offload", lambda command: pytest.fail("a forged offload ran"))
    listener.start()
    try:
        client.hset(keys.nodes, "n2", NodeRecord("n2", NodeState.DISCONNECTED).encode())
        request_offload(client, keys, "n2", CommandBus(client, keys, CommandSigner("another key")))
        assert done.wait(5) and "forged or altered" in refused[0]
    finally:
        listener.stop()


def test_the_coordinator_leaves_offloading_and_offloaded_nodes_alone(client, keys, coordinator):
    _disconnected(client, keys, coordinator)
    request_offload(client, keys, "n2", CommandBus(client, keys, CommandSigner("k")))
    assert coordinator() == {}, "heartbeats do not move an offloading node"
    client.delete(keys.heartbeat("n2"))
    assert coordinator() == {} and state(client, keys, "n2") is NodeState.OFFLOADING, "nor does their absence"
    client.hset(keys.nodes, "n2", NodeRecord("n2", NodeState.OFFLOADED, "offloaded", by_operator=True).encode())
    beat(client, keys, "n2", flow_fingerprint="F", disconnected=True)
    assert coordinator() == {} and state(client, keys, "n2") is NodeState.OFFLOADED
    client.delete(keys.heartbeat("n2"))
    assert coordinator() == {} and state(client, keys, "n2") is NodeState.OFFLOADED
    assert "n2" in ClusterView(client, keys).nodes


def test_an_offloaded_node_may_be_removed_or_reconnected_an_offloading_one_only_reconnected(client, keys, coordinator):
    bus = CommandBus(client, keys, CommandSigner("k"))
    _disconnected(client, keys, coordinator)
    request_offload(client, keys, "n2", bus)
    with pytest.raises(NodeStateError, match="is offloading; wait until it is offloaded"):
        remove_node(client, keys, "n2")
    with pytest.raises(NodeStateError, match="out of the cluster already"):
        request_disconnect(client, keys, "n2")
    client.hset(keys.nodes, "n2", NodeRecord("n2", NodeState.OFFLOADED, "offloaded", by_operator=True).encode())
    with pytest.raises(NodeStateError, match="already offloaded"):
        request_offload(client, keys, "n2", bus)
    assert request_reconnect(client, keys, "n2").state is NodeState.CONNECTING
    assert coordinator() == {"n2": NodeState.CONNECTED}, "a reconnected node joins again"
    _disconnected(client, keys, coordinator)
    request_offload(client, keys, "n2", bus)
    assert request_reconnect(client, keys, "n2").state is NodeState.CONNECTING, "a stuck offload is left so"
    _disconnected(client, keys, coordinator)
    request_offload(client, keys, "n2", bus)
    client.hset(keys.nodes, "n2", NodeRecord("n2", NodeState.OFFLOADED, "offloaded", by_operator=True).encode())
    client.delete(keys.heartbeat("n2"))
    remove_node(client, keys, "n2")
    assert "n2" not in ClusterView(client, keys).nodes
