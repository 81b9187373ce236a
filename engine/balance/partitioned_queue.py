"""A load-balanced connection's queue: a local partition and one partition per other node.

:class:`PartitionedQueue` stands in for :class:`~engine.queue.FlowFileQueue`. ``put`` runs the
connection's partitioner; processors only ever see the local partition (``poll``, ``peek``,
``availability``, ``remove_expired``); the transfer code takes each remote partition's
FlowFiles (``remote_partitions``) and settles them there. Figures and back pressure cover every
partition.

A remote partition is a FlowFileQueue of its own that swaps past 1,000 FlowFiles in files of
1,000 whose names carry the node id (``<millis>-<connection>-<uuid>.<node>.swap``); the
write-ahead log's records keep the connection id as queue id, so moving FlowFiles held in memory
between partitions writes nothing, and a swap file that changes partition is renamed (a
SWAP_FILE_RENAMED record) or, for a partitioner that reads the FlowFiles, swapped in and
partitioned again. At restart a remote partition's files go back to it when its node is still in
the topology, else through the partitioner; FlowFiles recovered in memory are partitioned again
(with the restored topology, deterministic strategies put them where they were). FlowFiles
pinned to a node (``engine.balance.pins``: sent there, outcome unknown) stay with that node
whatever the partitioner says, as long as the node is in the topology.

Expiration applies where processors take data: the local partition. Remote partitions have no
back pressure, expiration or order of their own beyond the prioritizers.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from typing import Any, Callable, Iterable, NamedTuple, Sequence

from engine.balance.partitioners import OffloadPartitioner, Partitioner, make_partitioner
from engine.balance.pins import TransferPins
from engine.balance.topology import ClusterTopology
from engine.flowfile import FlowFile
from engine.queue.flowfile_queue import (
    FlowFileAvailability, FlowFileQueue, Polled, QueueSettings, QueueSize, SwappedFile,
)
from engine.repository.swap import SwapManager, partition_of

__all__ = ["PartitionedQueue", "REMOTE_SWAP_THRESHOLD", "remote_settings"]

log = logging.getLogger(__name__)

#: FlowFiles a remote partition keeps in memory, and per swap file (NiFi's NODE_SWAP_THRESHOLD).
REMOTE_SWAP_THRESHOLD = 1_000


def remote_settings(settings: QueueSettings) -> QueueSettings:
    """A remote partition's settings: the connection's order, no limits of its own, swap at 1,000."""
    return dataclasses.replace(settings, back_pressure_object_threshold=0, back_pressure_data_size_threshold=0,
                               expiration=0.0, swap_threshold=REMOTE_SWAP_THRESHOLD,
                               swap_batch_size=REMOTE_SWAP_THRESHOLD)


class _PartitionSwapper:
    """The swap manager as a remote partition sees it: its files are named for the partition."""

    def __init__(self, swap: SwapManager, partition: str) -> None:
        self.swap = swap
        self.partition = partition

    def swap_out(self, queue_id: str, flowfiles: Sequence[FlowFile], order: Any = None, *,
                 now: int | None = None) -> str:
        return self.swap.swap_out(queue_id, flowfiles, order, now=now, partition=self.partition)

    def swap_in(self, location: str) -> list[FlowFile]:
        return self.swap.swap_in(location)

    def read_flowfiles(self, location: str) -> list[FlowFile]:
        return self.swap.read_flowfiles(location)

    def holds(self, location: str, uuid: str) -> bool:
        return self.swap.holds(location, uuid)


class _Summary(NamedTuple):
    """What ``FlowFileQueue.restore`` needs to know of a swap file without reading it."""

    count: int
    bytes: int
    order: Any
    ready_at: int


class PartitionedQueue:
    """The FlowFiles of one load-balanced connection, partitioned by node.

    ``topology`` is the cluster as this node sees it (restored from disk before the queue is
    made). ``swap`` is the FlowFile repository's swap manager (None: no swapping). One lock
    guards the partitions' layout; each partition has its own lock for its contents.
    """

    def __init__(self, identifier: str, settings: QueueSettings, topology: ClusterTopology, strategy: str,
                 attribute: str = "", swap: SwapManager | None = None, clock: Callable[[], float] = time.time,
                 pins: TransferPins | None = None) -> None:
        self.identifier = identifier
        self._pins = pins
        self._swap = swap
        self._clock = clock
        self._lock = threading.RLock()
        self._topology = topology
        self._strategy = (strategy, attribute)
        self._partitioner: Partitioner = make_partitioner(strategy, attribute)
        self._local = FlowFileQueue(identifier, settings, swap, clock)
        self._remote: dict[str, FlowFileQueue] = {}
        # Partitions of nodes that left while a transfer to them was under way.
        self._retired: dict[str, FlowFileQueue] = {}
        # What take_all handed out of remote partitions, so its settling reaches them.
        self._taken: dict[int, FlowFileQueue] = {}
        self._taken_swapped: dict[str, tuple[SwappedFile, FlowFileQueue]] = {}
        for node in topology.peers:
            self._remote[node] = self._new_remote(node)

    # -- what it is -----------------------------------------------------------------------

    @property
    def settings(self) -> QueueSettings:
        """The connection's limits and order (the local partition's)."""
        return self._local.settings

    @property
    def strategy(self) -> str:
        """The configured strategy (``OFFLOAD`` replaces it only while the node offloads)."""
        return self._strategy[0]

    @property
    def partitioner(self) -> Partitioner:
        """The partitioner now in use."""
        return self._partitioner

    @property
    def topology(self) -> ClusterTopology:
        """The topology the partitions follow."""
        return self._topology

    @property
    def offloading(self) -> bool:
        """True once ``start_offload`` was called."""
        return isinstance(self._partitioner, OffloadPartitioner)

    def local_partition(self) -> FlowFileQueue:
        """The partition processors take from."""
        return self._local

    def remote_partitions(self) -> dict[str, FlowFileQueue]:
        """The partition of each other node of the topology (the transfer code polls them)."""
        with self._lock:
            return dict(self._remote)

    def update_settings(self, settings: QueueSettings) -> None:
        """Apply the connection's new limits and order to every partition."""
        with self._lock:
            self._local.update_settings(settings)
            for queue in self._remote_queues():
                queue.update_settings(remote_settings(settings))

    def set_strategy(self, strategy: str, attribute: str = "") -> None:
        """Use another strategy: everything queued is partitioned again (not while offloading)."""
        with self._lock:
            if (strategy, attribute) == self._strategy:
                return
            partitioner = make_partitioner(strategy, attribute)
            self._strategy = (strategy, attribute)
            if not self.offloading:
                self._partitioner = partitioner
                self._rebalance([self._local, *self._remote.values()])

    # -- adding ---------------------------------------------------------------------------

    def put(self, flowfile: FlowFile) -> None:
        """Queue one FlowFile in the partition the partitioner names."""
        self.put_all((flowfile,))

    def put_all(self, flowfiles: Iterable[FlowFile]) -> None:
        """Queue FlowFiles, each in the partition the partitioner names."""
        with self._lock:
            self._put(flowfiles)

    def receive_from_peer(self, flowfiles: Iterable[FlowFile]) -> None:
        """Queue FlowFiles another node sent: locally, unless the strategy rebalances on resize
        and the partitioner names another node (a node that receives data it does not own
        forwards it)."""
        with self._lock:
            if self._partitioner.rebalance_on_resize:
                self._put(flowfiles)
            else:
                self._local.put_all(flowfiles)

    def restore(self, flowfiles: Iterable[FlowFile], swap_files: Iterable[tuple[str, Any]] = ()) -> None:
        """Take back what recovery found for this connection (see the module docstring)."""
        with self._lock:
            for location, summary in swap_files:
                partition = partition_of(location)
                if partition is None or partition == self._topology.local_node:
                    self._local.restore((), [(location, summary)])
                elif partition in self._remote:
                    self._remote[partition].restore((), [(location, summary)])
                else:
                    self._route_swap_file(location, _Summary(summary.count, summary.bytes, summary.order,
                                                             summary.ready_at))
            self._put(flowfiles)

    def take_over(self, queue: FlowFileQueue) -> None:
        """Move everything queued in ``queue`` (the connection's former queue) into the partitions.

        FlowFiles that sessions hold stay with ``queue`` until they are settled there.
        """
        with self._lock:
            self._rebalance([queue])

    def hand_over(self, queue: FlowFileQueue) -> None:
        """Move everything queued here into ``queue`` (the connection stops load balancing);
        swap files lose their partition names."""
        with self._lock:
            for partition in (self._local, *self._remote_queues()):
                flowfiles, swapped = self._drain(partition)
                queue.put_all(flowfiles)
                for swap_file in swapped:
                    location = self._rename(swap_file.location, None)
                    queue.restore((), [(location, self._summary(swap_file))])

    # -- the cluster ----------------------------------------------------------------------

    def set_topology(self, topology: ClusterTopology) -> None:
        """Follow a new topology: partitions for new nodes; the data of removed nodes, or of
        every partition when the node list changed and the strategy rebalances on resize, goes
        through the partitioner; so does that of unreachable nodes when it rebalances on failure."""
        with self._lock:
            old, self._topology = self._topology, topology
            for node in topology.peers:
                if node not in self._remote:
                    retired = self._retired.pop(node, None)
                    self._remote[node] = retired if retired is not None else self._new_remote(node)
            moving = []
            for node in [n for n in self._remote if n not in topology.peers]:
                queue = self._remote.pop(node)
                self._retired[node] = queue
                moving.append(queue)
            if self._partitioner.rebalance_on_resize and old.nodes != topology.nodes:
                moving += [self._local, *self._remote.values()]
            elif self._partitioner.rebalance_on_failure:
                moving += [queue for node, queue in self._remote.items() if not topology.is_reachable(node)]
            self._rebalance(moving)
            self._prune_retired()

    def node_unreachable(self, node: str) -> None:
        """A peer cannot be reached: round robin and offload hand its queued data to the others."""
        with self._lock:
            self.set_topology(self._topology.with_reachable(node, False))

    def node_reachable(self, node: str) -> None:
        """A peer can be reached again."""
        with self._lock:
            self.set_topology(self._topology.with_reachable(node, True))

    def start_offload(self) -> None:
        """From now on everything, the local partition included, goes to the other nodes."""
        with self._lock:
            if self.offloading:
                return
            self._partitioner = OffloadPartitioner()
            self._rebalance([self._local, *self._remote.values()])

    def end_offload(self) -> None:
        """The node is back in the cluster: the connection's own strategy places FlowFiles again
        (those already queued for other nodes stay there)."""
        with self._lock:
            if self.offloading:
                self._partitioner = make_partitioner(*self._strategy)

    def transfer_succeeded(self, node: str, flowfiles: Sequence[FlowFile]) -> None:
        """Settle FlowFiles taken from ``node``'s partition that the node has committed."""
        with self._lock:
            queue = self._remote.get(node, self._retired.get(node))
            if queue is not None:
                queue.acknowledge(flowfiles)
            self._prune_retired()

    def transfer_failed(self, node: str, flowfiles: Sequence[FlowFile]) -> None:
        """Take back FlowFiles taken from ``node``'s partition that did not arrive: they go through
        the partitioner when it rebalances on failure or the node left, else back to that partition."""
        with self._lock:
            queue = self._remote.get(node)
            retired = self._retired.get(node)
            if queue is not None:
                queue.acknowledge(flowfiles)
            elif retired is not None:
                retired.acknowledge(flowfiles)
            if queue is not None and not self._partitioner.rebalance_on_failure:
                queue.put_all(flowfiles)
            else:
                self._put(flowfiles)
            self._prune_retired()

    def awaiting_transfer(self) -> tuple[int, int]:
        """(count, bytes) of the FlowFiles waiting for other nodes, swapped and in flight included."""
        count = size = 0
        for queue in self._remote_queues():
            figures = queue.size()
            count += figures.count + figures.unacknowledged_count
            size += figures.bytes + figures.unacknowledged_bytes
        return count, size

    # -- taking (the local partition) -----------------------------------------------------

    def poll(self, max_count: int = 1) -> Polled:
        """Take FlowFiles from the local partition (see ``FlowFileQueue.poll``)."""
        return self._local.poll(max_count)

    def remove_expired(self) -> list[FlowFile]:
        """Take the local partition's expired FlowFiles."""
        return self._local.remove_expired()

    def availability(self) -> FlowFileAvailability:
        """What a poll of the local partition would find."""
        return self._local.availability()

    def peek(self, count: int) -> list[FlowFile]:
        """The first FlowFiles of the local partition."""
        return self._local.peek(count)

    def swapped_files(self) -> list[SwappedFile]:
        """The local partition's swap files."""
        return self._local.swapped_files()

    def find(self, uuid: str) -> FlowFile | None:
        """The FlowFile ``uuid`` if it waits in memory in any partition."""
        with self._lock:
            queues = [self._local, *self._remote_queues()]
        return next((found for queue in queues if (found := queue.find(uuid)) is not None), None)

    def find_swapped(self, uuid: str) -> str | None:
        """The swap file of any partition holding FlowFile ``uuid``, or None."""
        with self._lock:
            queues = [self._local, *self._remote_queues()]
        return next((found for queue in queues if (found := queue.find_swapped(uuid)) is not None), None)

    def take_all(self) -> tuple[list[FlowFile], list[SwappedFile]]:
        """Empty every partition (see ``FlowFileQueue.take_all``); settle through this queue."""
        with self._lock:
            flowfiles, swapped = self._local.take_all()
            for queue in self._remote_queues():
                taken, files = queue.take_all()
                for flowfile in taken:
                    self._taken[flowfile.id] = queue
                for swap_file in files:
                    self._taken_swapped[swap_file.location] = (swap_file, queue)
                flowfiles += taken
                swapped += files
            return flowfiles, swapped

    def give_back(self, swapped: Iterable[SwappedFile]) -> None:
        """Take back swap files handed out by ``take_all`` that could not be deleted."""
        with self._lock:
            for swap_file in swapped:
                _, queue = self._taken_swapped.pop(swap_file.location, (swap_file, self._local))
                queue.give_back([swap_file])

    def acknowledge(self, flowfiles: Iterable[FlowFile]) -> None:
        """Settle FlowFiles taken by ``poll`` (or by ``take_all``)."""
        if not self._taken:
            self._local.acknowledge(flowfiles)
            return
        by_queue: dict[int, tuple[FlowFileQueue, list[FlowFile]]] = {}
        with self._lock:
            for flowfile in flowfiles:
                queue = self._taken.pop(flowfile.id, self._local)
                by_queue.setdefault(id(queue), (queue, []))[1].append(flowfile)
        for queue, settled in by_queue.values():
            queue.acknowledge(settled)

    def acknowledge_counts(self, count: int, size: int) -> None:
        """Settle ``count`` taken FlowFiles of ``size`` bytes (a swap file handed out by ``take_all``)."""
        queue = self._local
        if self._taken_swapped:
            with self._lock:
                for location, (swap_file, owner) in self._taken_swapped.items():
                    if (swap_file.count, swap_file.bytes) == (count, size):
                        del self._taken_swapped[location]
                        queue = owner
                        break
        queue.acknowledge_counts(count, size)

    # -- looking --------------------------------------------------------------------------

    def size(self) -> QueueSize:
        """The figures of every partition added up."""
        with self._lock:
            queues = [self._local, *self._remote_queues()]
        return QueueSize(*(sum(column) for column in zip(*(queue.size() for queue in queues))))

    def __len__(self) -> int:
        with self._lock:
            queues = [self._local, *self._remote_queues()]
        return sum(len(queue) for queue in queues)

    def is_full(self) -> bool:
        """True when the whole connection (every partition, in flight included) reaches a threshold."""
        settings = self._local.settings
        figures = self.size()
        if 0 < settings.back_pressure_object_threshold <= figures.total_count:
            return True
        return 0 < settings.back_pressure_data_size_threshold <= figures.total_bytes

    # -- internals ------------------------------------------------------------------------

    def _new_remote(self, node: str) -> FlowFileQueue:
        swapper = _PartitionSwapper(self._swap, node) if self._swap is not None else None
        return FlowFileQueue(self.identifier, remote_settings(self._local.settings), swapper, self._clock)

    def _remote_queues(self) -> list[FlowFileQueue]:
        return [*self._remote.values(), *self._retired.values()]

    def _queue_of(self, node: str) -> FlowFileQueue:
        if node == self._topology.local_node:
            return self._local
        return self._remote.get(node, self._local)

    def _put(self, flowfiles: Iterable[FlowFile]) -> None:
        partition, topology = self._partitioner.partition, self._topology
        pinned = self._pins.node_of if self._pins is not None and len(self._pins) else None
        groups: dict[str, list[FlowFile]] = {}
        for flowfile in flowfiles:
            node = pinned(flowfile.id) if pinned is not None else None
            if node is None or node not in self._remote:  # in doubt on a node that is still there: stays
                node = partition(flowfile, topology)
            groups.setdefault(node, []).append(flowfile)
        for node, batch in groups.items():
            self._queue_of(node).put_all(batch)

    def _drain(self, queue: FlowFileQueue) -> tuple[list[FlowFile], list[SwappedFile]]:
        """Everything queued in ``queue``, taken out of it for good."""
        flowfiles, swapped = queue.take_all()
        queue.acknowledge_counts(len(flowfiles) + sum(s.count for s in swapped),
                                 sum(f.size for f in flowfiles) + sum(s.bytes for s in swapped))
        return flowfiles, swapped

    def _rebalance(self, queues: Iterable[FlowFileQueue]) -> None:
        """Run everything queued in ``queues`` through the partitioner again (all taken out first,
        so nothing is partitioned twice)."""
        flowfiles: list[FlowFile] = []
        swapped: list[SwappedFile] = []
        for queue in queues:
            taken, files = self._drain(queue)
            flowfiles += taken
            swapped += files
        self._put(flowfiles)
        for swap_file in swapped:
            self._route_swap_file(swap_file.location, self._summary(swap_file))

    def _summary(self, swap_file: SwappedFile) -> _Summary:
        order = {"prioritizers": list(self._local.settings.prioritizers), "best": list(swap_file.best_key)}
        return _Summary(swap_file.count, swap_file.bytes, order, swap_file.ready_at)

    def _route_swap_file(self, location: str, summary: _Summary) -> None:
        """Give a swap file to the partition the partitioner names: renamed whole when the choice
        does not depend on the FlowFiles, else swapped in and partitioned FlowFile by FlowFile."""
        if self._partitioner.reads_flowfile:
            try:
                flowfiles = self._swap.swap_in(location)
            except Exception as error:
                log.warning("connection %s: could not swap in %s to partition it again (%s); it stays in the local "
                            "partition", self.identifier, location, error)
                self._local.restore((), [(location, summary)])
                return
            self._put(flowfiles)
            return
        node = self._partitioner.partition(None, self._topology)
        queue = self._queue_of(node)
        location = self._rename(location, None if queue is self._local else node)
        queue.restore((), [(location, summary)])

    def _rename(self, location: str, partition: str | None) -> str:
        """``location`` renamed for ``partition``; on failure the old name (logged): the FlowFiles
        are safe, and a restart routes the file by the name it kept."""
        try:
            return self._swap.move(location, partition)
        except Exception as error:
            log.warning("connection %s: could not rename swap file %s for partition %s (%s); it keeps its name",
                        self.identifier, location, partition or "local", error)
            return location

    def _prune_retired(self) -> None:
        for node, queue in list(self._retired.items()):
            figures = queue.size()
            if figures.count == 0 and figures.unacknowledged_count == 0:
                del self._retired[node]
