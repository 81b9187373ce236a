"""Checking a flow definition against the component registry: every problem, with its JSON path.

Fatal problems make the flow unusable as a whole (a connection to nothing, an identifier used
twice, a relationship the source does not have); the others make one component invalid, and
it will not start until they are fixed (a missing required property, a relationship neither
connected nor auto-terminated, an unknown processor type).
"""

from __future__ import annotations

from typing import Any, Iterator

from engine.confinement import capability_problems
from engine.components import (
    ComponentRegistry,
    InputRequirement,
    ServiceReference,
    UnknownComponentTypeError,
    default_registry,
    validate_properties,
)
from engine.flow.loader import FlowDefinitionError, FlowProblem, json_path, load_flow
from engine.flow.model import (
    CONNECTABLE_TYPES,
    ComponentConfig,
    FlowDefinition,
    ProcessGroupConfig,
    ProcessorConfig,
    ServiceConfig,
    TenantConfig,
)
from engine.flow.parameters import ParameterError, ParameterResolver, references, substitute
from engine.queue import UnknownPrioritizerError, resolve_prioritizer
from engine.cron import CronSchedule
from engine.units import parse_data_size, parse_duration

__all__ = ["FlowIndex", "SCHEDULE_FIELDS", "check_flow", "load_and_check", "resolved_properties", "resolved_schedule"]

#: A processor's scheduling settings that may hold parameter references: NiFi's field name, the
#: ``ProcessorConfig`` attribute.
SCHEDULE_FIELDS = (("schedulingPeriod", "scheduling_period"), ("penaltyDuration", "penalty_duration"),
                   ("yieldDuration", "yield_duration"))


class FlowIndex:
    """Components of a flow by identifier, with the group each sits in."""

    def __init__(self, flow: FlowDefinition) -> None:
        self.flow = flow
        self.groups: dict[str, ProcessGroupConfig] = {}
        self.parents: dict[str, str | None] = {}
        self.components: dict[str, tuple[str, ComponentConfig]] = {}
        self.duplicates: list[tuple[ComponentConfig, ComponentConfig]] = []
        for group in flow.groups():
            self.groups[group.identifier] = group
            for child in group.process_groups:
                self.parents[child.identifier] = group.identifier
            self.parents.setdefault(group.identifier, None)
            self._add("PROCESS_GROUP", group)
            for kind, items in (("PROCESSOR", group.processors), ("CONNECTION", group.connections),
                                ("FUNNEL", group.funnels), ("INPUT_PORT", group.input_ports),
                                ("OUTPUT_PORT", group.output_ports), ("CONTROLLER_SERVICE", group.controller_services)):
                for item in items:
                    self._add(kind, item)

    def _add(self, kind: str, config: ComponentConfig) -> None:
        existing = self.components.get(config.identifier)
        if existing is not None and existing[1] is not config:
            self.duplicates.append((existing[1], config))
            return
        self.components[config.identifier] = (kind, config)

    def get(self, identifier: str) -> tuple[str, ComponentConfig] | None:
        """(kind, config) of the component with ``identifier``."""
        return self.components.get(identifier)

    def ancestors(self, group_id: str) -> Iterator[str]:
        """``group_id`` and every group above it."""
        current: str | None = group_id
        while current is not None:
            yield current
            current = self.parents.get(current)

    def group_of(self, config: ComponentConfig) -> ProcessGroupConfig:
        """The group a component sits in."""
        return self.groups[config.group_id]


class FlowServices:
    """Service references as the flow configures them (for validation before anything runs)."""

    def __init__(self, index: FlowIndex, registry: ComponentRegistry, group_id: str) -> None:
        self._index = index
        self._registry = registry
        self._scope = set(index.ancestors(group_id))

    def service_reference(self, identifier: str) -> ServiceReference | None:
        found = self._index.get(identifier)
        if found is None or found[0] != "CONTROLLER_SERVICE":
            return None
        config: ServiceConfig = found[1]  # type: ignore[assignment]
        if config.group_id not in self._scope:
            return None
        try:
            cls = self._registry.service(config.type)
        except UnknownComponentTypeError:
            return ServiceReference(config.identifier, config.name, config.type, False, ())
        return ServiceReference(config.identifier, config.name, cls.type_name, config.scheduled_state == "ENABLED",
                                cls.provides)


