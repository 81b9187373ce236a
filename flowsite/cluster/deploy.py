"""Deploying a tenant's flow to the cluster.

A deployment exports the tenant's root group with instance identifiers, prefixes its parameter
contexts with the tenant's slug, seals its sensitive values (``engine.flow.sealed``, with the
tenant's own key derived from ``FLOWSITE_SENSITIVE_KEY``) and keeps the result as a
``Deployment``. It then assembles the cluster's flow — a root group (``root``) holding every
tenant's latest deployed root group, with all their parameter contexts — adds a snapshot of
every deployed tenant's members, groups and policies, publishes the bundle as the cluster's flow
(signed with the cluster key) and sends ``deploy`` to every connected node.
Deployments are serialised (a PostgreSQL advisory lock), so the flow published last holds every
tenant's latest deployment.

Tenants run independently: a processor's run state changes on the nodes through a command
(``processors/{id}/run-status``) long after its tenant deployed, so the cluster flow carries each
processor's run state as it is now (the design's), not as its deployment document has it — another
tenant's deployment then starts, stops and rebuilds nothing of a tenant whose own flow did not
change (``engine.runtime.flow_update`` keeps unchanged components running).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Iterable, Mapping

from django.db import connection
from rest_framework import exceptions

from engine.cluster.bundle import FlowBundle
from engine.cluster.cluster_flow import publish_flow
from engine.cluster.records import ClusterView
from engine.flow.sealed import seal_flow
from flowsite.cluster import redis as cluster_redis
from flowsite.cluster.models import Deployment
from flowsite.flows.actions import require_stopped
from flowsite.flows.definition import Identity, export_group, replace_contents
from flowsite.flows.diff import flow_difference
from flowsite.flows.models import Component, ComponentGroupPermission, ComponentUserPermission, FlowVersion, Processor
from flowsite.flows.secrets import current_key
from flowsite.flows.tenants import root_group
from flowsite.flows.validation import tenant_problems
from flowsite.tenancy.models import Membership, Tenant, TenantGroup, TenantGroupPermission, TenantUserPermission

__all__ = ["CLUSTER_ROOT", "InvalidDesign", "authorizations", "cluster_flow", "deploying", "design_at",
           "hold_deploy_lock", "invalid_design", "keep_deployment", "latest_deployments", "publish_deployment",
           "run_states", "tenant_document", "tenant_section"]

#: The identifier (and name) of the cluster flow's root group.
CLUSTER_ROOT = "root"
#: A processor's run state in a flow document, by its design state (as ``export_group`` writes it).
_RUN_STATE = {"STOPPED": "ENABLED", "RUNNING": "RUNNING", "DISABLED": "DISABLED"}
#: The advisory lock that serialises deployments ("flowsite deploy").
_DEPLOY_LOCK = 0x666C6F77_6465706C


def _prefix_contexts(document: dict[str, Any], slug: str) -> dict[str, Any]:
    """``document`` with its parameter contexts named ``<slug>/<name>``, references included."""
    def rename(name: str) -> str:
        return f"{slug}/{name}"

    def walk(group: dict[str, Any]) -> None:
        if group.get("parameterContextName"):
            group["parameterContextName"] = rename(group["parameterContextName"])
        for child in group.get("processGroups") or ():
            walk(child)

    walk(document["flowContents"])
    contexts = {}
    for name, context in (document.get("parameterContexts") or {}).items():
        context["name"] = rename(context.get("name", name))
        context["inheritedParameterContexts"] = [rename(n) for n in context.get("inheritedParameterContexts") or ()]
        contexts[rename(name)] = context
    document["parameterContexts"] = contexts
    return document


def tenant_document(tenant: Tenant) -> dict[str, Any]:
    """The tenant's root group as the cluster runs it: instance identifiers, parameter contexts
    prefixed with the tenant's slug, sensitive values sealed with the tenant's key."""
    document = _prefix_contexts(export_group(root_group(tenant), Identity.INSTANCE), tenant.slug)
    return seal_flow(document, current_key().key(str(tenant.id)))


def latest_deployments() -> list[Deployment]:
    """Every tenant's latest deployment, by tenant slug."""
    latest = (Deployment.objects.order_by("tenant_id", "-created_at", "-id").distinct("tenant_id")
              .select_related("tenant"))
    return sorted(latest, key=lambda d: d.tenant.slug)


