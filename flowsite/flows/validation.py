"""Validation of a tenant's components by the engine itself: the tenant's flow is exported as a
flow definition (instance identifiers) and checked by ``engine.flow.validation.check_flow``,
the same code a node runs before it starts a component, less the checks of the node's own files
(which the web tier cannot see), plus the restricted components whose capabilities the tenant
has not been granted. Each problem is traced back to the component (and property) its JSON path
points into."""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass

from django.db.models import Count, Max, Sum

from engine.flow.loader import FlowDefinitionError, load_flow
from engine.flow.validation import check_flow
from flowsite.flows.definition import Identity, export_group
from flowsite.flows.models import Component, ControllerService, ParameterContext, ProcessGroup, Processor
from flowsite.flows.restricted import tenant_refusal
from flowsite.tenancy.models import Tenant

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


#: How many tenants' problems each process keeps for showing (``shown_problems``).
_SHOWN_TENANTS = 64
_shown: OrderedDict[uuid.UUID, tuple[str, dict[uuid.UUID, list[Problem]]]] = OrderedDict()
_shown_lock = threading.Lock()


def design_fingerprint(tenant) -> str:
    """What ``tenant``'s problems depend on, read in three small queries: its components (how
    many, the sum of their revisions, the last change), its parameter contexts and its grants."""
    components = Component.objects.filter(tenant=tenant).aggregate(n=Count("id"), v=Sum("version"), at=Max("updated_at"))
    contexts = list(ParameterContext.objects.filter(tenant=tenant).order_by("pk").values_list("pk", "parameters",
                                                                                               "inherited"))
    grants = Tenant.objects.filter(pk=tenant.pk).values().first()
    return json.dumps([components, contexts, grants], default=str, sort_keys=True)


def shown_problems(tenant) -> dict[uuid.UUID, list[Problem]]:
    """``tenant_problems`` for showing (lists, the canvas): reused while the design's fingerprint
    is unchanged, as checking a large flow takes a while. Decisions (starting, deploying) call
    ``tenant_problems`` itself."""
    fingerprint = design_fingerprint(tenant)
    with _shown_lock:
        kept = _shown.get(tenant.pk)
        if kept is not None and kept[0] == fingerprint:
            _shown.move_to_end(tenant.pk)
            return kept[1]
    problems = tenant_problems(tenant)
    with _shown_lock:
        _shown[tenant.pk] = (fingerprint, problems)
        _shown.move_to_end(tenant.pk)
        while len(_shown) > _SHOWN_TENANTS:
            _shown.popitem(last=False)
    return problems


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