def resolved_properties(
    config: ProcessorConfig | ServiceConfig, group: ProcessGroupConfig, resolver: ParameterResolver,
    component_type: Any = None,
) -> tuple[dict[str, str | None], list[tuple[str, str]]]:
    """The properties of a component with former names migrated (when its type is known) and
    parameters substituted, and (property name, problem) for each reference that failed: one
    naming no parameter, or (when the type is known) a sensitive parameter from a non-sensitive
    property or the reverse, which NiFi refuses too. A property with a problem is left unset, so
    a sensitive value never reaches a property that would show it."""
    properties: dict[str, str | None] = {}
    problems = []
    context = group.parameter_context_name
    configured = component_type.migrate_properties(config.properties) if component_type else config.properties
    for name, value in configured.items():
        mismatch = _sensitivity_mismatch(component_type.is_sensitive(name), value, context, resolver) \
            if component_type else None
        if mismatch:
            problems.append((name, mismatch))
            properties[name] = None
            continue
        try:
            properties[name] = substitute(value, context, resolver)
        except ParameterError as error:
            problems.append((name, str(error)))
            properties[name] = None
    return properties, problems


def _sensitivity_mismatch(sensitive: bool, value: str | None, context: str | None,
                          resolver: ParameterResolver) -> str | None:
    """Why ``value`` may not be used in a (non-)sensitive property, or None."""
    for reference in references(value or ""):
        parameter = resolver.find(context, reference)
        if parameter is not None and parameter.sensitive != sensitive:
            kind = "sensitive" if parameter.sensitive else "non-sensitive"
            return (f"references {kind} parameter {reference!r} from a {'sensitive' if sensitive else 'non-sensitive'}"
                    " property")
    return None


def resolved_schedule(config: ProcessorConfig, group: ProcessGroupConfig, resolver: ParameterResolver
                      ) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """A processor's scheduling period, penalty and yield durations (by ``SCHEDULE_FIELDS``
    attribute) with parameters substituted, and (NiFi field name, problem) for each reference
    that names no parameter or a sensitive one (NiFi refuses sensitive parameters there); a
    field with a problem keeps its text as written."""
    values: dict[str, str] = {}
    problems = []
    for field, attribute in SCHEDULE_FIELDS:
        value = getattr(config, attribute)
        values[attribute] = value
        if not value or "#" not in value:
            continue
        sensitive = [name for name in references(value)
                     if (parameter := resolver.find(group.parameter_context_name, name)) is not None
                     and parameter.sensitive]
        if sensitive:
            problems.append((field, f"references sensitive parameter {sensitive[0]!r}; a processor's {field} "
                                    "cannot reference sensitive parameters"))
            continue
        try:
            values[attribute] = substitute(value, group.parameter_context_name, resolver) or ""
        except ParameterError as error:
            problems.append((field, str(error)))
    return values, problems


def check_flow(flow: FlowDefinition, registry: ComponentRegistry | None = None, *,
               node_local: bool = True) -> list[FlowProblem]:
    """Every problem of ``flow`` (see the module docstring). ``node_local=False`` skips the checks
    that look at the node's own files, for validation away from the node."""
    registry = registry or default_registry()
    index = FlowIndex(flow)
    resolver = ParameterResolver(flow.parameter_contexts)
    problems: list[FlowProblem] = []
    problems += _tenant_problems(flow)
    for first, second in index.duplicates:
        problems.append(FlowProblem(json_path(second.path, "identifier"),
                                    f"identifier {second.identifier!r} is already used at {first.path}"))
    for context in flow.parameter_contexts.values():
        for position, name in enumerate(context.inherited):
            if name not in flow.parameter_contexts:
                problems.append(FlowProblem(json_path(context.path, "inheritedParameterContexts", position),
                                            f"inherits parameter context {name!r}, which does not exist"))
    outgoing: dict[str, set[str]] = {}
    incoming: set[str] = set()
    for group in flow.groups():
        if group.parameter_context_name and group.parameter_context_name not in flow.parameter_contexts:
            problems.append(FlowProblem(json_path(group.path, "parameterContextName"),
                                        f"parameter context {group.parameter_context_name!r} does not exist"))
        for connection in group.connections:
            problems += _check_connection(connection, index, registry, resolver)
            outgoing.setdefault(connection.source.id, set()).update(connection.selected_relationships)
            incoming.add(connection.destination.id)
        for service in group.controller_services:
            problems += _check_service(service, index, registry, resolver, node_local)
        for processor in group.processors:
            problems += _check_processor(processor, index, registry, resolver, outgoing, incoming, node_local)
    tenants = {tenant.group: tenant for tenant in flow.tenants.values()}
    for kind, find in (("PROCESSOR", registry.processor), ("CONTROLLER_SERVICE", registry.service)):
        for config in (flow.processors() if kind == "PROCESSOR" else flow.services()):
            problems += _capability_problems(config, find, index, tenants)
    return problems