def tenant_section(tenant: Tenant, group_identifier: str) -> dict[str, Any]:
    """What the nodes must know of a tenant to run its group: where it runs (``pool``) and what an
    operator granted it (the engine confines the group to that, see ``engine.confinement``); its
    ``id`` is what the nodes derive the tenant's key for sealed values from."""
    ports = None
    if tenant.listen_port_low is not None and tenant.listen_port_high is not None:
        ports = [tenant.listen_port_low, tenant.listen_port_high]
    return {"group": group_identifier, "id": str(tenant.id), "pool": tenant.pool,
            "capabilities": sorted(tenant.capabilities),
            "files": {"roots": list(tenant.file_roots)}, "network": {"allow": list(tenant.network_allow)},
            "listenPorts": ports}


@contextmanager
def deploying() -> Iterator[None]:
    """Keep other deployments and run-state changes out from the start of a deployment until its
    flow is published, after its transaction (a session-level hold of the deployment lock, which
    ``hold_deploy_lock`` in the same session then takes again at once)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [_DEPLOY_LOCK])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [_DEPLOY_LOCK])


def hold_deploy_lock() -> None:
    """Wait for any deployment in progress and keep others out until the current transaction
    ends: a run-state change holds it too, so a deployment never publishes a run state read
    before a change that commits while it publishes."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_DEPLOY_LOCK])


def run_states(deployments: Iterable[Deployment]) -> dict[str, str]:
    """The run state of every processor of the deployments' tenants as it is now (processor id →
    the flow document's ``scheduledState``)."""
    tenants = {deployment.tenant_id for deployment in deployments}
    return {str(pk): _RUN_STATE[state] for pk, state in
            Processor.objects.filter(tenant__in=tenants).values_list("pk", "scheduled_state")}


def _with_run_states(group: dict[str, Any], states: Mapping[str, str]) -> dict[str, Any]:
    """A copy of ``group`` whose processors have the run states ``states`` gives them."""
    group = copy.deepcopy(group)
    pending = [group]
    while pending:
        current = pending.pop()
        for processor in current.get("processors") or ():
            if processor.get("identifier") in states:
                processor["scheduledState"] = states[processor["identifier"]]
        pending.extend(current.get("processGroups") or ())
    return group


