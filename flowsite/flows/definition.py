"""Process groups to and from the engine's flow definition (NiFi's flow-definition JSON).

``export_group`` writes a group and everything in it as a flow definition. Two identities:

- ``VERSIONED`` (downloads and committed versions): each component's ``identifier`` is its
  versioned id, sensitive values are left out (parameter references excepted), and the output
  is deterministic, so export → import → export gives the same document;
- ``INSTANCE`` (the engine: validation, deployment): identifiers are instance ids, unique across
  a tenant, and sensitive values are decrypted.

``import_group`` creates a group from a definition; ``replace_contents`` makes an existing
group match one (revert to a version), keeping components whose versioned id is unchanged —
and their sensitive values where the definition leaves them out. The engine's loader checks the
document first: a fatal problem raises ``FlowDefinitionError`` with every JSON path at fault.
"""

from __future__ import annotations

import enum
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from engine.components import UnknownComponentTypeError, default_registry
from engine.flow.loader import FlowDefinitionError, FlowProblem, load_flow
from engine.flow.model import (
    ConnectionConfig,
    FlowDefinition,
    FunnelConfig,
    PortConfig,
    ProcessGroupConfig,
    ProcessorConfig,
    ServiceConfig,
)
from engine.flow.validation import check_flow
from flowsite.flows.models import (
    Component,
    Connection,
    ControllerService,
    Funnel,
    Kind,
    Label,
    ParameterContext,
    Port,
    ProcessGroup,
    Processor,
)
from flowsite.flows.secrets import Binding, current_key
from flowsite.flows.storable import storage_problems

__all__ = ["Identity", "delete_subtree", "export_group", "import_group", "replace_contents", "sensitive_names",
           "subtree_ids",
           "FlowDefinitionError", "FlowProblem"]

ENCODING_VERSION = "1.0"
_ORDER = ("versioned_id", "id")
_REPEATED_IDENTIFIER = uuid.UUID("8f3f0a3e-54c1-4b58-9a5e-2f3c9e1d7b10")
PARAMETER_REFERENCE = re.compile(r"^#\{[^{}]+\}$")

_COMMON_KEYS = {"identifier", "instanceIdentifier", "name", "comments", "position", "componentType",
                "groupIdentifier"}
_KNOWN_KEYS = {
    Kind.PROCESS_GROUP: _COMMON_KEYS | {
        "processors", "connections", "funnels", "inputPorts", "outputPorts", "processGroups", "controllerServices",
        "labels", "parameterContextName", "defaultBackPressureObjectThreshold", "defaultBackPressureDataSizeThreshold",
        "defaultFlowFileExpiration"},
    Kind.PROCESSOR: _COMMON_KEYS | {
        "type", "bundle", "properties", "schedulingStrategy", "schedulingPeriod", "executionNode",
        "concurrentlySchedulableTaskCount", "penaltyDuration", "yieldDuration", "bulletinLevel", "runDurationMillis",
        "autoTerminatedRelationships", "scheduledState"},
    Kind.CONTROLLER_SERVICE: _COMMON_KEYS | {"type", "bundle", "properties", "scheduledState"},
    Kind.FUNNEL: _COMMON_KEYS,
    Kind.LABEL: _COMMON_KEYS | {"label", "width", "height", "style", "zIndex"},
    Kind.INPUT_PORT: _COMMON_KEYS | {"concurrentlySchedulableTaskCount", "scheduledState", "type"},
    Kind.OUTPUT_PORT: _COMMON_KEYS | {"concurrentlySchedulableTaskCount", "scheduledState", "type"},
    Kind.CONNECTION: _COMMON_KEYS | {
        "source", "destination", "selectedRelationships", "backPressureObjectThreshold",
        "backPressureDataSizeThreshold", "flowFileExpiration", "prioritizers", "loadBalanceStrategy",
        "partitioningAttribute", "loadBalanceCompression"},
}
_CONTEXT_KEYS = {"name", "description", "parameters", "inheritedParameterContexts", "instanceIdentifier"}
_PARAMETER_KEYS = {"name", "value", "sensitive", "description"}
_DOCUMENT_KEYS = {"flowContents", "rootGroup", "parameterContexts", "flowEncodingVersion"}