def _capability_problems(config: ComponentConfig, find: Any, index: FlowIndex,
                         tenants: dict[str, TenantConfig]) -> list[FlowProblem]:
    """A restricted component in a tenant's group whose tenant lacks a capability it needs."""
    tenant = next((tenants[group] for group in index.ancestors(config.group_id) if group in tenants), None)
    try:
        cls = find(config.type)
    except UnknownComponentTypeError:
        return []
    return [FlowProblem(config.path, f"{config.name or config.identifier!r}: {message}", fatal=False)
            for message in capability_problems(cls, tenant)]


def load_and_check(source: Any, registry: ComponentRegistry | None = None) -> tuple[FlowDefinition, list[FlowProblem]]:
    """Load a flow definition and check it: raises FlowDefinitionError when a problem is fatal,
    else returns the flow and its component problems."""
    flow = load_flow(source)
    problems = check_flow(flow, registry)
    if any(problem.fatal for problem in problems):
        raise FlowDefinitionError(problems)
    return flow, problems


def _check_processor(
    config: ProcessorConfig, index: FlowIndex, registry: ComponentRegistry, resolver: ParameterResolver,
    outgoing: dict[str, set[str]], incoming: set[str], node_local: bool = True,
) -> list[FlowProblem]:
    problems = []
    try:
        cls = registry.processor(config.type)
    except UnknownComponentTypeError:
        return [FlowProblem(json_path(config.path, "type"),
                            f"unknown processor type {config.type!r}: the processor cannot run on this node",
                            fatal=False)]
    group = index.group_of(config)
    schedule, schedule_problems = resolved_schedule(config, group, resolver)
    problems += [FlowProblem(json_path(config.path, field), message, fatal=False)
                 for field, message in schedule_problems]
    failed = {field for field, _ in schedule_problems}
    if config.scheduling_strategy == "CRON_DRIVEN" and "schedulingPeriod" not in failed:
        try:
            CronSchedule(schedule["scheduling_period"])
        except ValueError as error:
            problems.append(FlowProblem(json_path(config.path, "schedulingPeriod"), str(error), fatal=False))
    for field, attribute in SCHEDULE_FIELDS:
        value = schedule[attribute]
        if field in failed or not value or (field == "schedulingPeriod" and config.scheduling_strategy != "TIMER_DRIVEN"):
            continue
        try:
            parse_duration(value)
        except ValueError as error:
            problems.append(FlowProblem(json_path(config.path, field), str(error), fatal=False))
    properties, parameter_problems = resolved_properties(config, group, resolver, cls)
    problems += _parameter_flow_problems(config, parameter_problems)
    services = FlowServices(index, registry, group.identifier)
    for problem in validate_properties(cls, properties, services, node_local=node_local):
        problems.append(FlowProblem(json_path(config.path, "properties", problem.subject) if problem.subject
                                    else config.path, str(problem), fatal=False))
    relationships = {r.name for r in cls.relationships_for(properties)}
    for position, name in enumerate(config.auto_terminated):
        if name not in relationships:
            problems.append(FlowProblem(json_path(config.path, "autoTerminatedRelationships", position),
                                        f"{cls.type_name} has no relationship {name!r}", fatal=False))
    connected = outgoing.get(config.identifier, set())
    for name in sorted(relationships - connected - set(config.auto_terminated)):
        problems.append(FlowProblem(config.path, f"relationship {name!r} is neither connected nor auto-terminated",
                                    fatal=False))
    has_input = config.identifier in incoming
    if cls.input_requirement is InputRequirement.REQUIRED and not has_input:
        problems.append(FlowProblem(config.path, f"{cls.type_name} needs an incoming connection", fatal=False))
    if cls.input_requirement is InputRequirement.FORBIDDEN and has_input:
        problems.append(FlowProblem(config.path, f"{cls.type_name} does not accept incoming connections",
                                    fatal=False))
    return problems


