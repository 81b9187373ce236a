"""The cross-tenant probe: every operation of the OpenAPI schema (cluster ones included) and every
portal page that names an object, called as a user of tenant A (an administrator with a token and
with a session, a member with no policy) once with tenant B's real ids and once with random ids. The two answers must be indistinguishable (same status, same body once
the id is masked), and B's objects are unchanged afterwards. Real PostgreSQL and a real Redis as
the cluster's (B's flow is deployed to it)."""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, get_resolver
from rest_framework.test import APIClient

from engine.cluster.records import Heartbeat, NodeRecord, NodeState
from flowsite.api.models import ApiToken
from flowsite.cluster.models import Deployment
from flowsite.flows.models import (
    Component,
    Connection,
    ControllerService,
    FlowVersion,
    Funnel,
    Kind,
    Label,
    ParameterContext,
    Port,
    ProcessGroup,
    Processor,
)
from flowsite.provenance import analytics, store
from tests.flowsite.cluster.conftest import cluster, small_flow  # noqa: F401 (the cluster fixture)
from tests.flowsite.conftest import token_client

METHODS = ("get", "put", "patch", "post", "delete")
#: The kind of object a path's ``{id}`` names, by the path's first segment after /api/v1/.
_KIND_OF_PREFIX = {"process-groups": "group", "processors": "processor", "connections": "connection",
                   "funnels": "funnel", "input-ports": "input-port", "output-ports": "output-port",
                   "tenants": "tenant", "tokens": "token", "platform": "tenant",
                   "controller-services": "service", "parameter-contexts": "context", "labels": "label",
                   "flowfile-queues": "connection"}
#: The kind of request resource a path's ``{request_id}`` names, by what the path begins with.
_REQUEST_OF_PATH = {"/api/v1/provenance-analytics/": "analytics", "/api/v1/provenance/lineage/": "lineage",
                    "/api/v1/provenance/": "query", "/api/v1/provenance-exports/": "export",
                    "/api/v1/flowfile-queues/{id}/listing-requests/": "listing",
                    "/api/v1/flowfile-queues/{id}/drop-requests/": "drop"}
#: The kind of object a portal route's ``<pk>`` names, by the route's first segment.
_KIND_OF_PAGE = {"groups": "group", "processors": "processor", "connections": "connection", "funnels": "funnel",
                 "ports": "input-port", "tokens": "token", "services": "service", "parameter-contexts": "context",
                 "labels": "label"}
#: Shared, not any tenant's: the cluster's nodes and the catalogue of types.
_SHARED = ("{node}", "{name}")


@dataclass
class Probe:
    """One request made twice: with B's ids and with random ids."""

    method: str
    theirs: str
    random: str
    masks: list[str]
    body: Any = None
    #: The body sent with the random ids (default: ``body``).
    random_body: Any = None


class _Request:
    """What ``analytics.scope_for`` reads of a request: its user (a portal session, no token)."""

    def __init__(self, user) -> None:
        self.user = user


