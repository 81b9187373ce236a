"""The coordinator's duty: drive every node's connection state from the heartbeats.

Run once per heartbeat interval by the node holding the coordinator lease:

- a heartbeat from a node with no record, or from one disconnected for lack of heartbeats →
  CONNECTING;
- CONNECTING, and the node runs the cluster's flow → CONNECTED;
- the node refused the cluster's flow (it would lose FlowFiles) → DISCONNECTED, with its reason;
- DISCONNECTING, and the node acknowledged it → DISCONNECTED (an operator's disconnection
  lasts until an operator reconnects the node);
- no heartbeat any more → DISCONNECTED ("no heartbeat for … s").

An OFFLOADING or OFFLOADED node is left as it is: an operator asked for it and the node itself
reports the end of its offload; only an operator (reconnect, remove) moves it on.

Every change is written by a script that checks the coordinator lease and that the record is
still the one the decision was made on, so an operator's request made meanwhile is never
overwritten and a former coordinator cannot write at all.
"""

from __future__ import annotations

import logging
import time

import redis

from engine.cluster.keys import ClusterKeys
from engine.cluster.records import Heartbeat, NodeRecord, NodeState

__all__ = ["Coordinator"]

log = logging.getLogger(__name__)

_WRITE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local current = redis.call('HGET', KEYS[2], ARGV[2])
if (current or '') ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
return 1
"""


class Coordinator:
    """Connection states of the cluster's nodes (see the module docstring)."""

    def __init__(self, client: redis.Redis, keys: ClusterKeys, missed_heartbeats_window: float) -> None:
        self.client = client
        self.keys = keys
        self.window = missed_heartbeats_window
        self._write = client.register_script(_WRITE)

    def review(self, lease_value: str, cluster_fingerprint: str | None) -> dict[str, NodeState]:
        """Apply the rules once; return the states changed, by node."""
        raw_records = {k.decode(): v for k, v in self.client.hgetall(self.keys.nodes).items()}
        heartbeat_keys = list(self.client.scan_iter(match=self.keys.heartbeat_pattern, count=500))
        heartbeats: dict[str, Heartbeat] = {}
        for raw in self.client.mget(heartbeat_keys) if heartbeat_keys else ():
            if raw:
                beat = Heartbeat.decode(raw)
                heartbeats[beat.node] = beat
        changed = {}
        for node in set(raw_records) | set(heartbeats):
            raw = raw_records.get(node)
            record = NodeRecord.decode(raw) if raw else None
            new = self._next(node, record, heartbeats.get(node), cluster_fingerprint)
            if new is None:
                continue
            written = int(self._write(keys=[self.keys.lock("coordinator"), self.keys.nodes],
                                      args=[lease_value, node, raw or b"", new.encode()]))
            if written < 0:
                break  # the lease moved on: this node is no longer the coordinator
            if written:
                log.info("node %s: %s (%s)", node, new.state.value, new.reason)
                changed[node] = new.state
        return changed

    def _next(self, node: str, record: NodeRecord | None, beat: Heartbeat | None,
              cluster_fingerprint: str | None) -> NodeRecord | None:
        now = time.time()
        if record is not None and record.state in (NodeState.OFFLOADING, NodeState.OFFLOADED):
            return None
        if beat is None:
            if record is not None and record.state is not NodeState.DISCONNECTED:
                return NodeRecord(node, NodeState.DISCONNECTED, f"no heartbeat for {self.window:g} s", now,
                                  record.by_operator)
            return None
        if record is None or (record.state is NodeState.DISCONNECTED and not record.by_operator and not beat.refused):
            return NodeRecord(node, NodeState.CONNECTING, "heartbeat received", now)
        if record.state in (NodeState.CONNECTING, NodeState.CONNECTED) and beat.refused:
            return NodeRecord(node, NodeState.DISCONNECTED, beat.refused, now)
        if record.state is NodeState.CONNECTING and cluster_fingerprint and beat.flow_fingerprint == cluster_fingerprint:
            return NodeRecord(node, NodeState.CONNECTED, "runs the cluster's flow", now)
        if record.state is NodeState.DISCONNECTING and beat.disconnected:
            return NodeRecord(node, NodeState.DISCONNECTED, record.reason, now, by_operator=True)
        return None