#: Design-time run states as flow definitions write them (NiFi says ENABLED for stopped).
_STATE_OUT = {"STOPPED": "ENABLED", "RUNNING": "RUNNING", "DISABLED": "DISABLED"}
_STATE_IN = {"ENABLED": "STOPPED", "RUNNING": "RUNNING", "DISABLED": "DISABLED", "STOPPED": "STOPPED"}


class Identity(enum.Enum):
    """Which identifiers an export writes (see the module docstring)."""

    VERSIONED = "versioned"
    INSTANCE = "instance"


def sensitive_names(component_type: str, kind: str, descriptors: dict[str, Any] | None = None) -> set[str]:
    """Names of the sensitive properties of a processor or service type. For a type the engine
    does not know, the flow definition's own ``propertyDescriptors`` say (NiFi writes them)."""
    registry = default_registry()
    try:
        cls = registry.processor(component_type) if kind == Kind.PROCESSOR else registry.service(component_type)
    except UnknownComponentTypeError:
        return {name for name, d in (descriptors or {}).items() if isinstance(d, dict) and d.get("sensitive")}
    return {descriptor.name for descriptor in cls.properties if descriptor.sensitive}


def service_property_names(component_type: str, kind: str, descriptors: dict[str, Any] | None = None) -> set[str]:
    """Names of the properties of a processor or service type that name a controller service
    (for a type the engine does not know, NiFi's ``identifiesControllerService`` says)."""
    registry = default_registry()
    try:
        cls = registry.processor(component_type) if kind == Kind.PROCESSOR else registry.service(component_type)
    except UnknownComponentTypeError:
        return {name for name, d in (descriptors or {}).items()
                if isinstance(d, dict) and d.get("identifiesControllerService")}
    return {descriptor.name for descriptor in cls.properties if descriptor.service is not None}


def property_context(component: Component, name: str) -> Binding:
    """What a sealed property value of ``component`` is bound to (sealed with its tenant's key)."""
    return Binding(str(component.tenant_id), f"{component.id}/{name}")


def parameter_context_binding(context: ParameterContext, name: str) -> Binding:
    """What a sealed parameter value of ``context`` is bound to (sealed with its tenant's key)."""
    return Binding(str(context.tenant_id), f"parameter-context:{context.id}/{name}")


# --------------------------------------------------------------------------------------- export

def _service_ids(component: Processor | ControllerService) -> dict[str, uuid.UUID]:
    """The instance ids held by the properties of ``component`` that name a service, by property
    (a value that is no id is left out)."""
    names = service_property_names(component.type, component.kind, component.extra.get("propertyDescriptors"))
    found = {}
    for name in names:
        try:
            found[name] = uuid.UUID(str(component.properties.get(name)))
        except ValueError:
            continue
    return found


