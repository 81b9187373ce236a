"""What Redis holds about the cluster's nodes, and how to read and change it.

- ``heartbeat:<node>`` (JSON, expiring): a ``Heartbeat``, written by the node itself;
- ``nodes`` (hash of JSON): a ``NodeRecord`` per node — its connection state and why, written by
  the coordinator and, for an operator's request, by the control plane;
- ``lock:<role>``: ``<node> <token>`` of the role's holder.

``ClusterView`` reads all of it at once (the control plane's list of nodes); ``request_disconnect``,
``request_offload``, ``request_reconnect`` and ``remove_node`` are the operator's actions.

Offloading (as NiFi's) empties a disconnected node before it is removed: the operator's request
makes it OFFLOADING and sends it the ``offload`` command; the node stops its processors, sends
every queued FlowFile to the connected nodes and sets its own record to OFFLOADED. Nothing but
an operator (reconnect, remove) or the node itself changes an offloading or offloaded node.
"""

from __future__ import annotations

import enum
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import redis

from engine.cluster.bus import CommandBus
from engine.cluster.keys import ROLES, ClusterKeys

__all__ = ["OFFLOAD_COMMAND", "OPERATOR_OUT", "ClusterView", "Heartbeat", "NodeRecord", "NodeState", "NodeStateError",
           "NodeView", "mark_offloaded", "read_holder", "read_removed", "remove_node", "request_disconnect", "request_offload", "request_reconnect"]


class NodeState(str, enum.Enum):
    """A node's connection to the cluster (NiFi's NodeConnectionState)."""

    CONNECTING = "CONNECTING"
    CONNECTED = "CONNECTED"
    DISCONNECTING = "DISCONNECTING"
    DISCONNECTED = "DISCONNECTED"
    OFFLOADING = "OFFLOADING"
    OFFLOADED = "OFFLOADED"


#: The states in which an operator keeps a node out of the cluster (it holds no role, takes no flow).
OPERATOR_OUT = frozenset({NodeState.DISCONNECTING, NodeState.DISCONNECTED, NodeState.OFFLOADING, NodeState.OFFLOADED})
#: The command that tells a node to offload (``request_offload``).
OFFLOAD_COMMAND = "offload"


class NodeStateError(Exception):
    """An operator's action that the node's state does not allow (the message says why)."""


@dataclass
class Heartbeat:
    """What a node says of itself every heartbeat interval."""

    node: str
    address: str = ""
    started_at: float = 0.0
    sent_at: float = 0.0
    flow_fingerprint: str = ""
    flow_version: str = ""
    deploy_id: str = ""
    active_threads: int = 0
    queued_count: int = 0
    queued_bytes: int = 0
    #: The node took note of an operator's disconnection (it holds no role and runs no deployment).
    disconnected: bool = False
    #: Why the node stays out of the cluster on its own account (it refused the cluster's flow).
    refused: str = ""
    #: The node's labels (``runnode --labels``): the pools of tenants it runs (``engine.cluster.placement``).
    labels: list[str] = field(default_factory=list)
    #: The address of the node's Spark UI, once its Spark started (``engine.spark.runtime``).
    spark_ui_url: str = ""

    def encode(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def decode(cls, raw: bytes | str) -> Heartbeat:
        data = json.loads(raw)
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)


@dataclass
class NodeRecord:
    """A node's entry in the ``nodes`` hash."""

    node: str
    state: NodeState = NodeState.CONNECTING
    reason: str = ""
    changed_at: float = field(default_factory=time.time)
    #: Set by an operator's disconnection: the node stays out until an operator reconnects it.
    by_operator: bool = False

    def encode(self) -> str:
        return json.dumps({**asdict(self), "state": self.state.value})

    @classmethod
    def decode(cls, raw: bytes | str) -> NodeRecord:
        data = json.loads(raw)
        return cls(data["node"], NodeState(data["state"]), data.get("reason", ""), float(data.get("changed_at", 0)),
                   bool(data.get("by_operator")))


def read_holder(client: redis.Redis, keys: ClusterKeys, role: str) -> tuple[str, int] | None:
    """The node holding ``role`` and its fencing token, or None."""
    raw = client.get(keys.lock(role))
    if not raw:
        return None
    node, _, token = (raw.decode() if isinstance(raw, bytes) else raw).partition(" ")
    return node, int(token or 0)


@dataclass
class NodeView:
    """One node as the control plane shows it."""

    node: str
    state: str
    reason: str
    changed_at: float
    roles: list[str]
    heartbeat: Heartbeat | None

    @property
    def labels(self) -> list[str]:
        """The labels the node runs with (known while its heartbeat lives; none = the shared pool)."""
        return list(self.heartbeat.labels) if self.heartbeat else []

    def as_dict(self) -> dict[str, Any]:
        return {"node": self.node, "state": self.state, "reason": self.reason, "changed_at": self.changed_at,
                "roles": self.roles, "labels": self.labels,
                "heartbeat": asdict(self.heartbeat) if self.heartbeat else None}


