"""The cluster page: the nodes (platform operators disconnect, offload, reconnect and remove them), the tenant's
deployments (deploy the design or a version) and each node's report on the latest one. A tenant
user sees of the nodes only the session tenant's figures (``flowsite.cluster.visibility``)."""

from __future__ import annotations

import redis
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from rest_framework import exceptions

from engine.cluster.cluster_flow import read_reports
from engine.cluster.records import NodeStateError, remove_node, request_disconnect, request_offload, request_reconnect
from flowsite.api.lookup import access_for
from flowsite.cluster.actions import do_deploy
from flowsite.cluster.deploy import InvalidDesign
from flowsite.cluster import redis as cluster_redis
from flowsite.cluster import visibility
from flowsite.cluster.indicator import indicator
from flowsite.cluster.models import Deployment
from flowsite.cluster.nodes import nodes
from flowsite.cluster.visibility import ClusterSight
from flowsite.flows import access as policies
from flowsite.flows.actions import RunningProcessors
from flowsite.flows.models import FlowVersion
from flowsite.flows.tenants import root_group
from flowsite.portal.tenancy import current_tenant
from flowsite.tenancy.models import is_platform_operator


@login_required
def index(request):
    """The cluster page."""
    tenant = current_tenant(request)
    if tenant is None:
        return render(request, "portal/no_tenant.html")
    sight = ClusterSight(request.user, [tenant])
    readable = visibility.may_read_deployments(request.user, tenant)
    context = {"tenant": tenant, "indicator": indicator(tenant), "can_change_nodes": sight.operator,
               "can_view_nodes": sight.may_view_nodes,
               "can_deploy": access_for(request, tenant).has_global(policies.MODIFY_FLOW),
               "can_view_deployments": readable,
               "deployments": list(Deployment.objects.filter(tenant=tenant).select_related("created_by")[:10])
               if readable else [],
               "versions": list(FlowVersion.objects.filter(group=root_group(tenant)).order_by("-number")
                                .values_list("number", flat=True)),
               "nodes": [], "reports": [], "pending": []}
    latest = context["deployments"][0] if context["deployments"] else None
    if context["indicator"].state != "unreachable":
        client, keys = cluster_redis.client(), cluster_redis.keys()
        try:
            if context["can_view_nodes"]:
                context["nodes"] = sight.nodes(nodes().values())
            if latest is not None:
                reports = read_reports(client, keys, latest.deploy_id)
                context["reports"] = [sight.report(reports[node]) for node in sorted(reports)]
                context["pending"] = [n["node"] for n in context["nodes"]
                                      if n["state"] == "CONNECTED" and n["node"] not in reports]
        except redis.RedisError:
            context["indicator"] = indicator(tenant)
    return render(request, "portal/cluster.html", context)


def _node_action(request, node: str, action, done: str):
    if not is_platform_operator(request.user):
        messages.error(request, "You may not change the cluster's nodes: only platform operators may.")
        return redirect("portal:cluster")
    try:
        action(cluster_redis.client(), cluster_redis.keys(), node)
    except NodeStateError as error:
        messages.error(request, str(error))
    except redis.RedisError:
        messages.error(request, cluster_redis.unreachable_message())
    else:
        messages.success(request, f"Node {node}: {done}.")
    return redirect("portal:cluster")


@login_required
@require_POST
def disconnect(request, node):
    """Ask a node to leave the cluster."""
    return _node_action(request, node, lambda client, keys, name: request_disconnect(
        client, keys, name, f"disconnected by {request.user.get_username()}"), "disconnection requested")


@login_required
@require_POST
def reconnect(request, node):
    """Let a disconnected node connect again."""
    return _node_action(request, node, request_reconnect, "reconnection requested")


@login_required
@require_POST
def offload(request, node):
    """Ask a disconnected node to send its queued FlowFiles to the connected nodes."""
    return _node_action(request, node, lambda client, keys, name: request_offload(
        client, keys, name, cluster_redis.bus(), f"offloaded by {request.user.get_username()}"),
        "offload requested; remove it once it is offloaded")


@login_required
@require_POST
def remove(request, node):
    """Forget a disconnected or offloaded node."""
    return _node_action(request, node, remove_node, "removed from the cluster")


@login_required
@require_POST
def deploy(request):
    """Deploy the session's tenant: its design, or the version chosen."""
    tenant = current_tenant(request)
    if tenant is None or not access_for(request, tenant).has_global(policies.MODIFY_FLOW):
        messages.error(request, "You may not deploy this tenant's flow (the 'modify_flow' policy).")
        return redirect("portal:cluster")
    raw = request.POST.get("version", "")
    if raw and not raw.isdigit():
        messages.error(request, f"{raw!r} is not a version number.")
        return redirect("portal:cluster")
    try:
        deployment, nodes = do_deploy(tenant, request.user, int(raw) if raw else None)
    except InvalidDesign as error:
        messages.error(request, f"{error.detail} — " + "; ".join(p["message"] for p in error.problems))
    except exceptions.APIException as error:
        messages.error(request, _detail(error.detail))
    except RunningProcessors as error:
        messages.error(request, str(error))
    except redis.RedisError:
        messages.error(request, f"{cluster_redis.unreachable_message()}: nothing was deployed.")
    else:
        told = ", ".join(nodes) if nodes else "no node is connected"
        messages.success(request, f"Deployed {deployment.label} ({deployment.deploy_id[:8]}); sent to: {told}.")
    return redirect("portal:cluster")


def _detail(detail) -> str:
    if isinstance(detail, dict):
        return "; ".join(_detail(value) for value in detail.values())
    if isinstance(detail, list):
        return "; ".join(_detail(value) for value in detail)
    return str(detail)
