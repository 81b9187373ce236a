"""Helpers of the API tests: a small flow built in a tenant, error-body checks, and a snapshot
of a tenant's rows to show that a refused request changed nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flowsite.api.models import ApiToken
from flowsite.flows.definition import Identity, export_group
from flowsite.flows.models import (
    Component,
    Connection,
    FlowVersion,
    Funnel,
    Kind,
    ParameterContext,
    Port,
    ProcessGroup,
    Processor,
)

API = "/api/v1/"


@dataclass
class Flow:
    """A tenant's flow with one component of each kind.

    ``root`` holds ``gen`` (GenerateFlowFile) → ``log`` (LogAttribute) joined by ``conn``, an
    unconnected ``spare`` GenerateFlowFile, a ``put`` PutFile (restricted) and a ``funnel``;
    ``child`` (inside root) holds the ports ``in_port`` and ``out_port`` and has one committed
    version (``version`` 1)."""

    root: ProcessGroup
    child: ProcessGroup
    gen: Processor
    log: Processor
    spare: Processor
    put: Processor
    conn: Connection
    funnel: Funnel
    in_port: Port
    out_port: Port

    def ids(self) -> dict[str, str]:
        """Every component's id by attribute name, for filling URL and body templates."""
        return {name: str(getattr(self, name).pk) for name in
                ("root", "child", "gen", "log", "spare", "put", "conn", "funnel", "in_port", "out_port")}


def build_flow(world) -> Flow:
    """The ``Flow`` of the docstring above, made in ``world``'s tenant through the ORM."""
    tenant, root = world.tenant, world.root
    child = ProcessGroup.objects.create(tenant=tenant, parent=root, name="child")
    gen = Processor.objects.create(tenant=tenant, parent=root, name="gen", type="GenerateFlowFile",
                                   scheduling_period="1 min")
    log = Processor.objects.create(tenant=tenant, parent=root, name="log", type="LogAttribute",
                                   auto_terminated=["success"])
    spare = Processor.objects.create(tenant=tenant, parent=root, name="spare", type="GenerateFlowFile",
                                     auto_terminated=["success"])
    put = Processor.objects.create(tenant=tenant, parent=root, name="put", type="PutFile",
                                   properties={"Directory": "/tmp/out"})
    conn = Connection.objects.create(tenant=tenant, parent=root, source=gen, destination=log,
                                     selected_relationships=["success"])
    funnel = Funnel.objects.create(tenant=tenant, parent=root, name="funnel")
    in_port = Port.objects.create(tenant=tenant, parent=child, name="in", kind=Kind.INPUT_PORT)
    out_port = Port.objects.create(tenant=tenant, parent=child, name="out", kind=Kind.OUTPUT_PORT)
    FlowVersion.objects.create(group=child, number=1, comment="first",
                               definition=export_group(child, Identity.VERSIONED))
    return Flow(root, child, gen, log, spare, put, conn, funnel, in_port, out_port)


def fill(template: Any, values: dict[str, str]) -> Any:
    """``template`` (a string, or lists and dicts of them) with ``{name}`` replaced by ``values``."""
    if isinstance(template, str):
        return template.format(**values)
    if isinstance(template, list):
        return [fill(item, values) for item in template]
    if isinstance(template, dict):
        return {key: fill(value, values) for key, value in template.items()}
    return template


def assert_error(response, status: int, code: str | None = None) -> dict:
    """Check that ``response`` is an error of ``status`` in the API's one error shape; its body."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    body = response.json()
    assert {"status", "code", "message", "problems"} <= set(body), body
    assert body["status"] == status and isinstance(body["message"], str) and body["message"]
    assert isinstance(body["problems"], list)
    for problem in body["problems"]:
        assert set(problem) == {"path", "message"} and problem["path"].startswith("$"), problem
    if code is not None:
        assert body["code"] == code, body
    return body


def problems_by_path(body: dict) -> dict[str, str]:
    """The problems of an error body as {path: message} (several at one path joined with ' | ')."""
    found: dict[str, str] = {}
    for problem in body["problems"]:
        path = problem["path"]
        found[path] = f"{found[path]} | {problem['message']}" if path in found else problem["message"]
    return found


def snapshot(tenant) -> dict[str, Any]:
    """What a request could change in ``tenant``: its components (with revision, name and
    state), connections' ends, versions, parameter contexts and the API tokens of its members."""
    components = {str(c["id"]): c for c in Component.objects.filter(tenant=tenant).values(
        "id", "kind", "parent_id", "name", "version", "extra", "position_x", "position_y")}
    for processor in Processor.objects.filter(tenant=tenant).values("id", "properties", "sensitive_properties",
                                                                      "scheduled_state", "auto_terminated"):
        components[str(processor["id"])].update(processor)
    for connection in Connection.objects.filter(tenant=tenant).values("id", "destination_id",
                                                                       "selected_relationships"):
        components[str(connection["id"])].update(connection)
    return {
        "components": components,
        "versions": list(FlowVersion.objects.filter(group__tenant=tenant).values_list("group_id", "number")),
        "contexts": list(ParameterContext.objects.filter(tenant=tenant).values_list("name", "parameters")),
        "tokens": list(ApiToken.objects.filter(user__tenants=tenant).values_list("id", "revoked_at")),
    }