class ClusterView:
    """A snapshot of the cluster's nodes: records, heartbeats and roles (raises redis.RedisError
    when Redis cannot be reached)."""

    def __init__(self, client: redis.Redis, keys: ClusterKeys) -> None:
        records = {(k.decode() if isinstance(k, bytes) else k): NodeRecord.decode(v)
                   for k, v in client.hgetall(keys.nodes).items()}
        heartbeat_keys = sorted(client.scan_iter(match=keys.heartbeat_pattern, count=500))
        beats = client.mget(heartbeat_keys) if heartbeat_keys else []
        heartbeats = {}
        for raw in beats:
            if raw:
                beat = Heartbeat.decode(raw)
                heartbeats[beat.node] = beat
        holders = {role: read_holder(client, keys, role) for role in ROLES}
        self.nodes: dict[str, NodeView] = {}
        for node in sorted(set(records) | set(heartbeats)):
            record = records.get(node) or NodeRecord(node, NodeState.CONNECTING, "heartbeat received")
            roles = [role for role, holder in holders.items() if holder and holder[0] == node]
            self.nodes[node] = NodeView(node, record.state.value, record.reason, record.changed_at, roles,
                                        heartbeats.get(node))

    def connected(self) -> list[str]:
        """The nodes in state CONNECTED."""
        return [node for node, view in self.nodes.items() if view.state == NodeState.CONNECTED.value]


def _change(client: redis.Redis, keys: ClusterKeys, node: str, change) -> NodeRecord:
    """Apply ``change(record) -> record`` to a node's record atomically (optimistic, retried)."""
    with client.pipeline() as pipe:
        while True:
            try:
                pipe.watch(keys.nodes)
                raw = pipe.hget(keys.nodes, node)
                if raw is None and not pipe.exists(keys.heartbeat(node)):
                    raise NodeStateError(f"no node {node!r} in the cluster")
                record = NodeRecord.decode(raw) if raw else NodeRecord(node)
                record = change(record)
                pipe.multi()
                if record is None:
                    pipe.hdel(keys.nodes, node)
                else:
                    pipe.hset(keys.nodes, node, record.encode())
                pipe.execute()
                return record
            except redis.WatchError:
                continue


def request_disconnect(client: redis.Redis, keys: ClusterKeys, node: str, reason: str = "disconnected by an operator") -> NodeRecord:
    """Ask a node to leave the cluster: DISCONNECTING until the node acknowledges, then DISCONNECTED."""
    def change(record: NodeRecord) -> NodeRecord:
        if record.state is NodeState.DISCONNECTED:
            raise NodeStateError(f"node {node!r} is already disconnected")
        if record.state in (NodeState.OFFLOADING, NodeState.OFFLOADED):
            raise NodeStateError(f"node {node!r} is {record.state.value.lower()}: it is out of the cluster already; "
                                 "reconnect or remove it")
        return NodeRecord(node, NodeState.DISCONNECTING, reason, time.time(), by_operator=True)
    return _change(client, keys, node, change)


def request_offload(client: redis.Redis, keys: ClusterKeys, node: str, bus: CommandBus,
                    reason: str = "offloaded by an operator") -> NodeRecord:
    """Ask a disconnected node to hand its queued FlowFiles to the connected nodes: OFFLOADING,
    and the ``offload`` command sent to it (signed by ``bus``); the node sets OFFLOADED when done.
    The record says OFFLOADING even if the command does not reach the node: a node follows its record."""
    def change(record: NodeRecord) -> NodeRecord:
        if record.state in (NodeState.OFFLOADING, NodeState.OFFLOADED):
            raise NodeStateError(f"node {node!r} is already {record.state.value.lower()}")
        if record.state is not NodeState.DISCONNECTED:
            raise NodeStateError(f"node {node!r} is {record.state.value.lower()}; disconnect it before offloading it")
        return NodeRecord(node, NodeState.OFFLOADING, reason, time.time(), by_operator=True)
    record = _change(client, keys, node, change)
    bus.send([node], OFFLOAD_COMMAND, {"reason": reason})
    return record


def request_reconnect(client: redis.Redis, keys: ClusterKeys, node: str) -> NodeRecord:
    """Let a disconnected node connect again (CONNECTING; CONNECTED once it runs the cluster's flow)."""
    def change(record: NodeRecord) -> NodeRecord:
        if record.state in (NodeState.CONNECTED, NodeState.CONNECTING):
            raise NodeStateError(f"node {node!r} is {record.state.value.lower()}, not disconnected")
        return NodeRecord(node, NodeState.CONNECTING, "reconnect requested by an operator", time.time())
    return _change(client, keys, node, change)


def remove_node(client: redis.Redis, keys: ClusterKeys, node: str) -> None:
    """Forget a disconnected or offloaded node (refused for a node in any other state)."""
    def change(record: NodeRecord) -> None:
        if record.state is NodeState.OFFLOADING:
            raise NodeStateError(f"node {node!r} is offloading; wait until it is offloaded (or reconnect it) before "
                                 "removing it")
        if record.state not in (NodeState.DISCONNECTED, NodeState.OFFLOADED):
            raise NodeStateError(f"node {node!r} is {record.state.value.lower()}; disconnect it before removing it")
        return None
    _change(client, keys, node, change)
    client.hset(keys.removed, node, str(time.time()))


def read_removed(client: redis.Redis, keys: ClusterKeys) -> set[str]:
    """The nodes an operator removed (a node that only vanished from ``nodes``, as when Redis
    restarted empty, is not among them)."""
    return {(node.decode() if isinstance(node, bytes) else node) for node in client.hkeys(keys.removed)}


def mark_offloaded(client: redis.Redis, keys: ClusterKeys, node: str) -> NodeRecord:
    """The node's own report that it holds no FlowFile any more: OFFLOADING becomes OFFLOADED."""
    def change(record: NodeRecord) -> NodeRecord:
        if record.state is not NodeState.OFFLOADING:
            raise NodeStateError(f"node {node!r} is {record.state.value.lower()}, not offloading")
        return NodeRecord(node, NodeState.OFFLOADED, "offloaded: it holds no FlowFile", time.time(),
                          by_operator=True)
    return _change(client, keys, node, change)