class TenantB:
    """Tenant B with one object of every kind a path can name, and a record of them to check
    nothing of B changed."""

    def __init__(self, world, cluster_ready: bool) -> None:
        tenant, root = world.tenant, world.root
        self.world = world
        bob = world.admin()
        flow = small_flow(world)
        child = ProcessGroup.objects.create(tenant=tenant, parent=root, name="b-child")
        funnel = Funnel.objects.create(tenant=tenant, parent=child, name="b-funnel")
        inport = Port.objects.create(tenant=tenant, parent=child, name="b-in", kind=Kind.INPUT_PORT)
        outport = Port.objects.create(tenant=tenant, parent=child, name="b-out", kind=Kind.OUTPUT_PORT)
        service = ControllerService.objects.create(tenant=tenant, parent=child, name="b-service", type="CSVReader")
        context = ParameterContext.objects.create(tenant=tenant, name="b-context")
        label = Label.objects.create(tenant=tenant, parent=child, name="b-label", text="b's note")
        api = token_client(bob)
        assert api.post(f"/api/v1/process-groups/{root.pk}/versions", {"comment": "b"}, format="json").status_code == 201
        token, _ = ApiToken.issue(bob, "b-token")
        self.ids = {"group": [root.pk, child.pk], "processor": [flow["gen"].pk], "connection": [flow["conn"].pk],
                    "funnel": [funnel.pk], "input-port": [inport.pk], "output-port": [outport.pk],
                    "tenant": [tenant.pk], "token": [token.pk], "service": [service.pk], "context": [context.pk],
                    "label": [label.pk]}
        self.deploy_id = ""
        self.requests: dict[str, str] = {}
        if cluster_ready:
            # A request of B's of every kind (their jobs never run here).
            kept = [analytics.prepare(bob, analytics.scope_for(_Request(bob)), question="drops")]
            kept += [store.new(kind, bob, connection=str(flow["conn"].pk), state="done", result=None)
                     for kind in ("query", "lineage", "export", "listing", "drop")]
            for record in kept:
                store.keep(record)
                self.requests[record["kind"]] = record["id"]
            answer = api.post("/api/v1/cluster/deployments", {}, format="json")
            assert answer.status_code == 202, answer.json()
            self.deploy_id = answer.json()["deploy_id"]
        self.before = self.state()

    def state(self) -> dict[str, Any]:
        """What B holds, to compare before and after the probe."""
        tenant = self.world.tenant
        return {"components": sorted((str(c.pk), c.kind, c.name, c.version, c.parent_id)
                                     for c in Component.objects.filter(tenant=tenant)),
                "versions": sorted(FlowVersion.objects.filter(group__tenant=tenant).values_list("group_id", "number")),
                "tokens": sorted(ApiToken.objects.filter(user__memberships__tenant=tenant)
                                 .values_list("id", "revoked_at")),
                "deployments": sorted(Deployment.objects.filter(tenant=tenant).values_list("deploy_id", flat=True)),
                "running": sorted(Processor.objects.filter(tenant=tenant).values_list("pk", "scheduled_state")),
                "services": sorted(ControllerService.objects.filter(tenant=tenant).values_list("pk", "scheduled_state")),
                "contexts": sorted(ParameterContext.objects.filter(tenant=tenant).values_list("pk", "name", "version")),
                "queues": sorted(Connection.objects.filter(tenant=tenant).values_list("pk", "version")),
                "requests": {kind: store.load(request_id) for kind, request_id in self.requests.items()}}


def _masked(response, masks: list[str]) -> tuple[int, str, str]:
    """Status, Location and body with the ids (and a page's per-request CSRF token) masked."""
    text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "<CSRF>", response.content.decode(errors="replace"))
    for mask in masks:
        text = text.replace(mask, "<ID>")
    return response.status_code, response.get("Location", "") and re.sub(
        "|".join(map(re.escape, masks)), "<ID>", response["Location"]), text


def _api_probes(schema: dict, b: TenantB) -> list[Probe]:
    probes = []
    for path, operations in schema["paths"].items():
        if "{" not in path or any(shared in path for shared in _SHARED):
            continue
        prefix = path.removeprefix("/api/v1/").split("/")[0]
        for method in METHODS:
            if method not in operations:
                continue
            body = {} if method in ("put", "patch", "post") else None
            if path.startswith("/api/v1/cluster/deployments/"):
                fake = uuid.uuid4().hex
                probes.append(Probe(method, path.replace("{deploy_id}", b.deploy_id),
                                    path.replace("{deploy_id}", fake), [b.deploy_id, fake], body))
                continue
            if "{event_id}" in path:  # an event of B's, on the node, answered as a random one
                theirs, fake = "n1:7", f"n1:{uuid.uuid4().int % 10**9 + 10}"
                probes.append(Probe(method, path.replace("{event_id}", theirs), path.replace("{event_id}", fake),
                                    [theirs, fake], body))
                continue
            if "{request_id}" in path:
                kind = next(kind for start, kind in _REQUEST_OF_PATH.items() if path.startswith(start))
                theirs, fake = b.requests[kind], str(uuid.uuid4())
                connection = str(b.ids["connection"][0])
                probes.append(Probe(method, path.replace("{request_id}", theirs).replace("{id}", connection),
                                    path.replace("{request_id}", fake).replace("{id}", connection),
                                    [theirs, fake, connection], body))
                continue
            if "{uuid}" in path:  # a FlowFile in a queue of B's
                path = path.replace("{uuid}", str(uuid.uuid4()))
            for theirs in b.ids[_KIND_OF_PREFIX[prefix]]:
                fake = uuid.uuid4()
                masks = [str(theirs), str(fake), theirs.hex, fake.hex]
                probes.append(Probe(method, path.replace("{id}", str(theirs)).replace("{number}", "1"),
                                    path.replace("{id}", str(fake)).replace("{number}", "1"), masks, body))
    return probes