@dataclass
class _Exporter:
    identity: Identity
    contexts: set[str] = field(default_factory=set)
    assigned: dict[uuid.UUID, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    inside: dict[type, dict[uuid.UUID, list]] = field(default_factory=dict)
    references: dict[uuid.UUID, dict[str, uuid.UUID]] = field(default_factory=dict)
    services: dict[tuple[uuid.UUID, uuid.UUID], ControllerService] = field(default_factory=dict)

    def load(self, group: ProcessGroup) -> None:
        """Read every component below ``group`` once per kind, by parent group: an export costs
        the same few queries whether the tree holds one group or a thousand."""
        groups = subtree_ids(group.pk)
        # Endpoints and their groups come in queries of their own: one query joining them all is
        # planned from statistics that can be far off (a test's transaction, a bulk import) and
        # then crosses every component with every other, seconds per export.
        for model, rows in (
                (Processor, Processor.objects.all()), (ControllerService, ControllerService.objects.all()),
                (Label, Label.objects.all()), (Funnel, Funnel.objects.all()), (Port, Port.objects.all()),
                (Connection, Connection.objects.prefetch_related("source__parent", "destination__parent")),
                (ProcessGroup, ProcessGroup.objects.select_related("parameter_context"))):
            by_parent: dict[uuid.UUID, list] = {}
            for row in rows.filter(parent__in=groups).order_by(*_ORDER):
                by_parent.setdefault(row.parent_id, []).append(row)
            self.inside[model] = by_parent

    def load_services(self) -> None:
        """Note the instance ids the loaded components' service properties hold and read those
        services in one query, by tenant and instance id: a component names only services of its
        own tenant. Only a versioned export looks them up (to write their versioned ids)."""
        if self.identity is not Identity.VERSIONED:
            return
        components = [component for model in (Processor, ControllerService)
                      for children in self.inside[model].values() for component in children]
        self.references = {component.pk: _service_ids(component) for component in components}
        pks = {pk for ids in self.references.values() for pk in ids.values()}
        if pks:
            found = ControllerService.objects.filter(pk__in=pks,
                                                     tenant_id__in={component.tenant_id for component in components})
            self.services = {(service.tenant_id, service.pk): service for service in found}

    def children(self, model: type, group: ProcessGroup) -> list:
        """The components of ``model`` directly inside ``group``, in the export's order."""
        return self.inside[model].get(group.pk, [])

    def ident(self, component: Component) -> str:
        """The component's identifier in this export. A versioned id met a second time (one
        definition imported twice below the exported group) gives way to one derived from the
        instance id, so the document stays importable; components are visited in a fixed order."""
        if self.identity is Identity.INSTANCE:
            return str(component.id)
        ident = self.assigned.get(component.pk)
        if ident is None:
            ident = component.versioned_id
            if ident in self.used:
                ident = str(uuid.uuid5(_REPEATED_IDENTIFIER, str(component.pk)))
            self.used.add(ident)
            self.assigned[component.pk] = ident
        return ident

    def common(self, component: Component, kind: str, group_ident: str | None) -> dict[str, Any]:
        document = {key: value for key, value in component.extra.items() if key not in _KNOWN_KEYS[kind]}
        document.update(identifier=self.ident(component), name=component.name, comments=component.comments,
                        position={"x": component.position_x, "y": component.position_y}, componentType=kind)
        if group_ident is not None:
            document["groupIdentifier"] = group_ident
        return document

    def properties(self, component: Processor | ControllerService) -> dict[str, str | None]:
        properties = dict(component.properties)
        if self.identity is Identity.VERSIONED:
            # A definition names a service by its versioned identifier, as NiFi does.
            for name, pk in self.references[component.pk].items():
                service = self.services.get((component.tenant_id, pk))
                if service is not None:
                    properties[name] = self.ident(service)
        key = current_key()
        for name, sealed in component.sensitive_properties.items():
            value = key.open(sealed, property_context(component, name))
            if self.identity is Identity.INSTANCE or PARAMETER_REFERENCE.match(value):
                properties[name] = value
        return dict(sorted(properties.items()))

    def group(self, group: ProcessGroup, parent_ident: str | None) -> dict[str, Any]:
        ident = self.ident(group)
        document = self.common(group, Kind.PROCESS_GROUP, parent_ident)
        if group.parameter_context_id is not None:
            document["parameterContextName"] = group.parameter_context.name
            self.contexts.add(group.parameter_context.name)
        document.update(
            defaultBackPressureObjectThreshold=group.default_back_pressure_object_threshold,
            defaultBackPressureDataSizeThreshold=group.default_back_pressure_data_size_threshold,
            defaultFlowFileExpiration=group.default_flowfile_expiration,
        )
        by_ident = lambda item: item["identifier"]  # noqa: E731
        children = self.children
        document["processors"] = sorted((self.processor(p, ident) for p in children(Processor, group)), key=by_ident)
        document["controllerServices"] = sorted((self.service(s, ident) for s in children(ControllerService, group)),
                                                key=by_ident)
        document["labels"] = sorted((self.label(label, ident) for label in children(Label, group)), key=by_ident)
        document["funnels"] = sorted((self.common(f, Kind.FUNNEL, ident) for f in children(Funnel, group)),
                                     key=by_ident)
        ports = children(Port, group)
        document["inputPorts"] = sorted((self.port(p, ident) for p in ports if p.kind == Kind.INPUT_PORT), key=by_ident)
        document["outputPorts"] = sorted((self.port(p, ident) for p in ports if p.kind == Kind.OUTPUT_PORT),
                                         key=by_ident)
        document["connections"] = sorted((self.connection(c, ident) for c in children(Connection, group)),
                                         key=by_ident)
        document["processGroups"] = sorted((self.group(child, ident) for child in children(ProcessGroup, group)),
                                           key=by_ident)
        return document

    def processor(self, processor: Processor, group_ident: str) -> dict[str, Any]:
        document = self.common(processor, Kind.PROCESSOR, group_ident)
        document["type"] = processor.type
        if processor.bundle is not None:
            document["bundle"] = processor.bundle
        document.update(
            properties=self.properties(processor),
            schedulingStrategy=processor.scheduling_strategy,
            schedulingPeriod=processor.scheduling_period,
            executionNode=processor.execution_node,
            concurrentlySchedulableTaskCount=processor.concurrent_tasks,
            penaltyDuration=processor.penalty_duration,
            yieldDuration=processor.yield_duration,
            bulletinLevel=processor.bulletin_level,
            runDurationMillis=processor.run_duration_millis,
            autoTerminatedRelationships=sorted(processor.auto_terminated),
            scheduledState=_STATE_OUT[processor.scheduled_state],
        )
        return document

    def service(self, service: ControllerService, group_ident: str) -> dict[str, Any]:
        document = self.common(service, Kind.CONTROLLER_SERVICE, group_ident)
        document["type"] = service.type
        if service.bundle is not None:
            document["bundle"] = service.bundle
        document.update(properties=self.properties(service), scheduledState=service.scheduled_state)
        return document

    def label(self, label: Label, group_ident: str) -> dict[str, Any]:
        document = self.common(label, Kind.LABEL, group_ident)
        document.update(label=label.text, width=label.width, height=label.height, style=dict(label.style),
                        zIndex=label.z_index)
        return document

    def port(self, port: Port, group_ident: str) -> dict[str, Any]:
        document = self.common(port, port.kind, group_ident)
        document.update(type=port.kind, concurrentlySchedulableTaskCount=port.concurrent_tasks,
                        scheduledState=_STATE_OUT[port.scheduled_state])
        return document

    def endpoint(self, component: Component) -> dict[str, Any]:
        return {"id": self.ident(component), "type": component.kind, "groupId": self.ident(component.parent),
                "name": component.name, "comments": component.comments}

    def connection(self, connection: Connection, group_ident: str) -> dict[str, Any]:
        document = self.common(connection, Kind.CONNECTION, group_ident)
        document.update(
            source=self.endpoint(connection.source),
            destination=self.endpoint(connection.destination),
            selectedRelationships=sorted(connection.selected_relationships),
            backPressureObjectThreshold=connection.back_pressure_object_threshold,
            backPressureDataSizeThreshold=connection.back_pressure_data_size_threshold,
            flowFileExpiration=connection.flowfile_expiration,
            prioritizers=list(connection.prioritizers),
            loadBalanceStrategy=connection.load_balance_strategy,
            partitioningAttribute=connection.partitioning_attribute,
            loadBalanceCompression=connection.load_balance_compression,
        )
        return document

    def parameter_contexts(self, tenant) -> dict[str, Any]:
        wanted, found = set(self.contexts), {}
        key = current_key()
        while wanted:
            name = wanted.pop()
            context = ParameterContext.objects.filter(tenant=tenant, name=name).first()
            if context is None or name in found:
                continue
            parameters = []
            for parameter in sorted(context.parameters, key=lambda p: p["name"]):
                entry = {k: v for k, v in parameter.items() if k not in _PARAMETER_KEYS}
                entry.update(name=parameter["name"], description=parameter.get("description", ""),
                             sensitive=bool(parameter.get("sensitive")))
                value = parameter.get("value")
                if entry["sensitive"] and value is not None:
                    value = (key.open(value, parameter_context_binding(context, parameter["name"]))
                             if self.identity is Identity.INSTANCE else None)
                entry["value"] = value
                parameters.append(entry)
            document = {k: v for k, v in context.extra.items() if k not in _CONTEXT_KEYS}
            document.update(name=context.name, description=context.description, parameters=parameters,
                            inheritedParameterContexts=list(context.inherited))
            found[name] = document
            wanted.update(n for n in context.inherited if n not in found)
        return dict(sorted(found.items()))


def export_group(group: ProcessGroup, identity: Identity = Identity.VERSIONED) -> dict[str, Any]:
    """``group`` and everything in it as a flow definition (see the module docstring)."""
    exporter = _Exporter(identity)
    exporter.load(group)
    exporter.load_services()
    contents = exporter.group(group, None)
    document = {key: value for key, value in group.document_extra.items() if key not in _DOCUMENT_KEYS}
    document.update(flowEncodingVersion=ENCODING_VERSION, flowContents=contents,
                    parameterContexts=exporter.parameter_contexts(group.tenant))
    return document


# --------------------------------------------------------------------------------------- import

def parse_definition(source: Any) -> FlowDefinition:
    """Load and check a flow definition (text, bytes or a parsed object); raises
    FlowDefinitionError listing every fatal problem (and every value the database cannot store)
    with its JSON path."""
    flow = load_flow(source)
    fatal = [problem for problem in check_flow(flow) if problem.fatal] + storage_problems(flow)
    if fatal:
        raise FlowDefinitionError(fatal)
    return flow


def _extra(raw: dict[str, Any], kind: str) -> dict[str, Any]:
    return {key: value for key, value in raw.items() if key not in _KNOWN_KEYS[kind]}


def _position(raw: dict[str, Any]) -> tuple[float, float]:
    position = raw.get("position")
    if isinstance(position, dict):
        try:
            return float(position.get("x") or 0), float(position.get("y") or 0)
        except (TypeError, ValueError):
            pass
    return 0.0, 0.0


def _number(value: Any, default: float) -> float:
    """``value`` as a finite number, else ``default``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or abs(value) == float("inf"):
        return default
    return float(value)


class _Sync:
    """Makes a group's rows match a flow definition's group, recursively."""

    def __init__(self, tenant, flow: FlowDefinition, modifier: str) -> None:
        self.tenant = tenant
        self.flow = flow
        self.modifier = modifier
        self.by_ident: dict[str, Component] = {}
        self.pending_connections: list[tuple[ProcessGroup, list[ConnectionConfig]]] = []
        self.contexts: dict[str, ParameterContext] = {}
        self.stale: list[Component] = []

    def context(self, name: str | None) -> ParameterContext | None:
        if not name:
            return None
        if name not in self.contexts:
            self.contexts[name] = self._ensure_context(name)
        return self.contexts[name]

    def _ensure_context(self, name: str) -> ParameterContext:
        config = self.flow.parameter_contexts[name]
        context, created = ParameterContext.objects.get_or_create(
            tenant=self.tenant, name=name,
            defaults={"description": str(config.raw.get("description") or ""),
                      "inherited": list(config.inherited),
                      "extra": {k: v for k, v in config.raw.items() if k not in _CONTEXT_KEYS}})
        known = {parameter["name"] for parameter in context.parameters}
        raw = {p.get("name"): p for p in config.raw.get("parameters") or () if isinstance(p, dict)}
        added = False
        key = current_key()
        for parameter in config.parameters.values():
            if parameter.name in known:
                continue
            value = parameter.value
            if parameter.sensitive and value is not None:
                value = key.seal(value, parameter_context_binding(context, parameter.name))
            extra = {k: v for k, v in raw.get(parameter.name, {}).items() if k not in _PARAMETER_KEYS}
            context.parameters.append({**extra, "name": parameter.name, "value": value,
                                       "sensitive": parameter.sensitive, "description": parameter.description})
            added = True
        if added or created:
            context.save()
        for inherited in config.inherited:
            self.context(inherited)
        return context

    def touch(self, component: Component, raw: dict[str, Any], kind: str) -> None:
        component.name = raw.get("name") if isinstance(raw.get("name"), str) else component.name
        component.comments = raw.get("comments") or ""
        component.position_x, component.position_y = _position(raw)
        component.extra = _extra(raw, kind)
        if component._state.adding:
            component.tenant = self.tenant
        else:
            component.version += 1
        component.last_modifier = self.modifier

    def group(self, group: ProcessGroup, config: ProcessGroupConfig) -> None:
        self.touch(group, config.raw, Kind.PROCESS_GROUP)
        group.versioned_id = config.identifier
        group.parameter_context = self.context(config.parameter_context_name)
        # 0 or less means no limit; the column holds no negative numbers
        group.default_back_pressure_object_threshold = max(0, config.default_back_pressure_object_threshold)
        group.default_back_pressure_data_size_threshold = config.default_back_pressure_data_size_threshold
        group.default_flowfile_expiration = config.default_flowfile_expiration
        group.save()
        self.by_ident[config.identifier] = group
        existing = {(c.kind, c.versioned_id): c for c in Component.objects.filter(parent=group)}
        wanted: set[tuple[str, str]] = set()

        def reuse(kind: str, ident: str, model):
            wanted.add((kind, ident))
            found = existing.get((kind, ident))
            return model.objects.get(pk=found.pk) if found is not None else model(parent=group, versioned_id=ident)

        for processor in config.processors:
            self.processor(reuse(Kind.PROCESSOR, processor.identifier, Processor), processor)
        for service in config.controller_services:
            self.service(reuse(Kind.CONTROLLER_SERVICE, service.identifier, ControllerService), service)
        for funnel in config.funnels:
            self.funnel(reuse(Kind.FUNNEL, funnel.identifier, Funnel), funnel)
        for raw in config.raw.get("labels") or ():
            if isinstance(raw, dict) and raw.get("identifier"):
                self.label(reuse(Kind.LABEL, str(raw["identifier"]), Label), raw)
        for port in config.input_ports + config.output_ports:
            self.port(reuse(port.port_type, port.identifier, Port), port)
        for child in config.process_groups:
            self.group(reuse(Kind.PROCESS_GROUP, child.identifier, ProcessGroup), child)
        for connection in config.connections:
            wanted.add((Kind.CONNECTION, connection.identifier))
        self.pending_connections.append((group, config.connections))
        self.stale += [component for key, component in existing.items() if key not in wanted]

    def _properties(self, component: Processor | ControllerService, config: ProcessorConfig | ServiceConfig,
                    kind: str) -> None:
        sensitive = sensitive_names(config.type, kind, config.raw.get("propertyDescriptors"))
        key = current_key()
        kept = dict(component.sensitive_properties)
        component.properties, component.sensitive_properties = {}, {}
        for name, value in config.properties.items():
            if name in sensitive and value is not None:
                component.sensitive_properties[name] = key.seal(str(value), property_context(component, name))
            elif name not in sensitive:
                component.properties[name] = value
        for name, sealed in kept.items():
            if name in sensitive and name not in component.sensitive_properties and config.properties.get(name) is None:
                component.sensitive_properties[name] = sealed

    def processor(self, processor: Processor, config: ProcessorConfig) -> None:
        self.touch(processor, config.raw, Kind.PROCESSOR)
        processor.type = config.type
        processor.bundle = config.bundle
        processor.scheduling_strategy = config.scheduling_strategy
        processor.scheduling_period = config.scheduling_period or (
            "0 sec" if config.scheduling_strategy == "TIMER_DRIVEN" else "* * * * * ?")
        processor.execution_node = config.execution_node or "ALL"
        processor.concurrent_tasks = config.concurrent_tasks
        processor.penalty_duration = config.penalty_duration
        processor.yield_duration = config.yield_duration
        processor.bulletin_level = config.bulletin_level
        processor.run_duration_millis = config.run_duration_millis
        processor.auto_terminated = sorted(config.auto_terminated)
        processor.scheduled_state = _STATE_IN.get(config.scheduled_state, "STOPPED")
        self._properties(processor, config, Kind.PROCESSOR)
        processor.save()
        self.by_ident[config.identifier] = processor

    def service(self, service: ControllerService, config: ServiceConfig) -> None:
        self.touch(service, config.raw, Kind.CONTROLLER_SERVICE)
        service.type = config.type
        service.bundle = config.bundle
        service.scheduled_state = "ENABLED" if config.scheduled_state == "ENABLED" else "DISABLED"
        self._properties(service, config, Kind.CONTROLLER_SERVICE)
        service.save()
        self.by_ident[config.identifier] = service

    def funnel(self, funnel: Funnel, config: FunnelConfig) -> None:
        self.touch(funnel, config.raw, Kind.FUNNEL)
        funnel.save()
        self.by_ident[config.identifier] = funnel

    def label(self, label: Label, raw: dict[str, Any]) -> None:
        """A label of the definition (the engine does not read labels: they are taken as written,
        a value of the wrong kind falling back to NiFi's default)."""
        self.touch(label, raw, Kind.LABEL)
        label.text = raw.get("label") if isinstance(raw.get("label"), str) else ""
        label.width, label.height = _number(raw.get("width"), 150), _number(raw.get("height"), 150)
        label.style = {str(k): str(v) for k, v in raw["style"].items()} if isinstance(raw.get("style"), dict) else {}
        label.z_index = int(max(-2**62, min(2**62, _number(raw.get("zIndex"), 0))))
        label.save()

    def port(self, port: Port, config: PortConfig) -> None:
        self.touch(port, config.raw, config.port_type)
        port.kind = config.port_type
        port.concurrent_tasks = config.concurrent_tasks
        port.scheduled_state = _STATE_IN.get(config.scheduled_state, "STOPPED")
        port.save()
        self.by_ident[config.identifier] = port

    def service_references(self) -> None:
        """Point the properties that name a service of the definition (by its identifier there)
        at that service, as the rest of the platform names it (by its instance id)."""
        services = {ident: str(c.pk) for ident, c in self.by_ident.items() if c.kind == Kind.CONTROLLER_SERVICE}
        for component in self.by_ident.values():
            if component.kind not in (Kind.PROCESSOR, Kind.CONTROLLER_SERVICE):
                continue
            names = service_property_names(component.type, component.kind, component.extra.get("propertyDescriptors"))
            changed = {name: services[value] for name, value in component.properties.items()
                       if name in names and isinstance(value, str) and value in services}
            if changed:
                component.properties.update(changed)
                component.save(update_fields=["properties"])

    def connections(self) -> None:
        for group, configs in self.pending_connections:
            existing = {c.versioned_id: c for c in Connection.objects.filter(parent=group)}
            for config in configs:
                connection = existing.get(config.identifier) or Connection(parent=group,
                                                                           versioned_id=config.identifier)
                self.touch(connection, config.raw, Kind.CONNECTION)
                connection.source = self.by_ident[config.source.id]
                connection.destination = self.by_ident[config.destination.id]
                connection.selected_relationships = sorted(config.selected_relationships)
                connection.back_pressure_object_threshold = max(0, config.back_pressure_object_threshold)
                connection.back_pressure_data_size_threshold = config.back_pressure_data_size_threshold
                connection.flowfile_expiration = config.flowfile_expiration
                connection.prioritizers = list(config.prioritizers)
                connection.load_balance_strategy = config.load_balance_strategy
                connection.partitioning_attribute = config.partitioning_attribute
                connection.load_balance_compression = config.load_balance_compression
                connection.save()


def delete_subtree(component: Component) -> None:
    """Delete a component; a group goes with everything inside it (connections first, as they
    protect their ends)."""
    if component.kind == Kind.PROCESS_GROUP:
        ids = list(subtree_ids(component.pk))
        Component.objects.filter(kind=Kind.CONNECTION, parent__in=ids).delete()
        Component.objects.filter(pk__in=ids).order_by().delete()
    else:
        component.delete()


def subtree_ids(group_pk) -> list:
    """The primary keys of a group and of every group inside it."""
    found, frontier = [group_pk], [group_pk]
    while frontier:
        frontier = list(ProcessGroup.objects.filter(parent__in=frontier).values_list("pk", flat=True))
        found += frontier
    return found


def _apply(tenant, group: ProcessGroup, flow: FlowDefinition, modifier: str) -> ProcessGroup:
    sync = _Sync(tenant, flow, modifier)
    sync.group(group, flow.root)
    sync.connections()
    sync.service_references()
    Component.objects.filter(pk__in=[c.pk for c in sync.stale if c.kind == Kind.CONNECTION]).delete()
    for component in sync.stale:
        if component.kind != Kind.CONNECTION:
            delete_subtree(component)
    document_extra = {key: value for key, value in flow.raw.items() if key not in _DOCUMENT_KEYS}
    if document_extra != group.document_extra:
        group.document_extra = document_extra
        group.save(update_fields=["document_extra"])
    return group


@transaction.atomic
def import_group(parent: ProcessGroup, source: Any, modifier: str = "", name: str | None = None) -> ProcessGroup:
    """A new group inside ``parent`` built from the flow definition ``source`` (a document or
    what ``parse_definition`` made of one)."""
    flow = source if isinstance(source, FlowDefinition) else parse_definition(source)
    group = ProcessGroup(parent=parent, tenant=parent.tenant, versioned_id=flow.root.identifier)
    group = _apply(parent.tenant, group, flow, modifier)
    if name:
        group.name = name
        group.save(update_fields=["name"])
    return group


@transaction.atomic
def replace_contents(group: ProcessGroup, source: Any, modifier: str = "") -> ProcessGroup:
    """Make ``group`` match the flow definition ``source`` (name, settings and contents)."""
    flow = source if isinstance(source, FlowDefinition) else parse_definition(source)
    return _apply(group.tenant, group, flow, modifier)
