"""The queue factory that makes load-balanced connections partitioned.

The flow controller asks its queue factory for each connection's queue, ``factory(config,
existing)``, when it builds the flow and when a connection's settings change. This one answers
with a :class:`PartitionedQueue` for a connection that load balances (and for every connection
while the node offloads) and with a plain :class:`FlowFileQueue` otherwise, moving the queued
FlowFiles (memory and swap files) over when the kind of queue changes. Queues it made follow the
topology store's changes.
"""

from __future__ import annotations

import time
import weakref
from typing import Any, Callable

from engine.balance.partitioned_queue import PartitionedQueue
from engine.balance.partitioners import DO_NOT_LOAD_BALANCE
from engine.balance.pins import TransferPins
from engine.balance.topology import ClusterTopology, TopologyStore
from engine.flow.model import ConnectionConfig
from engine.queue.flowfile_queue import FlowFileQueue, QueueSettings
from engine.repository.swap import SwapManager

__all__ = ["QueueFactory", "partitioned_queue_factory"]

QueueFactory = Callable[[ConnectionConfig, Any], Any]


def partitioned_queue_factory(
    store: TopologyStore,
    settings_of: Callable[[ConnectionConfig], QueueSettings],
    swap: SwapManager | None = None,
    clock: Callable[[], float] = time.time,
    offloading: Callable[[], bool] = lambda: False,
    pins: TransferPins | None = None,
) -> QueueFactory:
    """A queue factory ``(connection config, existing queue or None) -> queue``.

    ``settings_of`` gives a connection's queue settings (the local partition's); ``offloading``
    says whether the node offloads (then every connection gets a PartitionedQueue that sends
    everything away); ``pins`` keeps FlowFiles in doubt with their node. The existing queue must hold no FlowFiles in sessions when the kind of
    queue changes (its components are stopped): those would be settled on the old queue.
    """
    queues: weakref.WeakSet[PartitionedQueue] = weakref.WeakSet()

    def follow(topology: ClusterTopology) -> None:
        for queue in list(queues):
            queue.set_topology(topology)

    store.add_listener(follow)

    def make(config: ConnectionConfig, existing: Any = None) -> Any:
        settings = settings_of(config)
        offload = offloading()
        if config.load_balance_strategy == DO_NOT_LOAD_BALANCE and not offload:
            if isinstance(existing, PartitionedQueue):
                queue = FlowFileQueue(config.identifier, settings, swap, clock)
                existing.hand_over(queue)
                return queue
            if existing is not None:
                existing.update_settings(settings)
                return existing
            return FlowFileQueue(config.identifier, settings, swap, clock)
        if isinstance(existing, PartitionedQueue):
            existing.update_settings(settings)
            existing.set_strategy(config.load_balance_strategy, config.partitioning_attribute)
        else:
            queue = PartitionedQueue(config.identifier, settings, store.current, config.load_balance_strategy,
                                     config.partitioning_attribute, swap, clock, pins)
            if existing is not None:
                queue.take_over(existing)
            existing = queue
            queues.add(queue)
        if offload:
            existing.start_offload()
        else:
            existing.end_offload()
        return existing

    return make
