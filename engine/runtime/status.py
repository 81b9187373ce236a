"""Status of a running flow: processors, connections, ports, services and process groups, with
the counts of the last five minutes. Plain data, so it can be sent to other nodes and merged."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "ConnectionStatus", "FlowStatus", "NodeStatus", "PortStatus", "ProcessGroupStatus", "ProcessorStatus",
    "ServiceStatus",
]


@dataclass
class ProcessorStatus:
    """A processor: run state, problems, threads, and its counts (last 5 minutes and in total)."""

    id: str
    name: str
    type: str
    group_id: str
    run_status: str
    validation_errors: list[str]
    active_threads: int
    execution_node: str
    window: dict[str, int]
    totals: dict[str, int]


@dataclass
class PortStatus:
    """A funnel or a port."""

    id: str
    name: str
    kind: str
    group_id: str
    run_status: str
    active_threads: int
    window: dict[str, int]


@dataclass
class ConnectionStatus:
    """A connection's queue: what waits (swapped included), what sessions hold, and its limits.
    ``awaiting_transfer_*`` is the part of the queued figures held for other nodes by a
    load-balanced connection (zero for a connection that is not load balanced)."""

    id: str
    name: str
    group_id: str
    source_id: str
    source_name: str
    destination_id: str
    destination_name: str
    queued_count: int
    queued_bytes: int
    swapped_count: int
    swapped_bytes: int
    swap_files: int
    unacknowledged_count: int
    unacknowledged_bytes: int
    back_pressure_object_threshold: int
    back_pressure_data_size_threshold: int
    full: bool
    #: FlowFiles of a load-balanced connection waiting for other nodes (in ``queued_count`` too,
    #: or in ``unacknowledged_count`` while a batch of them is in flight).
    awaiting_transfer_count: int = 0
    awaiting_transfer_bytes: int = 0


@dataclass
class ServiceStatus:
    """A controller service."""

    id: str
    name: str
    type: str
    group_id: str
    state: str
    validation_errors: list[str]


@dataclass
class ProcessGroupStatus:
    """A process group: totals over everything inside it, its subgroups included."""

    id: str
    name: str
    queued_count: int = 0
    queued_bytes: int = 0
    active_threads: int = 0
    running: int = 0
    stopped: int = 0
    invalid: int = 0
    disabled: int = 0
    flowfiles_in: int = 0
    bytes_in: int = 0
    flowfiles_out: int = 0
    bytes_out: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    groups: list[ProcessGroupStatus] = field(default_factory=list)


@dataclass
class NodeStatus:
    """The node as a whole."""

    uptime_seconds: float
    active_threads: int
    max_timer_driven_threads: int
    queued_count: int
    queued_bytes: int
    swapped_count: int
    is_clustered: bool
    is_primary: bool
    orphaned_queues: dict[str, int]
    repositories: dict[str, Any]
    #: Whether the flow is paused for lack of disk space, and each repository's free space.
    disk_space: dict[str, Any] = field(default_factory=dict)


@dataclass
class FlowStatus:
    """Everything a status request returns."""

    node: NodeStatus
    root: ProcessGroupStatus
    processors: list[ProcessorStatus]
    connections: list[ConnectionStatus]
    ports: list[PortStatus]
    services: list[ServiceStatus]
    bulletins: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        """The status as plain data (JSON-ready)."""
        return asdict(self)
