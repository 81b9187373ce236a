"""What changing a running flow to another definition takes: a pure computation, no I/O.

Components are matched by identifier. One whose definition is unchanged (run state and position
aside), whose properties resolve to the same values (parameters included), whose services are
unchanged and whose connections are unchanged is kept, running untouched. The others go —
removed ones, changed ones, those whose parameters changed value, those referencing a changed
service, those of a tenant whose entry in the ``tenants`` section changed (its grants are
checked again), and the ends of a connection that is added, removed or changed: they are stopped
(services disabled) and, when the new flow still has them, built anew. A service referencing a
service that goes goes with it.

A connection that holds FlowFiles may not disappear: planning such an update raises
``UpdateRefused``.

The running flow is described by ``RunningFlow`` (``engine.runtime.graph.FlowGraph.describe``
makes one), so the planner can be tested without building anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from engine.flow.model import FlowDefinition, ProcessGroupConfig
from engine.flow.parameters import ParameterResolver, references
from engine.flow.validation import resolved_properties, resolved_schedule
from engine.runtime.connectable import ComponentStateError

__all__ = ["RunningComponent", "RunningConnection", "RunningFlow", "UpdatePlan", "UpdateRefused", "plan_update"]

_VOLATILE = ("scheduledState", "position")

#: Flow-definition list of each kind of component, by the kind's name in ``RunningComponent``.
_KINDS = {"service": ("controller_services",), "processor": ("processors",), "funnel": ("funnels",),
          "port": ("input_ports", "output_ports")}


class UpdateRefused(ComponentStateError):
    """The new flow cannot replace the running one (it has no place for queued FlowFiles)."""


@dataclass(frozen=True)
class RunningComponent:
    """What planning needs of a built service, processor, funnel or port.

    ``properties`` (resolved, parameters substituted) and ``component_class`` are those of
    services and processors; ``services`` are the services its properties reference;
    ``schedule`` a processor's resolved scheduling (``resolved_schedule``); ``parameters`` what
    ``#{name}`` inside its expressions reads (references there are not substituted in ``properties``).
    """

    identifier: str
    kind: str
    raw: Mapping[str, Any]
    group_id: str
    properties: Mapping[str, str | None] | None = None
    component_class: Any = None
    services: frozenset[str] = frozenset()
    schedule: Mapping[str, str] | None = None
    parameters: Mapping[str, str] | None = None


@dataclass(frozen=True)
class RunningConnection:
    """What planning needs of a built connection: its definition, ends and queued FlowFiles."""

    identifier: str
    raw: Mapping[str, Any]
    group_id: str
    source: str
    destination: str
    queued: int = 0


@dataclass(frozen=True)
class RunningFlow:
    """The running flow as planning sees it: its definition, components (services included) and
    connections, by identifier."""

    flow: FlowDefinition | None
    components: Mapping[str, RunningComponent]
    connections: Mapping[str, RunningConnection]


@dataclass(frozen=True)
class UpdatePlan:
    """What to do to run a new definition.

    ``stop``: processors, funnels and ports to stop (they go or are rebuilt); ``disable``:
    services to disable (likewise); ``keep``: components and services reused as they are;
    ``build``: components and services of the new flow to build anew.
    """

    stop: frozenset[str]
    disable: frozenset[str]
    keep: frozenset[str]
    build: frozenset[str]


@dataclass(frozen=True)
class _Wanted:
    kind: str
    config: Any
    group: ProcessGroupConfig


def plan_update(running: RunningFlow, flow: FlowDefinition) -> UpdatePlan:
    """The plan that makes ``running`` run ``flow`` (see the module docstring); raises
    UpdateRefused when a connection holding FlowFiles would disappear."""
    connections = {config.identifier: config for group in flow.groups() for config in group.connections}
    _refuse_lost_flowfiles(running, connections)
    wanted = _wanted(flow)
    resolver = ParameterResolver(flow.parameter_contexts)
    regranted = _regranted_groups(running.flow, flow) if running.flow is not None else set()
    disable = _closure(running, {i for i, c in running.components.items()
                                 if c.kind == "service" and _goes(c, wanted, resolver, regranted)})
    dropped = _connection_ends(running, connections) | {
        i for i, c in running.components.items() if _component_goes(c, disable, wanted, resolver, regranted)}
    keep = frozenset((running.components.keys() & wanted.keys()) - dropped - disable)
    return UpdatePlan(stop=frozenset(dropped & running.components.keys()), disable=frozenset(disable), keep=keep,
                      build=frozenset(wanted.keys() - keep))

def _refuse_lost_flowfiles(running: RunningFlow, connections: Mapping[str, Any]) -> None:
    holding = {i: c.queued for i, c in running.connections.items() if i not in connections and c.queued}
    if holding:
        listed = ", ".join(f"{identifier} ({count} FlowFile(s))" for identifier, count in sorted(holding.items()))
        raise UpdateRefused(f"the new flow has no place for connection(s) holding FlowFiles: {listed}")


def _wanted(flow: FlowDefinition) -> dict[str, _Wanted]:
    return {config.identifier: _Wanted(kind, config, group)
            for group in flow.groups() for kind, lists in _KINDS.items()
            for attribute in lists for config in getattr(group, attribute)}


def _settled(raw: Mapping[str, Any]) -> str:
    return json.dumps({k: v for k, v in raw.items() if k not in _VOLATILE}, sort_keys=True, default=str)


def _changed(raw: Mapping[str, Any], group_id: str, config: Any) -> bool:
    return _settled(raw) != _settled(config.raw) or group_id != config.group_id


def _goes(component: RunningComponent, wanted: Mapping[str, _Wanted], resolver: ParameterResolver,
          regranted: set[str]) -> bool:
    """True when ``component`` is removed, changed, resolves differently or is regranted."""
    entry = wanted.get(component.identifier)
    if entry is None or entry.kind != component.kind or _changed(component.raw, component.group_id, entry.config):
        return True
    if component.properties is None:
        return False
    if component.group_id in regranted:
        return True
    if component.schedule is not None and resolved_schedule(entry.config, entry.group, resolver)[0] \
            != component.schedule:
        return True
    return resolved_properties(entry.config, entry.group, resolver, component.component_class)[0] \
        != component.properties or _expression_parameters_changed(component, entry.group, resolver)


def _expression_parameters_changed(component: RunningComponent, group: ProcessGroupConfig,
                                   resolver: ParameterResolver) -> bool:
    """True when a parameter that ``component``'s expressions read has another value now."""
    if component.parameters is None or component.properties is None:
        return False
    for value in component.properties.values():
        for name in references(value or ""):
            parameter = resolver.find(group.parameter_context_name, name)
            if component.parameters.get(name) != (None if parameter is None else parameter.value or ""):
                return True
    return False


