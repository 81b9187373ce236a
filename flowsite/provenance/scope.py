"""What of the nodes' provenance and queues a user reaches (NiFi's provenance policies).

The nodes only ever receive a *scope*: the ids of the components whose events may leave the
node. It holds components of the user's own tenants only (an API token narrowed to one tenant:
of that tenant only), so another tenant's events never leave a node whatever is asked.

- A search — provenance query, lineage, export, analytics — needs the tenant's global *query
  provenance* policy; its ``visible`` components are those of such tenants on which the user
  holds *view provenance*. A query is scoped to them; lineage to every component of those
  tenants, the others becoming NiFi's UNKNOWN placeholders.
- A single event is scoped to every component of the user's tenants: one of them answers 403
  naming the missing policy, anything else is not found.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from rest_framework import exceptions

from flowsite.api.lookup import access_for, tenant_or_404, tenants_of
from flowsite.flows.access import QUERY_PROVENANCE, VIEW_PROVENANCE, TenantAccess
from flowsite.flows.models import Component
from flowsite.tenancy.models import Tenant, is_platform_operator

__all__ = ["Reach", "accesses", "accesses_of", "require_query", "searchable", "shown_nodes", "single"]


@dataclass(frozen=True)
class Reach:
    """The ``tenants`` (ids as text) a request covers, all their ``components`` and the
    ``visible`` ones among them (ids as text)."""

    tenants: tuple[str, ...]
    components: frozenset[str]
    visible: frozenset[str]


def _components_of(tenant_ids) -> frozenset[str]:
    return frozenset(str(pk) for pk in Component.objects.filter(tenant__in=tenant_ids).values_list("pk", flat=True))


def _refused(one_tenant: bool) -> exceptions.PermissionDenied:
    return exceptions.PermissionDenied(f"you may not query provenance (the '{QUERY_PROVENANCE}' policy of "
                                       f"{'this tenant' if one_tenant else 'one of your tenants'})")


def require_query(request) -> None:
    """403 unless the user may query the provenance of one of their tenants."""
    if not any(access_for(request, tenant).has_global(QUERY_PROVENANCE) for tenant in tenants_of(request)):
        raise _refused(False)


def searchable(request, tenant_id=None) -> Reach:
    """The reach of a search by ``request``'s user, in the tenant ``tenant_id`` (404 if not one
    of theirs) or in every tenant of theirs; 403 when they may query no tenant's provenance."""
    tenants = [tenant_or_404(request, tenant_id)] if tenant_id is not None else list(tenants_of(request))
    queried: list[str] = []
    visible: set[str] = set()
    for tenant in tenants:
        access = access_for(request, tenant)
        if access.has_global(QUERY_PROVENANCE):
            queried.append(str(tenant.pk))
            visible.update(str(pk) for pk in Component.objects.restrict(access, VIEW_PROVENANCE)
                           .values_list("pk", flat=True))
    if not queried:
        raise _refused(tenant_id is not None)
    return Reach(tuple(queried), _components_of(queried), frozenset(visible))


def single(request) -> Reach:
    """The reach of a request for one event: every component of the user's tenants (whether
    they may see it is decided on the event's own component)."""
    tenants = [str(pk) for pk in tenants_of(request).values_list("pk", flat=True)]
    components = _components_of(tenants)
    return Reach(tuple(tenants), components, components)


def accesses(request) -> dict[str, TenantAccess]:
    """The requesting user's access to each of their tenants, by tenant id (as text)."""
    return {str(tenant.pk): access_for(request, tenant) for tenant in tenants_of(request)}


def accesses_of(user_pk: int, tenant_ids) -> dict[str, TenantAccess]:
    """The access of user ``user_pk`` to each of ``tenant_ids`` (those a request was scoped to
    when it was made, a narrowed token's tenant only), for a job that has no HTTP request."""
    user = get_user_model().objects.filter(pk=user_pk).first()
    if user is None:
        return {}
    return {str(tenant.pk): TenantAccess(user, tenant) for tenant in Tenant.objects.filter(pk__in=list(tenant_ids))}


def shown_nodes(nodes: dict, user) -> dict:
    """A request's ``nodes`` as ``user`` sees them: a missing node's own words (``detail``, which
    may name anything the node holds) for platform operators only."""
    if is_platform_operator(user):
        return nodes
    return {**nodes, "missing": [{"node": entry["node"], "reason": entry["reason"]}
                                 for entry in nodes.get("missing") or ()]}
