"""A node's part in load-balanced connections: topology, partitioned queues, transfer and offload.

``LoadBalancing`` joins the pieces of ``engine.balance`` inside one clustered node:

- its queue factory gives every load-balanced connection a ``PartitionedQueue`` (and every
  connection one while the node offloads);
- a watcher reads the cluster's node records every ``watch_interval`` and keeps the persisted
  ``TopologyStore`` current: a CONNECTED node with a live heartbeat is reachable; a node that is
  disconnected, or whose record vanished (Redis restarted empty), keeps its partition but is not
  sent to; an OFFLOADING or OFFLOADED node, or one an operator removed, leaves the list;
- a ``TransferSender`` and a ``TransferReceiver`` move the remote partitions' FlowFiles;
- offload (NiFi's): when this node's record says OFFLOADING it stops its components, sends every
  queued FlowFile to the connected nodes and, once it holds none, records itself OFFLOADED. When
  an operator reconnects it, its queues become what the flow says and its components start again.

A node keeps sending its queued data while it is itself disconnected; the others send it none.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Iterator

import redis

from engine.balance.partitioned_queue import PartitionedQueue
from engine.balance.pins import TransferPins
from engine.balance.queue_factory import QueueFactory, partitioned_queue_factory
from engine.balance.receiver import TransferReceiver
from engine.balance.sender import TransferSender
from engine.balance.topology import TopologyError, TopologyStore
from engine.balance.trust import Signer, Verifier
from engine.cluster.config import ClusterConfig
from engine.cluster.keys import ClusterKeys
from engine.cluster.records import ClusterView, NodeState, NodeStateError, mark_offloaded, read_removed
from engine.runtime.graph import queue_settings
from engine.wal import SyncPolicy

__all__ = ["BalanceSettings", "LoadBalancing"]

log = logging.getLogger(__name__)

_LEAVING = (NodeState.OFFLOADING.value, NodeState.OFFLOADED.value)
_REMOVED = "REMOVED"


@dataclass(frozen=True)
class BalanceSettings:
    """How a node load-balances: how often it reads the cluster's nodes, how long it waits for a
    peer's acknowledgement, how many entries a peer's stream may hold, the content chunk size."""

    watch_interval: float = 0.5
    ack_timeout: float = 30.0
    stream_cap: int = 64
    chunk_size: int = 1 << 20

    @classmethod
    def of(cls, config: ClusterConfig) -> BalanceSettings:
        """The load-balance settings of a node's ``cluster`` settings."""
        return cls(min(1.0, config.heartbeat_interval / 2), config.load_balance_ack_timeout,
                   config.load_balance_stream_cap, config.load_balance_chunk_size)


