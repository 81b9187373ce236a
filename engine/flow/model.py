"""The flow definition in memory: process groups, processors, connections, funnels, ports,
controller services and parameter contexts, as NiFi's flow-definition JSON describes them.

Each component keeps the JSON object it was read from (``raw``), so fields Flowsite does not
use survive a load and a save unchanged, and its JSON path (``path``), so every problem can
say where it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

__all__ = [
    "ComponentConfig", "ConnectionConfig", "Endpoint", "FlowDefinition", "FunnelConfig", "Parameter",
    "ParameterContextConfig", "PortConfig", "ProcessGroupConfig", "ProcessorConfig", "ServiceConfig",
    "TenantConfig", "CONNECTABLE_TYPES", "LOAD_BALANCE_COMPRESSIONS", "LOAD_BALANCE_STRATEGIES",
]

#: Endpoint types a connection may join.
CONNECTABLE_TYPES = ("PROCESSOR", "FUNNEL", "INPUT_PORT", "OUTPUT_PORT")
#: How a connection spreads its FlowFiles over the cluster's nodes (NiFi's ``LoadBalanceStrategy``);
#: the first is the default. PARTITION_BY_ATTRIBUTE needs ``partitioningAttribute``.
LOAD_BALANCE_STRATEGIES = ("DO_NOT_LOAD_BALANCE", "ROUND_ROBIN", "SINGLE_NODE", "PARTITION_BY_ATTRIBUTE")
#: What a load-balanced connection compresses on the wire (NiFi's ``LoadBalanceCompression``).
LOAD_BALANCE_COMPRESSIONS = ("DO_NOT_COMPRESS", "COMPRESS_ATTRIBUTES_ONLY", "COMPRESS_ATTRIBUTES_AND_CONTENT")


@dataclass
class ComponentConfig:
    """What every component has: identity, the group it sits in, its JSON object and path."""

    identifier: str
    name: str = ""
    group_id: str = ""
    path: str = "$"
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class ProcessorConfig(ComponentConfig):
    """A processor as configured (NiFi's ``VersionedProcessor``)."""

    type: str = ""
    bundle: dict[str, str] | None = None
    properties: dict[str, str | None] = field(default_factory=dict)
    scheduling_strategy: str = "TIMER_DRIVEN"
    scheduling_period: str = "0 sec"
    execution_node: str = "ALL"
    concurrent_tasks: int = 1
    penalty_duration: str = "30 sec"
    yield_duration: str = "1 sec"
    bulletin_level: str = "WARN"
    run_duration_millis: int = 0
    auto_terminated: list[str] = field(default_factory=list)
    scheduled_state: str = "ENABLED"


@dataclass
class Endpoint:
    """One end of a connection."""

    id: str
    type: str
    group_id: str = ""
    name: str = ""


@dataclass
class ConnectionConfig(ComponentConfig):
    """A connection and its queue's settings (NiFi's ``VersionedConnection``)."""

    source: Endpoint = field(default_factory=lambda: Endpoint("", ""))
    destination: Endpoint = field(default_factory=lambda: Endpoint("", ""))
    selected_relationships: list[str] = field(default_factory=list)
    back_pressure_object_threshold: int = 10_000
    back_pressure_data_size_threshold: str = "1 GB"
    flowfile_expiration: str = "0 sec"
    prioritizers: list[str] = field(default_factory=list)
    load_balance_strategy: str = "DO_NOT_LOAD_BALANCE"
    partitioning_attribute: str = ""
    load_balance_compression: str = "DO_NOT_COMPRESS"


@dataclass
class FunnelConfig(ComponentConfig):
    """A funnel."""


@dataclass
class PortConfig(ComponentConfig):
    """An input or output port of a process group."""

    port_type: str = "INPUT_PORT"
    concurrent_tasks: int = 1
    scheduled_state: str = "ENABLED"


@dataclass
class ServiceConfig(ComponentConfig):
    """A controller service as configured (NiFi's ``VersionedControllerService``)."""

    type: str = ""
    bundle: dict[str, str] | None = None
    properties: dict[str, str | None] = field(default_factory=dict)
    scheduled_state: str = "DISABLED"


@dataclass
class ProcessGroupConfig(ComponentConfig):
    """A process group and everything in it."""

    processors: list[ProcessorConfig] = field(default_factory=list)
    connections: list[ConnectionConfig] = field(default_factory=list)
    funnels: list[FunnelConfig] = field(default_factory=list)
    input_ports: list[PortConfig] = field(default_factory=list)
    output_ports: list[PortConfig] = field(default_factory=list)
    process_groups: list[ProcessGroupConfig] = field(default_factory=list)
    controller_services: list[ServiceConfig] = field(default_factory=list)
    parameter_context_name: str | None = None
    default_back_pressure_object_threshold: int = 10_000
    default_back_pressure_data_size_threshold: str = "1 GB"
    default_flowfile_expiration: str = "0 sec"

    def walk(self) -> Iterator[ProcessGroupConfig]:
        """This group and every group inside it, depth first."""
        yield self
        for child in self.process_groups:
            yield from child.walk()


@dataclass
class Parameter:
    """One parameter of a parameter context."""

    name: str
    value: str | None = None
    sensitive: bool = False
    description: str = ""


@dataclass
class ParameterContextConfig:
    """A named set of parameters (``#{name}`` in property values), possibly inheriting others."""

    name: str
    parameters: dict[str, Parameter] = field(default_factory=dict)
    inherited: list[str] = field(default_factory=list)
    path: str = "$"
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class TenantConfig:
    """One entry of the flow's ``tenants`` section: the tenant's group and what an operator
    granted it (``engine.confinement`` confines the group's components to it).

    ``file_roots`` empty means ``<node files root>/<slug>``; ``listen_ports`` is an inclusive
    ``(low, high)`` range, or None when the tenant may not listen."""

    slug: str
    group: str
    pool: str = ""
    capabilities: tuple[str, ...] = ()
    file_roots: tuple[str, ...] = ()
    network_allow: tuple[str, ...] = ()
    listen_ports: tuple[int, int] | None = None
    path: str = "$"


@dataclass
class FlowDefinition:
    """A whole flow definition: the root group, the parameter contexts it uses and the tenants
    whose groups it holds (by slug)."""

    root: ProcessGroupConfig
    parameter_contexts: dict[str, ParameterContextConfig] = field(default_factory=dict)
    encoding_version: str = "1.0"
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    tenants: dict[str, TenantConfig] = field(default_factory=dict)

    def groups(self) -> Iterator[ProcessGroupConfig]:
        """Every process group, the root first."""
        return self.root.walk()

    def processors(self) -> Iterator[ProcessorConfig]:
        """Every processor of every group."""
        for group in self.groups():
            yield from group.processors

    def connections(self) -> Iterator[ConnectionConfig]:
        """Every connection of every group."""
        for group in self.groups():
            yield from group.connections

    def services(self) -> Iterator[ServiceConfig]:
        """Every controller service of every group."""
        for group in self.groups():
            yield from group.controller_services

    def is_empty(self) -> bool:
        """True when the flow holds no component at all."""
        return not any(
            g.processors or g.connections or g.funnels or g.input_ports or g.output_ports or g.controller_services
            or g.process_groups for g in self.groups()
        )