def _query_and_body_probes(b: TenantB, a_root) -> list[Probe]:
    """Ids of B given where a query parameter or a request body names them."""
    tenant, fake = b.ids["tenant"][0], uuid.uuid4()
    masks = [str(tenant), str(fake)]
    probes = [Probe("get", f"{path}?tenant={tenant}", f"{path}?tenant={fake}", masks)
              for path in ("/api/v1/flow/status", "/api/v1/cluster/deployments")]
    probes.append(Probe("post", "/api/v1/cluster/deployments", "/api/v1/cluster/deployments", masks,
                        {"tenant": str(tenant)}))
    probes.append(Probe("post", "/api/v1/provenance-analytics", "/api/v1/provenance-analytics", masks,
                        {"question": "drops", "tenant": str(tenant)}, {"question": "drops", "tenant": str(fake)}))
    event, fake_event = "n1:7", f"n1:{uuid.uuid4().int % 10**9 + 10}"
    probes.append(Probe("post", "/api/v1/provenance-events/replays", "/api/v1/provenance-events/replays",
                        [event, fake_event], {"eventId": event}, {"eventId": fake_event}))
    lineage = {"lineage": {"request": {"lineageRequestType": "PARENTS", "eventId": event}}}
    probes.append(Probe("post", "/api/v1/provenance/lineage", "/api/v1/provenance/lineage", [event, fake_event],
                        lineage, {"lineage": {"request": {"lineageRequestType": "PARENTS", "eventId": fake_event}}}))
    gen, fake_gen = b.ids["processor"][0], uuid.uuid4()
    probes.append(Probe("post", f"/api/v1/process-groups/{a_root.pk}/connections",
                        f"/api/v1/process-groups/{a_root.pk}/connections", [str(gen), str(fake_gen)],
                        {"source": str(gen), "destination": str(gen), "selected_relationships": ["success"]},
                        {"source": str(fake_gen), "destination": str(fake_gen), "selected_relationships": ["success"]}))
    return probes


def _send(client, method: str, path: str, body) -> Any:
    if body is None:
        return getattr(client, method)(path)
    return getattr(client, method)(path, body, format="json")


@pytest.fixture
def probe_world(cluster, tenant_a, tenant_b, admin_a, settings):
    """Tenant B's objects, B's flow deployed after A's, and a node whose heartbeat names the
    cluster's flow (both tenants' versions, B's deployment) and node-wide figures (no process
    answers for it: what is asked of it times out, soon)."""
    settings.FLOWSITE_NODE_REQUEST_TIMEOUT = 0.2
    small_flow(tenant_a)
    assert token_client(admin_a).post("/api/v1/cluster/deployments", {}, format="json").status_code == 202
    b = TenantB(tenant_b, cluster_ready=True)
    latest = Deployment.objects.get(deploy_id=b.deploy_id)
    beat = Heartbeat("n1", address="n1:0", started_at=time.time(), sent_at=time.time(),
                     flow_fingerprint=latest.fingerprint, flow_version=latest.cluster_version,
                     deploy_id=latest.deploy_id, queued_count=987654)
    cluster.client.set(cluster.keys.heartbeat("n1"), beat.encode(), ex=60)
    cluster.client.hset(cluster.keys.nodes, "n1", NodeRecord("n1", NodeState.CONNECTED, "b-operator did it").encode())
    return b


def test_no_answer_without_ids_names_anything_of_b(probe_world, tenant_a, tenant_b, admin_a):
    """Every GET operation that names no object, and the portal's pages, as A's administrator:
    nothing of B appears (ids, names, slug, deployment, version label, node-wide figures)."""
    b = probe_world
    api_a = token_client(admin_a)
    marks = [str(pk) for pks in b.ids.values() for pk in pks] + [
        b.deploy_id, tenant_b.tenant.slug, tenant_b.tenant.name, "b-child", "b-funnel", "b-in", "b-out", "b-token",
        "b-service", "b-context", "b-label", "987654", "b-operator"]
    schema = api_a.get("/api/v1/schema/?format=json").json()
    pages = [path for path, operations in schema["paths"].items() if "{" not in path and "get" in operations
             and "/schema" not in path and "/docs" not in path and "/redoc" not in path]
    assert {"/api/v1/cluster/nodes", "/api/v1/cluster/deployments", "/api/v1/flow/status"} <= set(pages)
    portal = Client()
    portal.force_login(admin_a)
    answers = [(path, api_a.get(path)) for path in pages]
    answers += [(path, portal.get(path, follow=True)) for path in ("/", "/cluster/", "/tokens/", f"/groups/{tenant_a.root.pk}/",
                                                                   "/parameter-contexts/", "/bulletins/",
                                                                   f"/groups/{tenant_a.root.pk}/services/")]
    leaks = [f"{path} shows {mark!r}" for path, answer in answers for mark in marks
             if mark in answer.content.decode(errors="replace")]
    # The operators' endpoints answer a tenant administrator 403, naming nothing.
    expected = {path: 403 if path.startswith("/api/v1/platform/") else 200 for path, _ in answers}
    assert all(answer.status_code == expected[path] for path, answer in answers), [
        (p, a.status_code) for p, a in answers if a.status_code != expected[p]]
    assert not leaks, "\n".join(leaks)