def _component_goes(component: RunningComponent, disabled: set[str], wanted: Mapping[str, _Wanted],
                    resolver: ParameterResolver, regranted: set[str]) -> bool:
    """True when a processor, funnel or port goes: it goes itself or a service it uses does."""
    return component.kind != "service" and bool(component.services & disabled
                                                or _goes(component, wanted, resolver, regranted))


def _closure(running: RunningFlow, going: set[str]) -> set[str]:
    """``going`` (services) and every service referencing one of them, directly or not."""
    services = {i: c for i, c in running.components.items() if c.kind == "service"}
    growing = True
    while growing:
        growing = False
        for identifier, service in services.items():
            if identifier not in going and service.services & going:
                going.add(identifier)
                growing = True
    return going


def _connection_ends(running: RunningFlow, connections: Mapping[str, Any]) -> set[str]:
    """Both ends of every connection added, removed or changed."""
    ends = set()
    for identifier, connection in running.connections.items():
        config = connections.get(identifier)
        if config is None or _changed(connection.raw, connection.group_id, config):
            ends |= {connection.source, connection.destination}
            if config is not None:
                ends |= {config.source.id, config.destination.id}
    for identifier, config in connections.items():
        if identifier not in running.connections:
            ends |= {config.source.id, config.destination.id}
    return ends


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