class LoadBalancing:
    """Load balancing of ``node`` (a ``StandaloneNode``) as ``node_id`` in the cluster ``keys``
    names, over the Redis at ``redis_url`` (see the module docstring)."""

    def __init__(self, node: Any, node_id: str, redis_url: str, keys: ClusterKeys, signer: Signer,
                 verifier: Verifier, settings: BalanceSettings = BalanceSettings()) -> None:
        self.node = node
        self.node_id = node_id
        self.keys = keys
        self.settings = settings
        self.store = TopologyStore(node.data_dir, node_id)
        self.pins = TransferPins(node.data_dir, durable=node.storage.flowfiles.sync_policy is not SyncPolicy.OS)
        self._redis_url = redis_url
        self._offloading = False
        self._offload_reported = False
        self._offload_lock = threading.Lock()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._client: redis.Redis | None = None
        self.sender = TransferSender(self._redis, keys, node_id, node.storage, self._reachable, self._connections,
                                     signer, verifier, on_failure=self._transfer_failed, pins=self.pins,
                                     bulletin=self._bulletin,
                                     ack_timeout=settings.ack_timeout, stream_cap=settings.stream_cap,
                                     chunk_size=settings.chunk_size)
        self.receiver = TransferReceiver(self._redis, keys, node_id, node.storage, self._queue, signer, verifier,
                                         bulletin=self._bulletin)
        self.queue_factory: QueueFactory = partitioned_queue_factory(
            self.store, lambda config: queue_settings(config, node.config.runtime), node.storage.flowfiles.swap,
            offloading=lambda: self._offloading, pins=self.pins)

    # -- life ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start watching the cluster, sending and receiving."""
        if self.store.damage is not None:
            self._bulletin("WARN", "topology", str(self.store.damage))
        if self.node.controller is not None:  # pins of FlowFiles that left meanwhile go
            self.pins.keep_only(flowfile.id for _, flowfile in self.node.storage.flowfiles.live_flowfiles())
        self._watch()
        self.receiver.start()
        self.sender.start()
        self._watcher = threading.Thread(target=self._run, name=f"balance-{self.node_id}", daemon=True)
        self._watcher.start()

    def stop(self) -> None:
        """Stop watching, sending and receiving (what is under way is resent after a restart)."""
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=10)
        self.sender.stop()
        self.receiver.stop()

    @property
    def offloading(self) -> bool:
        """Whether this node is offloading (or has offloaded) its data."""
        return self._offloading

    # -- what the transfer asks -----------------------------------------------------------

    def _redis(self) -> redis.Redis:
        return redis.Redis.from_url(self._redis_url, socket_timeout=10, socket_connect_timeout=2)

    def _reachable(self) -> set[str]:
        return set(self.store.current.reachable) - {self.node_id}

    def _partitioned(self) -> Iterator[tuple[Any, PartitionedQueue]]:
        controller = self.node.controller
        if controller is None:
            return
        for connection in list(controller.connections.values()):
            if isinstance(connection.queue, PartitionedQueue):
                yield connection, connection.queue

    def _connections(self):
        for connection, queue in self._partitioned():
            yield connection.identifier, connection.config.load_balance_compression, queue.remote_partitions()

    def _queue(self, connection_id: str):
        controller = self.node.controller
        if controller is None or self._offloading:
            return None
        connection = controller.connections.get(connection_id)
        return None if connection is None else connection.queue

    def _transfer_failed(self, connection_id: str, node_id: str, flowfiles: list) -> None:
        controller = self.node.controller
        connection = None if controller is None else controller.connections.get(connection_id)
        if connection is None or not isinstance(connection.queue, PartitionedQueue):
            raise LookupError(f"connection {connection_id} no longer load-balances")  # the sender puts them back
        connection.queue.transfer_failed(node_id, flowfiles)

    def _bulletin(self, level: str, source: str, message: str) -> None:
        controller = self.node.controller
        if controller is not None:
            controller.bulletins.post(level, f"node:{self.node_id}:loadbalance", self.node_id, "Node", "", message)
        log.log(logging.WARNING if level in ("WARN", "WARNING") else logging.ERROR if level == "ERROR" else logging.INFO,
                "node %s: load balancing: %s", self.node_id, message)

    # -- the cluster's nodes ------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.wait(self.settings.watch_interval):
            self._watch()

    def _watch(self) -> None:
        try:
            if self._client is None:
                self._client = self._redis()
            view = ClusterView(self._client, self.keys)
            removed = read_removed(self._client, self.keys)
        except redis.RedisError as error:
            self._client = None
            log.debug("node %s: cluster unreadable (%s); the topology stays as it is", self.node_id, error)
            return
        try:
            self._follow(view, removed)
            own = view.nodes.get(self.node_id)
            self._follow_self(own.state if own is not None else None)
        except TopologyError as error:
            self._bulletin("ERROR", "topology", str(error))
        except Exception:
            log.exception("node %s: load balancing could not follow the cluster", self.node_id)

    def _follow(self, view: ClusterView, removed: set[str]) -> None:
        for node, seen in view.nodes.items():
            if node == self.node_id:
                continue
            state = seen.state
            if node in removed:  # an operator removed it; it is back only once connected again
                if state == NodeState.CONNECTED.value:
                    self._client.hdel(self.keys.removed, node)
                else:
                    state = _REMOVED
                    self.pins.release_node(node)
            elif state == NodeState.CONNECTED.value and seen.heartbeat is None:
                state = NodeState.DISCONNECTED.value
            if state in _LEAVING or state in (_REMOVED, NodeState.CONNECTED.value) or node in self.store.current.nodes:
                self.store.node_state_changed(node, state)
        for node in self.store.current.peers:
            if node not in view.nodes:
                if node in removed:
                    self.pins.release_node(node)
                self.store.node_state_changed(node, _REMOVED if node in removed else NodeState.DISCONNECTED.value)

    # -- offload --------------------------------------------------------------------------

    def _follow_self(self, state: str | None) -> None:
        if state in _LEAVING:
            if not self._offloading:
                self.offload()
            elif state == NodeState.OFFLOADING.value:
                self._report_when_empty()
        elif self._offloading and state is not None:
            self._end_offload()

    def offload(self) -> dict[str, Any]:
        """Stop every component and send every queued FlowFile to the connected nodes."""
        controller = self.node.controller
        if controller is None:
            raise NodeStateError(f"node {self.node_id} runs no flow to offload")
        with self._offload_lock:
            if self._offloading:
                return {"node": self.node_id, "queued": self._queued()}
            self._begin_offload(controller)
        return {"node": self.node_id, "queued": self._queued()}

    def _begin_offload(self, controller: Any) -> None:
        log.info("node %s: offloading: stopping every component and sending its queued FlowFiles away",
                 self.node_id)
        self._offloading = True
        self._offload_reported = False
        controller.stop_and_wait(controller.connectables())
        for processor in controller.processors.values():
            if processor.active_thread_count:
                controller.terminate_processor(processor.identifier)
        controller.refresh_queues()

    def _queued(self) -> int:
        controller = self.node.controller
        if controller is None:
            return 0
        return sum(connection.queue.size().total_count for connection in controller.connections.values())

    def _report_when_empty(self) -> None:
        # Under the offload lock: while ``_begin_offload`` rebuilds the queues, the old ones are
        # already drained and the new ones not yet installed, so the node would look empty.
        with self._offload_lock:
            if self._offload_reported or not self._offloading or self._queued():
                return
            try:
                mark_offloaded(self._redis_client(), self.keys, self.node_id)
            except NodeStateError as error:  # reconnected meanwhile
                log.info("node %s: offload not reported: %s", self.node_id, error)
                return
            self._offload_reported = True
        log.info("node %s: offloaded: it holds no FlowFile", self.node_id)

    def _redis_client(self) -> redis.Redis:
        if self._client is None:
            self._client = self._redis()
        return self._client

    def _end_offload(self) -> None:
        controller = self.node.controller
        with self._offload_lock:
            self._offloading = False
            self._offload_reported = False
        if controller is None:
            return
        log.info("node %s: reconnected after offloading: its queues and components are as the flow says",
                 self.node_id)
        controller.refresh_queues()
        controller.start_components()