def _parameter_flow_problems(config: ComponentConfig, problems: list[tuple[str, str]]) -> list[FlowProblem]:
    return [FlowProblem(json_path(config.path, "properties", name), message, fatal=False) for name, message in problems]




def _check_service(config: ServiceConfig, index: FlowIndex, registry: ComponentRegistry,
                   resolver: ParameterResolver, node_local: bool = True) -> list[FlowProblem]:
    try:
        cls = registry.service(config.type)
    except UnknownComponentTypeError:
        return [FlowProblem(json_path(config.path, "type"),
                            f"unknown controller service type {config.type!r}: the service cannot run on this node",
                            fatal=False)]
    group = index.group_of(config)
    properties, parameter_problems = resolved_properties(config, group, resolver, cls)
    problems = _parameter_flow_problems(config, parameter_problems)
    services = FlowServices(index, registry, group.identifier)
    for problem in validate_properties(cls, properties, services, node_local=node_local):
        problems.append(FlowProblem(json_path(config.path, "properties", problem.subject) if problem.subject
                                    else config.path, str(problem), fatal=False))
    return problems


def _check_connection(connection, index: FlowIndex, registry: ComponentRegistry,
                      resolver: ParameterResolver) -> list[FlowProblem]:
    problems = []
    for end in ("source", "destination"):
        endpoint = getattr(connection, end)
        found = index.get(endpoint.id)
        if endpoint.type not in CONNECTABLE_TYPES:
            problems.append(FlowProblem(json_path(connection.path, end, "type"),
                                        f"{endpoint.type} endpoints (site-to-site) are not supported"))
        elif found is None:
            problems.append(FlowProblem(json_path(connection.path, end, "id"),
                                        f"connects {'from' if end == 'source' else 'to'} nothing: no component "
                                        f"has identifier {endpoint.id!r}"))
        elif found[0] != endpoint.type:
            problems.append(FlowProblem(json_path(connection.path, end, "type"),
                                        f"{endpoint.id!r} is a {found[0]}, not a {endpoint.type}"))
    source = index.get(connection.source.id)
    if source is not None and source[0] == "PROCESSOR":
        processor: ProcessorConfig = source[1]  # type: ignore[assignment]
        if not connection.selected_relationships:
            problems.append(FlowProblem(json_path(connection.path, "selectedRelationships"),
                                        "a connection from a processor must select at least one relationship"))
        try:
            cls = registry.processor(processor.type)
        except UnknownComponentTypeError:
            cls = None  # the processor's own problem says so; its relationships are unknown
        if cls is not None:
            properties, _ = resolved_properties(processor, index.group_of(processor), resolver, cls)
            known = {r.name for r in cls.relationships_for(properties)}
            for position, name in enumerate(connection.selected_relationships):
                if name not in known:
                    problems.append(FlowProblem(
                        json_path(connection.path, "selectedRelationships", position),
                        f"{processor.name!r} ({cls.type_name}) has no relationship {name!r}"
                        f" (it has: {', '.join(sorted(known)) or 'none'})"))
    for position, name in enumerate(connection.prioritizers):
        try:
            resolve_prioritizer(name)
        except UnknownPrioritizerError as error:
            problems.append(FlowProblem(json_path(connection.path, "prioritizers", position), str(error)))
    for field, value, parse in (("backPressureDataSizeThreshold", connection.back_pressure_data_size_threshold,
                                 parse_data_size),
                                ("flowFileExpiration", connection.flowfile_expiration, parse_duration)):
        try:
            parse(value)
        except ValueError as error:
            problems.append(FlowProblem(json_path(connection.path, field), str(error)))
    return problems


def _tenant_problems(flow: FlowDefinition) -> list[FlowProblem]:
    """Fatal problems of the tenants against the flow: a group that is not a child of the root
    group, or one owned by two tenants."""
    children = {group.identifier for group in flow.root.process_groups}
    owners: dict[str, str] = {}
    problems = []
    for slug, tenant in flow.tenants.items():
        if tenant.group not in children:
            problems.append(FlowProblem(json_path(tenant.path, "group"), f"the group {tenant.group!r} of "
                                        f"tenant {slug!r} is not a process group directly under the root group"))
        elif tenant.group in owners:
            problems.append(FlowProblem(json_path(tenant.path, "group"), f"group {tenant.group!r} already belongs "
                                        f"to tenant {owners[tenant.group]!r}"))
        else:
            owners[tenant.group] = slug
    return problems
