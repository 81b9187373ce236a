"""Reading a flow definition: JSON (plain or gzip) → checked against the schema → the model.

Every problem names the JSON path of what is wrong (``$.flowContents.processors[2].type``).
Fields the model does not know are kept in each component's ``raw`` object.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import jsonschema

from engine.confinement.network import AllowRule
from engine.flow.model import (
    ConnectionConfig,
    Endpoint,
    FlowDefinition,
    FunnelConfig,
    Parameter,
    ParameterContextConfig,
    PortConfig,
    ProcessGroupConfig,
    ProcessorConfig,
    ServiceConfig,
    TenantConfig,
)

__all__ = ["CAPABILITIES", "FlowDefinitionError", "FlowProblem", "SCHEMA_PATH", "load_flow", "parse_flow_document",
           "parse_tenants", "json_path"]

#: NiFi 2's restricted-component capabilities (``RequiredPermission``), as the ``tenants`` section
#: grants them.
CAPABILITIES = ("read-filesystem", "write-filesystem", "execute-code", "access-environment-credentials",
                "reference-remote-resources", "export-nifi-details")

SCHEMA_PATH = Path(__file__).with_name("flow-definition.schema.json")


@dataclass(frozen=True)
class FlowProblem:
    """Something wrong in a flow definition, at ``path``.

    A ``fatal`` problem stops the whole flow from being built; the others make one component
    invalid (it cannot start) while the rest of the flow runs.
    """

    path: str
    message: str
    fatal: bool = True

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class FlowDefinitionError(ValueError):
    """A flow definition that cannot be used; ``problems`` lists every reason."""

    def __init__(self, problems: Iterable[FlowProblem]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  {problem}" for problem in self.problems)
        super().__init__(f"the flow definition has {len(self.problems)} problem(s):\n{lines}")


def json_path(base: str, *parts: str | int) -> str:
    """Extend a JSON path: names as ``.name`` (or ``['odd name']``), indexes as ``[n]``."""
    path = base
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part.isidentifier():
            path += f".{part}"
        else:
            path += "['" + part.replace("\\", "\\\\").replace("'", "\\'") + "']"
    return path


def parse_flow_document(source: str | bytes | Path | dict[str, Any]) -> dict[str, Any]:
    """The JSON object of a flow definition given as text, bytes (gzip or not), a file or a dict."""
    if isinstance(source, dict):
        return source
    if isinstance(source, Path):
        source = source.read_bytes()
    if isinstance(source, bytes):
        if source[:2] == b"\x1f\x8b":
            source = gzip.decompress(source)
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as error:
            raise FlowDefinitionError([FlowProblem("$", f"not UTF-8 text: {error}")]) from None
    try:
        document = json.loads(source)
    except json.JSONDecodeError as error:
        raise FlowDefinitionError(
            [FlowProblem("$", f"not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}")]
        ) from None
    if not isinstance(document, dict):
        raise FlowDefinitionError([FlowProblem("$", f"a flow definition is a JSON object, not {type(document).__name__}")])
    return document


@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema_problems(document: dict[str, Any]) -> list[FlowProblem]:
    """Where ``document`` departs from the flow-definition schema."""
    problems = []
    for error in sorted(_validator().iter_errors(document), key=lambda e: list(map(str, e.absolute_path))):
        if error.validator == "anyOf" and not error.absolute_path:
            problems.append(FlowProblem("$", "a flow definition needs 'flowContents' (or 'rootGroup')"))
            continue
        problems.append(FlowProblem(error.json_path, _schema_message(error)))
    return problems


def _schema_message(error: jsonschema.ValidationError) -> str:
    if error.validator == "required":
        return error.message.replace(" is a required property", " is required")
    if error.validator == "enum":
        return f"{error.instance!r} is not one of {', '.join(map(str, error.validator_value))}"
    return error.message


def load_flow(source: str | bytes | Path | dict[str, Any]) -> FlowDefinition:
    """Read and check a flow definition; raises FlowDefinitionError listing every problem."""
    document = parse_flow_document(source)
    problems = schema_problems(document)
    if problems:
        raise FlowDefinitionError(problems)
    if "flowContents" in document:
        root = _group(document["flowContents"], "$.flowContents", "")
    else:
        root = _group(document["rootGroup"], "$.rootGroup", "")
    problems = [FlowProblem(json_path(c.path, "partitioningAttribute"),
                            "the PARTITION_BY_ATTRIBUTE load-balance strategy needs the name of the attribute to "
                            "partition by")
                for group in root.walk() for c in group.connections
                if c.load_balance_strategy == "PARTITION_BY_ATTRIBUTE" and not c.partitioning_attribute.strip()]
    if problems:
        raise FlowDefinitionError(problems)
    contexts = _parameter_contexts(document.get("parameterContexts") or {})
    tenants, problems = parse_tenants(document.get("tenants"))
    if problems:
        raise FlowDefinitionError(problems)
    return FlowDefinition(root, contexts, str(document.get("flowEncodingVersion", "1.0")), document, tenants)


def _text(raw: dict[str, Any], key: str, default: str = "") -> str:
    value = raw.get(key)
    return default if value is None else str(value)


def _group(raw: dict[str, Any], path: str, parent_id: str) -> ProcessGroupConfig:
    identifier = raw["identifier"]
    group = ProcessGroupConfig(
        identifier=identifier,
        name=_text(raw, "name"),
        group_id=parent_id,
        path=path,
        raw=raw,
        parameter_context_name=raw.get("parameterContextName"),
        default_back_pressure_object_threshold=raw.get("defaultBackPressureObjectThreshold", 10_000),
        default_back_pressure_data_size_threshold=_text(raw, "defaultBackPressureDataSizeThreshold", "1 GB"),
        default_flowfile_expiration=_text(raw, "defaultFlowFileExpiration", "0 sec"),
    )
    group.processors = [_processor(p, json_path(path, "processors", i), identifier)
                        for i, p in enumerate(raw.get("processors") or ())]
    group.connections = [_connection(c, json_path(path, "connections", i), group)
                         for i, c in enumerate(raw.get("connections") or ())]
    group.funnels = [FunnelConfig(f["identifier"], _text(f, "name", "Funnel"), identifier, json_path(path, "funnels", i), f)
                     for i, f in enumerate(raw.get("funnels") or ())]
    group.input_ports = [_port(p, json_path(path, "inputPorts", i), identifier, "INPUT_PORT")
                         for i, p in enumerate(raw.get("inputPorts") or ())]
    group.output_ports = [_port(p, json_path(path, "outputPorts", i), identifier, "OUTPUT_PORT")
                          for i, p in enumerate(raw.get("outputPorts") or ())]
    group.controller_services = [_service(s, json_path(path, "controllerServices", i), identifier)
                                 for i, s in enumerate(raw.get("controllerServices") or ())]
    group.process_groups = [_group(g, json_path(path, "processGroups", i), identifier)
                            for i, g in enumerate(raw.get("processGroups") or ())]
    return group


def _processor(raw: dict[str, Any], path: str, group_id: str) -> ProcessorConfig:
    return ProcessorConfig(
        identifier=raw["identifier"],
        name=_text(raw, "name", raw["type"].rsplit(".", 1)[-1]),
        group_id=group_id,
        path=path,
        raw=raw,
        type=raw["type"],
        bundle=raw.get("bundle"),
        properties=dict(raw.get("properties") or {}),
        scheduling_strategy=raw.get("schedulingStrategy") or "TIMER_DRIVEN",
        scheduling_period=_text(raw, "schedulingPeriod", ""),
        execution_node=raw.get("executionNode") or "",
        concurrent_tasks=raw.get("concurrentlySchedulableTaskCount") or 1,
        penalty_duration=_text(raw, "penaltyDuration", "30 sec"),
        yield_duration=_text(raw, "yieldDuration", "1 sec"),
        bulletin_level=raw.get("bulletinLevel") or "WARN",
        run_duration_millis=raw.get("runDurationMillis") or 0,
        auto_terminated=list(raw.get("autoTerminatedRelationships") or ()),
        scheduled_state=raw.get("scheduledState") or "ENABLED",
    )


def _endpoint(raw: dict[str, Any]) -> Endpoint:
    return Endpoint(raw["id"], raw["type"], _text(raw, "groupId"), _text(raw, "name"))


def _connection(raw: dict[str, Any], path: str, group: ProcessGroupConfig) -> ConnectionConfig:
    return ConnectionConfig(
        identifier=raw["identifier"],
        name=_text(raw, "name"),
        group_id=group.identifier,
        path=path,
        raw=raw,
        source=_endpoint(raw["source"]),
        destination=_endpoint(raw["destination"]),
        selected_relationships=list(raw.get("selectedRelationships") or ()),
        back_pressure_object_threshold=raw.get("backPressureObjectThreshold",
                                               group.default_back_pressure_object_threshold),
        back_pressure_data_size_threshold=_text(raw, "backPressureDataSizeThreshold",
                                                group.default_back_pressure_data_size_threshold),
        flowfile_expiration=_text(raw, "flowFileExpiration", group.default_flowfile_expiration),
        prioritizers=list(raw.get("prioritizers") or ()),
        load_balance_strategy=raw.get("loadBalanceStrategy") or "DO_NOT_LOAD_BALANCE",
        partitioning_attribute=_text(raw, "partitioningAttribute"),
        load_balance_compression=raw.get("loadBalanceCompression") or "DO_NOT_COMPRESS",
    )


def _port(raw: dict[str, Any], path: str, group_id: str, port_type: str) -> PortConfig:
    return PortConfig(
        identifier=raw["identifier"], name=_text(raw, "name", port_type.replace("_", " ").title()),
        group_id=group_id, path=path, raw=raw, port_type=port_type,
        concurrent_tasks=raw.get("concurrentlySchedulableTaskCount") or 1,
        scheduled_state=raw.get("scheduledState") or "ENABLED",
    )


def _service(raw: dict[str, Any], path: str, group_id: str) -> ServiceConfig:
    return ServiceConfig(
        identifier=raw["identifier"], name=_text(raw, "name", raw["type"].rsplit(".", 1)[-1]), group_id=group_id,
        path=path, raw=raw, type=raw["type"], bundle=raw.get("bundle"),
        properties=dict(raw.get("properties") or {}), scheduled_state=raw.get("scheduledState") or "DISABLED",
    )


def _parameter_contexts(raw: dict[str, Any] | list[Any]) -> dict[str, ParameterContextConfig]:
    if isinstance(raw, list):
        items = [(context.get("name", f"context {i}"), context, f"$.parameterContexts[{i}]")
                 for i, context in enumerate(raw)]
    else:
        items = [(name, context, json_path("$.parameterContexts", name)) for name, context in raw.items()]
    contexts = {}
    for name, context, path in items:
        parameters = {}
        for entry in context.get("parameters") or ():
            parameters[entry["name"]] = Parameter(entry["name"], entry.get("value"), bool(entry.get("sensitive")),
                                                  entry.get("description") or "")
        contexts[name] = ParameterContextConfig(
            context.get("name") or name, parameters, list(context.get("inheritedParameterContexts") or ()),
            path, context,
        )
    return contexts


def parse_tenants(raw: Any) -> tuple[dict[str, TenantConfig], list[FlowProblem]]:
    """The tenants of a ``tenants`` section (absent: none) and the problems found in it."""
    if raw is None:
        return {}, []
    if not isinstance(raw, dict):
        return {}, [FlowProblem("$.tenants", "must be an object of tenants by slug")]
    tenants, problems = {}, []
    for slug, entry in raw.items():
        path = json_path("$.tenants", slug)
        found: list[str] = []
        tenant = _tenant(slug, entry, path, found)
        problems += [FlowProblem(path, message) for message in found]
        if tenant is not None and not found:
            tenants[slug] = tenant
    return tenants, problems


def _tenant(slug: str, entry: Any, path: str, problems: list[str]) -> TenantConfig | None:
    if not isinstance(entry, dict):
        problems.append("must be an object")
        return None
    group = entry.get("group")
    if not isinstance(group, str) or not group:
        problems.append("'group' must name the tenant's process group")
    pool = entry.get("pool") or ""
    if not isinstance(pool, str):
        problems.append("'pool' must be a text")
    capabilities = _texts(entry.get("capabilities"), "'capabilities'", problems)
    unknown = [name for name in capabilities if name not in CAPABILITIES]
    if unknown:
        problems.append(f"'capabilities' holds {', '.join(map(repr, unknown))}, which is not one of "
                        f"{', '.join(CAPABILITIES)}")
    roots = _texts((entry.get("files") or {}).get("roots") if isinstance(entry.get("files") or {}, dict) else 0,
                   "'files.roots'", problems)
    relative = [root for root in roots if not root.startswith("/")]
    if relative:
        problems.append(f"'files.roots' must hold absolute directories, not {', '.join(map(repr, relative))}")
    network = entry.get("network") or {}
    allow = _texts(network.get("allow") if isinstance(network, dict) else 0, "'network.allow'", problems)
    for text in allow:
        try:
            AllowRule.parse(text)
        except ValueError as error:
            problems.append(f"'network.allow' entry {text!r} is no CIDR, host or host:port ({error})")
    ports = entry.get("listenPorts")
    if ports is not None:
        if (not isinstance(ports, list) or len(ports) != 2 or not all(type(p) is int for p in ports)
                or not 0 < ports[0] <= ports[1] <= 65535):
            problems.append(f"'listenPorts' must be [low, high] with 1 <= low <= high <= 65535, or null, not "
                            f"{ports!r}")
            ports = None
        else:
            ports = (ports[0], ports[1])
    if problems:
        return None
    return TenantConfig(slug, group, pool, tuple(capabilities), tuple(roots), tuple(allow), ports, path)


def _texts(value: Any, name: str, problems: list[str]) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        problems.append(f"{name} must be a list of non-empty texts")
        return []
    return [item.strip() for item in value]