def _caller(how: str, tenant_a, admin_a) -> APIClient:
    if how == "admin token":
        return token_client(admin_a)
    if how == "member token":
        return token_client(tenant_a.member())
    client = APIClient()  # a session, as the browsable API and the portal's scripts use
    client.force_login(admin_a)
    return client


@pytest.mark.parametrize("how", ["admin token", "admin session", "member token"])
def test_every_api_operation_answers_bs_ids_as_it_answers_random_ones(probe_world, tenant_a, admin_a, how):
    b = probe_world
    api_a = _caller(how, tenant_a, admin_a)
    schema = api_a.get("/api/v1/schema/?format=json")
    assert schema.status_code == 200
    probes = _api_probes(schema.json(), b) + _query_and_body_probes(b, tenant_a.root)
    covered = {p.theirs.split("?")[0] for p in probes}
    assert any("/cluster/deployments/" in path for path in covered) and len(probes) > 40
    for route in ("/provenance-analytics/", "/provenance/lineage/", "/provenance-exports/", "/provenance-events/",
                  "/listing-requests/", "/drop-requests/", "/flowfiles/"):
        assert any(route in path for path in covered), route
    differences = []
    for probe in probes:
        theirs = _masked(_send(api_a, probe.method, probe.theirs, probe.body), probe.masks)
        random_body = probe.body if probe.random_body is None else probe.random_body
        random = _masked(_send(api_a, probe.method, probe.random, random_body), probe.masks)
        if theirs != random:
            differences.append(f"{probe.method.upper()} {probe.theirs}: B's id → {theirs[0]} {theirs[2][:200]!r}; "
                               f"random → {random[0]} {random[2][:200]!r}")
    assert not differences, "\n".join(differences)
    assert b.state() == b.before, "the probe changed tenant B's objects"


def _portal_routes() -> list[str]:
    """The portal's routes that take an object id, as ``groups/<pk>/…`` patterns."""
    resolver = get_resolver()
    portal = next(p for p in resolver.url_patterns if getattr(p, "namespace", None) == "portal")
    return [str(p.pattern) for p in portal.url_patterns if isinstance(p, URLPattern)
            and ("<uuid:pk>" in str(p.pattern) or "<str:request_id>" in str(p.pattern))]


def test_every_portal_page_answers_bs_ids_as_it_answers_random_ones(probe_world, admin_a):
    b = probe_world
    portal = Client()
    portal.force_login(admin_a)
    routes = _portal_routes()
    assert {"groups/<uuid:pk>/", "processors/<uuid:pk>/delete", "tokens/<uuid:pk>/revoke"} <= set(routes)
    differences = []
    assert "provenance/analytics/<str:request_id>/" in routes
    for route in routes:
        if "<str:request_id>" in route:
            kind, candidates, placeholder = "analytics request", [b.requests["analytics"]], "<str:request_id>"
        else:
            kind, placeholder = _KIND_OF_PAGE[route.split("/")[0]], "<uuid:pk>"
            candidates = b.ids[kind] + (b.ids["output-port"] if kind == "input-port" else [])
        for theirs in candidates:
            fake = uuid.uuid4().hex if placeholder == "<str:request_id>" else uuid.uuid4()
            masks = [str(theirs), str(fake)]
            for method in ("get", "post"):
                answers = [_masked(getattr(portal, method)("/" + route.replace(placeholder, str(pk))), masks)
                           for pk in (theirs, fake)]
                if answers[0] != answers[1]:
                    differences.append(f"{method.upper()} /{route} with B's {kind}: {answers[0][:2]} "
                                       f"{answers[0][2][:200]!r}; random: {answers[1][:2]} {answers[1][2][:200]!r}")
    assert not differences, "\n".join(differences)
    assert b.state() == b.before, "the probe changed tenant B's objects"
