"""The component graph of a flow definition: services, processors, funnels, ports and the
connections between them, each connection over a queue, everything wired.

``GraphBuilder`` builds it, for loading a flow and for updating a running one alike: it reuses
the nodes it is given (kept running by an update; they take their new definition, whose run
states may differ) and hands each connection's queue factory the queue that connection (or an
orphaned queue of its identifier) had, if any. The factory may return that queue, updated, or
another one that took its FlowFiles over: the graph never assumes a queue survives. For a
connection an update leaves unchanged it should return the queue it was given, as the running
ends of that connection may hold FlowFiles taken from it; the ends of a changed connection are
stopped before the graph is built.

A queue factory is any callable ``(ConnectionConfig, queue | None) -> queue``; the queue is
``engine.queue.FlowFileQueue`` or anything with its interface. ``FlowFileQueues`` is the
default one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Union

from engine.components import ComponentRegistry, ServiceReference, UnknownComponentTypeError
from engine.flow.model import ConnectionConfig, FlowDefinition, ProcessGroupConfig
from engine.flow.parameters import ParameterResolver
from engine.queue import FlowFileQueue, QueueSettings
from engine.runtime.config import RuntimeConfig
from engine.runtime.connectable import Connectable, Connection, Runtime
from engine.runtime.funnels import FunnelNode, PortNode
from engine.runtime.planner import RunningComponent, RunningConnection, RunningFlow
from engine.runtime.processor_node import ProcessorNode
from engine.runtime.service_node import ServiceNode
from engine.units import parse_data_size, parse_duration

__all__ = ["FlowFileQueues", "FlowGraph", "GraphBuilder", "QueueFactory", "queue_settings"]

#: Makes the queue of a connection, given the queue it had (None for a new connection).
QueueFactory = Callable[[ConnectionConfig, Any], Any]

Node = Union[ServiceNode, ProcessorNode, FunnelNode, PortNode]


def queue_settings(config: ConnectionConfig, runtime_config: RuntimeConfig) -> QueueSettings:
    """The settings of a connection's queue: its back pressure, expiration and prioritizers, and
    the node's swap threshold and batch."""
    return QueueSettings(
        back_pressure_object_threshold=config.back_pressure_object_threshold,
        back_pressure_data_size_threshold=parse_data_size(config.back_pressure_data_size_threshold),
        expiration=parse_duration(config.flowfile_expiration),
        prioritizers=tuple(config.prioritizers),
        swap_threshold=runtime_config.swap_threshold,
        swap_batch_size=min(runtime_config.swap_batch_size, runtime_config.swap_threshold),
    )


class FlowFileQueues:
    """The default queue factory: a ``FlowFileQueue`` per connection; a connection that had one
    keeps it, with its settings updated."""

    def __init__(self, swap: Any, clock: Callable[[], float], runtime_config: RuntimeConfig) -> None:
        self._swap = swap
        self._clock = clock
        self._config = runtime_config

    def __call__(self, config: ConnectionConfig, existing: FlowFileQueue | None) -> FlowFileQueue:
        settings = queue_settings(config, self._config)
        if existing is None:
            return FlowFileQueue(config.identifier, settings, self._swap, clock=self._clock)
        existing.update_settings(settings)
        return existing


@dataclass
class FlowGraph:
    """A flow definition's built components and connections, by identifier, and its groups."""

    flow: FlowDefinition | None = None
    groups: dict[str, ProcessGroupConfig] = field(default_factory=dict)
    parents: dict[str, str | None] = field(default_factory=dict)
    services: dict[str, ServiceNode] = field(default_factory=dict)
    processors: dict[str, ProcessorNode] = field(default_factory=dict)
    funnels: dict[str, FunnelNode] = field(default_factory=dict)
    ports: dict[str, PortNode] = field(default_factory=dict)
    connections: dict[str, Connection] = field(default_factory=dict)

    def connectables(self) -> list[Connectable]:
        """Every processor, funnel and port."""
        return [*self.processors.values(), *self.funnels.values(), *self.ports.values()]

    def connectable(self, identifier: str) -> Connectable | None:
        """The processor, funnel or port with ``identifier``, if any."""
        for table in (self.processors, self.funnels, self.ports):
            if identifier in table:
                return table[identifier]
        return None

    def ancestors(self, group_id: str) -> list[str]:
        """``group_id`` and the groups above it."""
        chain: list[str] = []
        current: str | None = group_id
        while current is not None and current not in chain:
            chain.append(current)
            current = self.parents.get(current)
        return chain

    def nodes(self) -> dict[str, Node]:
        """Every service, processor, funnel and port, by identifier."""
        return {**self.services, **self.processors, **self.funnels, **self.ports}

    def queues(self) -> dict[str, Any]:
        """The queue of every connection, by identifier."""
        return {identifier: connection.queue for identifier, connection in self.connections.items()}

    def describe(self) -> RunningFlow:
        """The graph as the update planner sees it."""
        components = {}
        for kind, table in (("service", self.services), ("processor", self.processors)):
            for identifier, node in table.items():
                cls = node.service_class if kind == "service" else node.processor_class
                components[identifier] = RunningComponent(identifier, kind, node.config.raw, node.config.group_id,
                                                          node.properties, cls, frozenset(node.referenced_services()),
                                                          getattr(node, "schedule", None), node.parameters)
        for kind, table in (("funnel", self.funnels), ("port", self.ports)):
            for identifier, node in table.items():
                components[identifier] = RunningComponent(identifier, kind, node.config.raw, node.config.group_id)
        connections = {identifier: RunningConnection(identifier, c.config.raw, c.config.group_id,
                                                     c.source.identifier, c.destination.identifier,
                                                     c.queue.size().total_count)
                       for identifier, c in self.connections.items()}
        return RunningFlow(self.flow, components, connections)


