"""Changing a running flow to another definition in place (a deployment on a node).

Components are matched by identifier. One whose definition is unchanged (run state and position
aside), whose properties resolve to the same values (parameters included), whose services are unchanged and whose connections are unchanged keeps
running untouched. The others are stopped — removed ones, changed ones, those whose parameters
changed value, those referencing a changed service, those of a tenant whose entry in the
``tenants`` section changed (its grants are checked again), and the ends of a connection that is
added, removed or changed — their running tasks getting the graceful shutdown period; changed services
are disabled. Then the flow's structure is rebuilt: removed components go, changed and added ones
are built anew, and every connection keeps its queue (and the FlowFiles in it) when its
identifier stays, or takes over an orphaned queue of the same identifier. Last, services are
enabled and components started or stopped as the new definition says.

A connection that holds FlowFiles may not disappear: such an update is refused before anything
is stopped.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from engine.flow.loader import FlowDefinitionError, FlowProblem
from engine.flow.model import FlowDefinition, ProcessGroupConfig
from engine.flow.parameters import ParameterResolver
from engine.flow.validation import check_flow, resolved_properties
from engine.runtime.connectable import ComponentStateError
from engine.runtime.funnels import FunnelNode, PortNode

if TYPE_CHECKING:
    from engine.runtime.controller import FlowController

__all__ = ["update_flow"]

_VOLATILE = ("scheduledState", "position")


def _settled(raw: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in raw.items() if k not in _VOLATILE}, sort_keys=True, default=str)


def _configs(flow: FlowDefinition, attribute: str) -> dict[str, tuple[Any, ProcessGroupConfig]]:
    return {config.identifier: (config, group) for group in flow.groups() for config in getattr(group, attribute)}


def _ports(flow: FlowDefinition) -> dict[str, tuple[Any, ProcessGroupConfig]]:
    return {**_configs(flow, "input_ports"), **_configs(flow, "output_ports")}


def _replaced(current: dict[str, Any], configs: dict[str, tuple[Any, ProcessGroupConfig]],
              resolver: ParameterResolver | None = None) -> set[str]:
    """Identifiers of ``current`` nodes that are removed or whose definition changed; with
    ``resolver`` (the new flow's parameters), also those whose properties resolve differently."""
    replaced = set()
    for identifier, node in current.items():
        entry = configs.get(identifier)
        if entry is None or _settled(node.config.raw) != _settled(entry[0].raw) or \
                node.config.group_id != entry[0].group_id:
            replaced.add(identifier)
        elif resolver is not None:
            config, group = entry
            cls = getattr(node, "processor_class", None) or getattr(node, "service_class", None)
            if resolved_properties(config, group, resolver, cls)[0] != node.properties:
                replaced.add(identifier)
    return replaced


def _regranted_groups(old: FlowDefinition, new: FlowDefinition) -> set[str]:
    """Groups (in either flow) of the tenants whose entry differs between ``old`` and ``new``."""
    changed = {slug for slug in old.tenants.keys() | new.tenants.keys() if old.tenants.get(slug) != new.tenants.get(slug)}
    groups: set[str] = set()
    for definition in (old, new):
        by_id = {group.identifier: group for group in definition.groups()}
        for slug in changed:
            tenant = definition.tenants.get(slug)
            if tenant is not None and tenant.group in by_id:
                groups.update(group.identifier for group in by_id[tenant.group].walk())
    return groups


def update_flow(controller: FlowController, flow: FlowDefinition) -> tuple[list[FlowProblem], list[str]]:
    """Make ``controller`` run ``flow`` (see the module docstring). Returns the problems that leave
    components invalid and the components that did not start, with why. Raises
    FlowDefinitionError when ``flow`` cannot run at all and ComponentStateError when a connection
    holding FlowFiles would disappear — in both cases the running flow is left as it was."""
    problems = check_flow(flow, controller.registry)
    if any(problem.fatal for problem in problems):
        raise FlowDefinitionError(problems)
    processors, services = _configs(flow, "processors"), _configs(flow, "controller_services")
    funnels, ports, connections = _configs(flow, "funnels"), _ports(flow), _configs(flow, "connections")
    holding = {identifier: connection.queue.size().total_count
               for identifier, connection in controller.connections.items()
               if identifier not in connections and connection.queue.size().total_count}
    if holding:
        listed = ", ".join(f"{identifier} ({count} FlowFile(s))" for identifier, count in sorted(holding.items()))
        raise ComponentStateError(f"the new flow has no place for connection(s) holding FlowFiles: {listed}")

    resolver = ParameterResolver(flow.parameter_contexts)
    regranted = _regranted_groups(controller.flow, flow)
    dropped_services = _replaced(controller.services, services, resolver)
    dropped_services |= {identifier for identifier, node in controller.services.items() if node.group_id in regranted}
    growing = True
    while growing:  # a service that references a replaced service is replaced with it
        growing = False
        for identifier, node in controller.services.items():
            if identifier not in dropped_services and dropped_services & node.referenced_services():
                dropped_services.add(identifier)
                growing = True
    dropped = _replaced(controller.processors, processors, resolver)
    dropped |= {identifier for identifier, node in controller.processors.items() if node.group_id in regranted}
    dropped |= {p.identifier for service in dropped_services for p in controller.referencing(service)}
    dropped |= _replaced(controller.funnels, funnels) | _replaced(controller.ports, ports)
    dropped_connections = _replaced(controller.connections, connections)
    for identifier, (config, _) in connections.items():
        if identifier in dropped_connections or identifier not in controller.connections:
            dropped |= {config.source.id, config.destination.id}
    for identifier in dropped_connections:
        connection = controller.connections[identifier]
        dropped |= {connection.source.identifier, connection.destination.identifier}
    stopping = [node for node in controller.connectables() if node.identifier in dropped]

    controller.stop_and_wait(stopping)
    for node in reversed(controller._services_in_dependency_order()):
        if node.identifier in dropped_services:
            node.disable()

    controller.flow = flow
    controller._index_groups(flow)
    controller.runtime.confinement.set_flow(flow)
    kept_queues = {identifier: connection.queue for identifier, connection in controller.connections.items()}
    controller.services = {identifier: controller.services[identifier]
                           if identifier in controller.services and identifier not in dropped_services
                           else controller._new_service(config, group, resolver)
                           for identifier, (config, group) in services.items()}
    controller.processors = {identifier: controller.processors[identifier]
                             if identifier in controller.processors and identifier not in dropped
                             else controller._new_processor(config, group, resolver)
                             for identifier, (config, group) in processors.items()}
    controller.funnels = {identifier: controller.funnels[identifier]
                          if identifier in controller.funnels and identifier not in dropped
                          else FunnelNode(config, controller.runtime)
                          for identifier, (config, _) in funnels.items()}
    controller.ports = {identifier: controller.ports[identifier]
                        if identifier in controller.ports and identifier not in dropped
                        else PortNode(config, controller.runtime)
                        for identifier, (config, _) in ports.items()}
    for table, configs in ((controller.services, services), (controller.processors, processors),
                           (controller.funnels, funnels), (controller.ports, ports)):
        for identifier, node in table.items():
            node.config = configs[identifier][0]  # run-state changes are saved into the new definition
    controller.connections = {
        identifier: controller._new_connection(
            config, kept_queues.get(identifier) or controller.orphans.pop(identifier, None))
        for identifier, (config, _) in connections.items()}
    controller._wire()
    return [problem for problem in problems if not problem.fatal], controller.start_components()

