"""The status of a running flow: every component, every process group and the node itself, and
the one-line summary the node logs."""

from __future__ import annotations

import shutil
import time
from typing import TYPE_CHECKING

from engine.flow.model import ProcessGroupConfig
from engine.runtime.connectable import Connection, ScheduledState
from engine.runtime.processor_node import ProcessorNode
from engine.runtime.status import (
    ConnectionStatus,
    FlowStatus,
    NodeStatus,
    PortStatus,
    ProcessGroupStatus,
    ProcessorStatus,
    ServiceStatus,
)
from engine.units import format_data_size

if TYPE_CHECKING:
    from engine.runtime.controller import FlowController
    from engine.storage import NodeStorage

__all__ = ["flow_status", "group_status", "status_line"]


def flow_status(controller: FlowController) -> FlowStatus:
    """The status of every component, of every group and of the node."""
    processors = [_processor_status(node) for node in controller.processors.values()]
    connections = [_connection_status(c) for c in controller.connections.values()]
    ports = [PortStatus(n.identifier, n.name, n.kind, n.group_id, n.run_status(), n.active_thread_count,
                        n.stats.window().as_dict())
             for n in [*controller.funnels.values(), *controller.ports.values()]]
    services = [ServiceStatus(s.identifier, s.name, s.type_name, s.group_id, s.state,
                              [str(p) for p in s.validate()]) for s in controller.services.values()]
    flow = controller.flow
    root = _group_status(flow.root, processors, connections) if flow else ProcessGroupStatus("", "")
    queued = sum(c.queued_count for c in connections)
    node = NodeStatus(
        uptime_seconds=time.time() - controller.started_at,
        active_threads=sum(n.active_thread_count for n in controller.connectables()),
        max_timer_driven_threads=controller.scheduler.max_threads,
        queued_count=queued + sum(len(q) for q in controller.orphans.values()),
        queued_bytes=sum(c.queued_bytes for c in connections)
        + sum(q.size().bytes for q in controller.orphans.values()),
        swapped_count=sum(c.swapped_count for c in connections),
        is_clustered=controller.runtime.role.is_clustered,
        is_primary=controller.runtime.role.is_primary,
        orphaned_queues={queue_id: len(queue) for queue_id, queue in controller.orphans.items()},
        repositories=_repository_figures(controller.storage),
        disk_space=controller.disk_space.status() if controller.disk_space is not None else {},
    )
    bulletins = [b.as_dict() for b in controller.bulletins.recent()]
    return FlowStatus(node, root, processors, connections, ports, services, bulletins)


def _processor_status(node: ProcessorNode) -> ProcessorStatus:
    problems = node.validate() if node.state is not ScheduledState.RUNNING else []
    status = node.run_status() if node.state is ScheduledState.RUNNING else (
        "Disabled" if node.state is ScheduledState.DISABLED else ("Invalid" if problems else "Stopped"))
    return ProcessorStatus(node.identifier, node.name, node.component_type, node.group_id, status,
                           [str(p) for p in problems], node.active_thread_count,
                           "PRIMARY" if node.primary_only else "ALL", node.stats.window().as_dict(),
                           node.stats.totals.as_dict())


def _connection_status(connection: Connection) -> ConnectionStatus:
    queue = connection.queue
    size = queue.size()
    settings = queue.settings
    awaiting = getattr(queue, "awaiting_transfer", None)
    awaiting_count, awaiting_bytes = awaiting() if awaiting is not None else (0, 0)
    return ConnectionStatus(
        connection.identifier, connection.name, connection.group_id, connection.source.identifier,
        connection.source.name, connection.destination.identifier, connection.destination.name,
        size.count, size.bytes, size.swapped_count, size.swapped_bytes, size.swap_files,
        size.unacknowledged_count, size.unacknowledged_bytes, settings.back_pressure_object_threshold,
        settings.back_pressure_data_size_threshold, queue.is_full(), awaiting_count, awaiting_bytes,
    )


def _group_status(group: ProcessGroupConfig, processors: list[ProcessorStatus],
                  connections: list[ConnectionStatus]) -> ProcessGroupStatus:
    status = ProcessGroupStatus(group.identifier, group.name)
    for processor in processors:
        if processor.group_id != group.identifier:
            continue
        status.active_threads += processor.active_threads
        counter = {"Running": "running", "Stopping": "running", "Stopped": "stopped", "Invalid": "invalid",
                   "Disabled": "disabled"}[processor.run_status]
        setattr(status, counter, getattr(status, counter) + 1)
        for name in ("flowfiles_in", "bytes_in", "flowfiles_out", "bytes_out", "bytes_read", "bytes_written"):
            setattr(status, name, getattr(status, name) + processor.window[name])
    for connection in connections:
        if connection.group_id == group.identifier:
            status.queued_count += connection.queued_count
            status.queued_bytes += connection.queued_bytes
    for child in group.process_groups:
        child_status = _group_status(child, processors, connections)
        status.groups.append(child_status)
        for name in ("queued_count", "queued_bytes", "active_threads", "running", "stopped", "invalid", "disabled",
                     "flowfiles_in", "bytes_in", "flowfiles_out", "bytes_out", "bytes_read", "bytes_written"):
            setattr(status, name, getattr(status, name) + getattr(child_status, name))
    return status


def group_status(controller: FlowController, group: ProcessGroupConfig) -> ProcessGroupStatus:
    """The status of one process group (its subgroups included)."""
    processors = [_processor_status(node) for node in controller.processors.values()]
    connections = [_connection_status(c) for c in controller.connections.values()]
    return _group_status(group, processors, connections)


def _repository_figures(storage: NodeStorage) -> dict[str, object]:
    provenance = storage.provenance.stats()
    containers = {}
    for name, path in storage.content.containers.items():
        usage = shutil.disk_usage(path)
        containers[name] = {"disk_total_bytes": usage.total, "disk_free_bytes": usage.free}
    return {
        "flowfile_repository": {"flowfiles_in_memory": len(storage.flowfiles.wal.records),
                                "swap_files": len(storage.flowfiles.swap_locations)},
        "content_repository": {"resource_claims_in_use": len(storage.claims.counts()),
                               "containers": containers},
        "provenance_repository": {"events": provenance.event_count, "bytes_on_disk": provenance.bytes_on_disk,
                                  "max_event_id": provenance.max_event_id},
    }


def status_line(controller: FlowController) -> str:
    """One line of the node's figures, for logs."""
    connections = [c.queue.size() for c in controller.connections.values()]
    running = sum(1 for n in controller.processors.values() if n.state is ScheduledState.RUNNING)
    window = [n.stats.window() for n in controller.processors.values()]
    orphaned = sum(len(q) for q in controller.orphans.values())
    paused = controller.disk_space.describe() if controller.disk_space is not None else None
    return (
        f"{running}/{len(controller.processors)} processors running; "
        f"{sum(s.count for s in connections):,} FlowFiles queued "
        f"({format_data_size(sum(s.bytes for s in connections))}, {sum(s.swapped_count for s in connections):,} "
        f"swapped, {sum(s.unacknowledged_count for s in connections):,} in sessions); last 5 min: "
        f"{sum(w.flowfiles_in for w in window):,} in, {sum(w.flowfiles_out for w in window):,} out, "
        f"{sum(w.invocations for w in window):,} tasks; "
        f"{sum(n.active_thread_count for n in controller.connectables())} active thread(s)"
        + (f"; {orphaned:,} FlowFiles in orphaned queues" if orphaned else "")
        + (f"; {paused}" if paused else "")
    )