class _ScopedServices:
    """The services a component of ``group_id`` may reference: those of its group and above, in
    the graph running when it looks (the one it was built for, once installed)."""

    def __init__(self, running: Callable[[], FlowGraph], group_id: str) -> None:
        self._running = running
        self._group_id = group_id

    def service_reference(self, identifier: str) -> ServiceReference | None:
        graph = self._running()
        node = graph.services.get(identifier)
        if node is None or node.group_id not in graph.ancestors(self._group_id):
            return None
        return node.reference()


class GraphBuilder:
    """Builds the ``FlowGraph`` of a flow definition (see the module docstring).

    ``running()`` is the graph the node runs, where components look their services up;
    ``state_dir`` holds each service's own directory.
    """

    def __init__(self, registry: ComponentRegistry, runtime: Runtime, running: Callable[[], FlowGraph],
                 state_dir: Path, queue_factory: QueueFactory) -> None:
        self._registry = registry
        self._runtime = runtime
        self._running = running
        self._state_dir = state_dir
        self._queue_factory = queue_factory

    def build(self, flow: FlowDefinition, reuse: Mapping[str, Node] | None = None,
              queues: Mapping[str, Any] | None = None) -> FlowGraph:
        """The graph of ``flow``: nodes of ``reuse`` (by identifier) are taken over, the others
        built; each connection's queue comes from the queue factory, given the queue of
        ``queues`` of its identifier, if any."""
        reuse = reuse or {}
        graph = FlowGraph(flow)
        self._index_groups(graph, flow)
        resolver = ParameterResolver(flow.parameter_contexts)
        makers = ((graph.services, lambda group: group.controller_services, self._service),
                  (graph.processors, lambda group: group.processors, self._processor),
                  (graph.funnels, lambda group: group.funnels, lambda config, *_: FunnelNode(config, self._runtime)),
                  (graph.ports, lambda group: group.input_ports + group.output_ports,
                   lambda config, *_: PortNode(config, self._runtime)))
        for group in flow.groups():
            for table, configs, make in makers:
                for config in configs(group):
                    table[config.identifier] = self._take(reuse, config) or make(config, group, resolver)
        self._connect(graph, flow, queues or {})
        return graph

    @staticmethod
    def _index_groups(graph: FlowGraph, flow: FlowDefinition) -> None:
        for group in flow.groups():
            graph.groups[group.identifier] = group
            graph.parents.setdefault(group.identifier, None)
            for child in group.process_groups:
                graph.parents[child.identifier] = group.identifier

    @staticmethod
    def _take(reuse: Mapping[str, Node], config: Any) -> Node | None:
        node = reuse.get(config.identifier)
        if node is not None:
            node.config = config  # run-state changes are saved into the new definition
        return node

    def _service(self, config, group: ProcessGroupConfig, resolver: ParameterResolver) -> ServiceNode:
        cls = _lookup(self._registry.service, config.type)
        scope = _ScopedServices(self._running, group.identifier)
        return ServiceNode(config, cls, self._runtime, scope, group, resolver, self._state_dir / config.identifier)

    def _processor(self, config, group: ProcessGroupConfig, resolver: ParameterResolver) -> ProcessorNode:
        cls = _lookup(self._registry.processor, config.type)
        scope = _ScopedServices(self._running, group.identifier)
        return ProcessorNode(config, cls, self._runtime, scope, group, resolver)

    def _connect(self, graph: FlowGraph, flow: FlowDefinition, queues: Mapping[str, Any]) -> None:
        """Make every connection and give every processor, funnel and port its connections."""
        for group in flow.groups():
            for config in group.connections:
                queue = self._queue_factory(config, queues.get(config.identifier))
                graph.connections[config.identifier] = Connection(
                    config, graph.connectable(config.source.id), graph.connectable(config.destination.id), queue)
        incoming: dict[str, list[Connection]] = {}
        outgoing: dict[str, list[Connection]] = {}
        for connection in graph.connections.values():
            outgoing.setdefault(connection.source.identifier, []).append(connection)
            incoming.setdefault(connection.destination.identifier, []).append(connection)
        for node in graph.connectables():
            node.incoming = incoming.get(node.identifier, [])
            node.outgoing = outgoing.get(node.identifier, [])
            node.rewire()


def _lookup(find: Callable[[str], type], name: str) -> type | None:
    try:
        return find(name)
    except UnknownComponentTypeError:
        return None

