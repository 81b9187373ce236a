"""Validation of a tenant's components by the engine itself: the tenant's flow is exported as a
flow definition (instance identifiers) and checked by ``engine.flow.validation.check_flow``,
the same code a node runs before it starts a component, less the checks of the node's own files
(which the web tier cannot see), plus the restricted components whose capabilities the tenant
has not been granted. Each problem is traced back to the component (and property) its JSON path
points into."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from engine.flow.loader import FlowDefinitionError, load_flow
from engine.flow.validation import check_flow
from flowsite.flows.definition import Identity, export_group
from flowsite.flows.models import ControllerService, ProcessGroup, Processor
from flowsite.flows.restricted import tenant_refusal

_INDEXED = re.compile(r"\.(processors|connections|funnels|inputPorts|outputPorts|controllerServices|processGroups)\[(\d+)\]")
_PROPERTY = re.compile(r"^\.properties(?:\.([A-Za-z_][A-Za-z0-9_]*)|\['((?:[^'\\]|\\.)*)'\])")


@dataclass(frozen=True)
class Problem:
    """One reason a component is invalid; ``property`` names the property at fault, if one is."""

    message: str
    property: str | None = None
    path: str = ""

    def as_dict(self) -> dict:
        return {"property": self.property, "message": self.message}


def tenant_problems(tenant) -> dict[uuid.UUID, list[Problem]]:
    """Every component problem of ``tenant``'s flow, by component id."""
    root = ProcessGroup.objects.get(tenant=tenant, parent__isnull=True)
    document = export_group(root, Identity.INSTANCE)
    try:
        flow = load_flow(document)
    except FlowDefinitionError as error:  # a stored flow the schema refuses: report it on the root
        return {root.pk: [Problem(str(problem)) for problem in error.problems]}
    found: dict[uuid.UUID, list[Problem]] = {}
    for problem in check_flow(flow, node_local=False):
        component_id, rest = _locate(document["flowContents"], problem.path.removeprefix("$.flowContents"))
        match = _PROPERTY.match(rest)
        name = None
        if match:
            name = match.group(1) or re.sub(r"\\(.)", r"\1", match.group(2))
        found.setdefault(component_id or root.pk, []).append(Problem(problem.message, name, problem.path))
    for component_id, kind, type_name in _typed_components(tenant):
        refused = tenant_refusal(tenant, type_name, kind)
        if refused is not None:
            found.setdefault(component_id, []).append(Problem(refused))
    return found


def _typed_components(tenant):
    for component_id, type_name in Processor.objects.filter(tenant=tenant).values_list("pk", "type"):
        yield component_id, "processor", type_name
    for component_id, type_name in ControllerService.objects.filter(tenant=tenant).values_list("pk", "type"):
        yield component_id, "service", type_name


def component_problems(component) -> list[Problem]:
    """The problems of one component (``[]`` when it is valid)."""
    return tenant_problems(component.tenant).get(component.pk, [])


def _locate(group: dict, path: str) -> tuple[uuid.UUID | None, str]:
    """The component a path (relative to ``group``) points into, and what is left of the path."""
    current = uuid.UUID(group["identifier"])
    node = group
    while True:
        match = _INDEXED.match(path)
        if not match:
            return current, path
        items = node.get(match.group(1)) or []
        index = int(match.group(2))
        if index >= len(items):
            return current, path
        node = items[index]
        current = uuid.UUID(node["identifier"])
        path = path[match.end():]
