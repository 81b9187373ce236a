"""What each kind of person sees of the shared cluster, decided in one place.

Platform operators (the model permission ``tenancy.operate_platform``; superusers hold it) run
the cluster: they see every node as it is and every tenant's deployments, and only they change
nodes. A tenant user never learns that another tenant exists: a node shows such a user its state,
roles and heartbeat times, with figures summed over the components of the user's own tenants
(those where the user holds ``view_cluster``), the cluster's version label reduced to those
tenants, the deployment of theirs the node runs, and neutral texts where the node's or an
operator's words could name another tenant or an operator; not the node's Spark UI, which shows
every tenant's Spark jobs. Deployments are those of tenants the
user belongs to and whose root group the user may view (``restrict_deployments``, NetBox's
``restrict()`` style); a deployment's document is shown only when the user may view every
component in it, else 403 naming the first one by id (as flow-definition exports answer).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Iterable

from django.db.models import QuerySet
from rest_framework import exceptions

from engine.cluster.cluster_flow import DeployReport
from engine.cluster.records import NodeView
from flowsite.cluster.models import Deployment
from flowsite.cluster.nodes import node_entry
from flowsite.cluster.status import tenant_node_figures
from flowsite.flows.access import VIEW, VIEW_CLUSTER, TenantAccess, first_hidden
from flowsite.flows.models import Component
from flowsite.flows.tenants import root_group
from flowsite.tenancy.models import OPERATE_PLATFORM_PERMISSION, Tenant, is_platform_operator

__all__ = ["ClusterSight", "may_read_deployments", "readable_tenants", "require_operator",
           "require_document", "restrict_deployments", "running_deployment", "version_for"]

_NEUTRAL_REPORTS = {
    "applied": "the node applied the cluster's flow",
    "unchanged": "the node already runs the cluster's flow",
    "refused": "the node refused the cluster's flow; a platform operator can see why",
    "failed": "the node could not apply the cluster's flow; a platform operator can see why",
}
_FIGURES = ("active_threads", "queued_count", "queued_bytes")


def require_operator(user, what: str) -> None:
    """403 unless ``user`` is a platform operator."""
    if not is_platform_operator(user):
        raise exceptions.PermissionDenied(f"you may not {what}: only platform operators may (the "
                                          f"'{OPERATE_PLATFORM_PERMISSION}' permission)")


def may_read_deployments(user, tenant: Tenant) -> bool:
    """True when ``user`` may read ``tenant``'s deployments: an operator, or a member who may
    view the tenant's root group."""
    return is_platform_operator(user) or TenantAccess(user, tenant).can(root_group(tenant), VIEW)


def readable_tenants(user) -> list[Tenant]:
    """The tenants of ``user`` whose deployments ``user`` may read."""
    return [tenant for tenant in user.tenants.order_by("slug") if may_read_deployments(user, tenant)]


def restrict_deployments(queryset: QuerySet, user) -> QuerySet:
    """``queryset`` of deployments reduced to those ``user`` may read (every one for an operator)."""
    if is_platform_operator(user):
        return queryset
    return queryset.filter(tenant__in=readable_tenants(user))


def running_deployment(tenant: Tenant, fingerprint: str) -> Deployment | None:
    """``tenant``'s deployment held by the cluster flow of ``fingerprint`` (each deployment
    publishes every tenant's latest one), or None when the flow is none of the deployments'."""
    if not fingerprint:
        return None
    published = Deployment.objects.filter(fingerprint=fingerprint).order_by("-created_at", "-id").first()
    if published is None:
        return None
    if published.tenant_id == tenant.pk:
        return published
    return Deployment.objects.filter(tenant=tenant, created_at__lte=published.created_at).first()


def _reduced_version(label: str, slugs: set[str]) -> str:
    """``a:v1,b:design`` reduced to the entries of ``slugs``."""
    return ",".join(part for part in label.split(",") if part.partition(":")[0] in slugs)