def cluster_flow(deployments: Iterable[Deployment], states: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The cluster's flow: a root group holding each deployment's root group, and a ``tenants``
    section naming each tenant's group, placement and grants; ``states`` (``run_states``) gives
    processors their run state of now."""
    groups, contexts, tenants = [], {}, {}
    for deployment in deployments:
        contents = deployment.document["flowContents"]
        if states:
            contents = _with_run_states(contents, states)
        group = dict(contents, groupIdentifier=CLUSTER_ROOT)
        groups.append(group)
        contexts.update(deployment.document.get("parameterContexts") or {})
        tenants[deployment.tenant.slug] = tenant_section(deployment.tenant, group["identifier"])
    contents = {"identifier": CLUSTER_ROOT, "name": CLUSTER_ROOT, "componentType": "PROCESS_GROUP",
                "processors": [], "connections": [], "funnels": [], "inputPorts": [], "outputPorts": [],
                "controllerServices": [], "processGroups": groups}
    return {"flowEncodingVersion": "1.0", "flowContents": contents, "parameterContexts": dict(sorted(contexts.items())),
            "tenants": tenants}


def _holders(rows: Iterable[tuple[Any, ...]]) -> dict[str, list[str]]:
    found: dict[str, set[str]] = {}
    for holder, action in rows:
        found.setdefault(action, set()).add(holder)
    return {action: sorted(holders) for action, holders in sorted(found.items())}


def authorizations(tenants: Iterable[Tenant]) -> dict[str, Any]:
    """Members, groups and policies of ``tenants`` as plain sorted data (holders read
    ``user:<username>`` or ``group:<name>``)."""
    snapshot = {}
    for tenant in sorted(tenants, key=lambda t: t.slug):
        groups = {group.name: sorted(group.group.user_set.values_list("username", flat=True))
                  for group in TenantGroup.objects.filter(tenant=tenant).select_related("group")}
        global_rows = [(f"user:{u}", a) for u, a in TenantUserPermission.objects.filter(content_object=tenant)
                       .values_list("user__username", "permission__codename")]
        global_rows += [(f"group:{g}", a) for g, a in TenantGroupPermission.objects.filter(content_object=tenant)
                        .values_list("group__tenant_group__name", "permission__codename")]
        components: dict[str, list[tuple[str, str]]] = {}
        for component, user, action in ComponentUserPermission.objects.filter(
                content_object__tenant=tenant).values_list("content_object_id", "user__username", "permission__codename"):
            components.setdefault(str(component), []).append((f"user:{user}", action))
        for component, group, action in ComponentGroupPermission.objects.filter(
                content_object__tenant=tenant).values_list("content_object_id", "group__tenant_group__name",
                                                           "permission__codename"):
            components.setdefault(str(component), []).append((f"group:{group}", action))
        snapshot[tenant.slug] = {
            "members": sorted(Membership.objects.filter(tenant=tenant).values_list("user__username", flat=True)),
            "groups": dict(sorted(groups.items())),
            "policies": {"global": _holders(global_rows),
                         "components": {c: _holders(rows) for c, rows in sorted(components.items())}},
        }
    return {"tenants": snapshot}


def design_at(tenant: Tenant, number: int, modifier: str) -> None:
    """Make the tenant's root group match its version ``number``, unless it already does."""
    root = root_group(tenant)
    version = FlowVersion.objects.filter(group=root, number=number).first()
    if version is None:
        raise exceptions.ValidationError({"version": f"the root group of {tenant.slug} has no version {number}"})
    if not flow_difference(version.definition, export_group(root, Identity.VERSIONED)):
        return
    require_stopped(root, f"deploying version {number} (the design differs from it), or deploy the design as it is")
    replace_contents(root, version.definition, modifier=modifier)


class InvalidDesign(exceptions.APIException):
    """400: the tenant's design has problems; ``problems`` lists them (nothing is deployed)."""

    status_code = 400
    default_code = "invalid_design"

    def __init__(self, problems: list[dict[str, str]]) -> None:
        super().__init__(f"the design has {len(problems)} problem(s): fix them before deploying")
        self.problems = problems


def invalid_design(tenant: Tenant) -> list[dict[str, str]]:
    found = tenant_problems(tenant)
    names = dict(Component.objects.filter(pk__in=found).values_list("pk", "name"))
    return [{"path": problem.path or "$", "message": f"{names.get(pk, pk)}: {problem.message}"}
            for pk, problems in found.items() for problem in problems]


def keep_deployment(deployment: Deployment) -> FlowBundle:
    """Save ``deployment`` and return the cluster's flow holding it and every other tenant's
    latest deployment. Call in a transaction that holds the deployment lock."""
    included = [d for d in latest_deployments() if d.tenant_id != deployment.tenant_id] + [deployment]
    included.sort(key=lambda d: d.tenant.slug)
    bundle = FlowBundle(cluster_flow(included, run_states(included)), authorizations(d.tenant for d in included))
    deployment.fingerprint = bundle.fingerprint
    deployment.cluster_version = ",".join(f"{d.tenant.slug}:{d.label}" for d in included)
    deployment.save()
    return bundle


def publish_deployment(deployment: Deployment, bundle: FlowBundle) -> list[str]:
    """Publish ``bundle`` (kept with ``deployment``) as the cluster's flow and tell the connected
    nodes (returned); raises redis.RedisError. Call once the deployment has committed, still
    holding ``deploying()``."""
    client, keys = cluster_redis.client(), cluster_redis.keys()
    publish_flow(client, keys, bundle, version=deployment.cluster_version, deploy_id=deployment.deploy_id,
                 signer=cluster_redis.command_signer())
    nodes = ClusterView(client, keys).connected()
    if nodes:
        cluster_redis.bus().send(nodes, "deploy", {"deploy_id": deployment.deploy_id,
                                                   "fingerprint": deployment.fingerprint})
    return nodes