class ClusterSight:
    """What ``user`` sees of the cluster's nodes and deployment reports: everything for an
    operator, else what concerns ``tenants`` (default: the user's tenants where the user holds
    ``view_cluster``; any given tenant the user does not hold it in is left out)."""

    def __init__(self, user, tenants: Iterable[Tenant] | None = None) -> None:
        self.user = user
        self.operator = is_platform_operator(user)
        candidates = list(user.tenants.order_by("slug")) if tenants is None else list(tenants)
        self.tenants = [tenant for tenant in candidates if TenantAccess(user, tenant).has_global(VIEW_CLUSTER)]

    @property
    def may_view_nodes(self) -> bool:
        return self.operator or bool(self.tenants)

    def require_nodes(self) -> None:
        """403 unless the user may list the nodes."""
        if not self.may_view_nodes:
            raise exceptions.PermissionDenied("you may not view the cluster's nodes (the 'view_cluster' policy of "
                                              "one of your tenants)")

    def nodes(self, views: Iterable[NodeView]) -> list[dict[str, Any]]:
        """The nodes as the user sees them (raises redis.RedisError when a tenant's figures are
        asked of unreachable nodes)."""
        views = list(views)
        if self.operator:
            return [node_entry(view) for view in views]
        figures = tenant_node_figures(self.tenants) if views else {}
        return [self._tenant_entry(view, figures.get(view.node)) for view in views]

    def _tenant_entry(self, view: NodeView, figures: dict[str, int] | None) -> dict[str, Any]:
        entry = node_entry(view)
        entry["reason"] = ""
        entry["sparkUiUrl"] = None  # the Spark UI shows every tenant's jobs and queries
        beat = view.heartbeat
        if beat is not None:
            heartbeat = asdict(beat)
            heartbeat.update({name: figures[name] if figures is not None else None for name in _FIGURES})
            running = self._running(beat.flow_fingerprint)
            heartbeat.update(flow_fingerprint=running.fingerprint if running else "",
                             deploy_id=running.deploy_id if running else "",
                             flow_version=self.version(beat.flow_version),
                             refused="refused the cluster's flow" if beat.refused else "", spark_ui_url="")
            entry["heartbeat"] = heartbeat
        return entry

    def _running(self, fingerprint: str) -> Deployment | None:
        """The newest deployment of the user's tenants the cluster flow ``fingerprint`` holds."""
        found = [d for d in (running_deployment(t, fingerprint) for t in self.tenants) if d is not None]
        return max(found, key=lambda d: (d.created_at, d.pk), default=None)

    def version(self, label: str) -> str:
        """A cluster version label as the user may see it."""
        return label if self.operator else _reduced_version(label or "", {t.slug for t in self.tenants})

    def report(self, report: DeployReport) -> dict[str, Any]:
        """A node's report on a deployment as the user may see it: for a tenant user, the status
        with a neutral message (the node's own words may name any tenant's components)."""
        data = report.as_dict()
        if not self.operator:
            data.update(message=_NEUTRAL_REPORTS.get(report.status, "the node reported"), problems=[])
        return data


def version_for(user, label: str) -> str:
    """A cluster version label reduced to the tenants ``user`` belongs to (whole for an operator)."""
    if is_platform_operator(user):
        return label
    return _reduced_version(label or "", set(user.tenants.values_list("slug", flat=True)))


def require_document(user, deployment: Deployment) -> None:
    """403 unless ``user`` may view every component of ``deployment``'s document (a component
    deleted since is judged by the nearest enclosing group of the document that still exists)."""
    if is_platform_operator(user):
        return
    access = TenantAccess(user, deployment.tenant)
    present = {str(pk): pk for pk in Component.objects.filter(tenant=deployment.tenant).values_list("pk", flat=True)}
    root = (deployment.document or {}).get("flowContents") or {}
    owner = present.get(str(root.get("identifier")))
    if owner is None or not access.can(owner, VIEW):
        hidden = ("process group", root.get("identifier"))
    else:
        hidden = first_hidden(access, root, lambda identifier: present.get(str(identifier)), owner)
    if hidden is not None:
        kind, identifier = hidden
        raise exceptions.PermissionDenied(
            f"you may not view the {str(kind).lower().replace('_', ' ')} {identifier} of this deployment: reading a "
            "deployed document needs the view policy on everything in it")
