"""Finding the objects a request names, as the requesting user may see them: another tenant's
objects are not found (404), a component of one's own tenant without the policy is 403."""

from __future__ import annotations

from rest_framework import exceptions

from flowsite.flows.access import TenantAccess
from flowsite.tenancy.models import Tenant

#: How an answer names each component action ("you may not <words> this processor").
ACTION_WORDS = {
    "view_component": "view", "modify_component": "modify", "view_data": "view the data of",
    "modify_data": "modify the data of", "view_provenance": "view the provenance of",
    "operate_component": "operate",
}


def _token_tenant_id(request):
    """The one tenant the request's API token is scoped to, or None (unscoped token, session)."""
    return getattr(getattr(request, "auth", None), "tenant_id", None)


def tenants_of(request):
    """The tenants the requesting user belongs to, narrowed to its token's tenant if scoped."""
    tenants = request.user.tenants.all()
    scoped = _token_tenant_id(request)
    return tenants if scoped is None else tenants.filter(pk=scoped)


def access_for(request, tenant: Tenant) -> TenantAccess:
    """The requesting user's access to ``tenant``, resolved once per request. A token scoped to
    another tenant is no member here: that tenant's objects do not exist for it."""
    cache = getattr(request, "_flowsite_access", None)
    if cache is None:
        cache = request._flowsite_access = {}
    access = cache.get(tenant.pk)
    if access is None:
        access = cache[tenant.pk] = scoped_access(request.user, tenant, _token_tenant_id(request))
    return access


def scoped_access(user, tenant: Tenant, token_tenant_id=None) -> TenantAccess:
    """``user``'s access to ``tenant`` through a credential scoped to the tenant ``token_tenant_id``
    (None: unscoped, or a session): scoped to another tenant, the user is no member here."""
    access = TenantAccess(user, tenant)
    if token_tenant_id is not None and token_tenant_id != tenant.pk:
        access.is_member = False
    return access


def tenant_or_404(request, pk) -> Tenant:
    """A tenant the user is a member of."""
    tenant = Tenant.objects.filter(pk=pk).first()
    if tenant is None or not access_for(request, tenant).is_member:
        raise exceptions.NotFound("no such tenant")
    return tenant


def component_or_404(request, model, pk, action: str):
    """The ``model`` instance ``pk`` if the user's tenant holds it and the user may ``action`` it."""
    component = model.objects.select_related("tenant").filter(pk=pk).first()
    noun = model.__name__.lower().replace("processgroup", "process group").replace("controllerservice",
                                                                                  "controller service")
    if component is None or not access_for(request, component.tenant).is_member:
        raise exceptions.NotFound(f"no such {noun}")
    if not access_for(request, component.tenant).can(component, action):
        raise exceptions.PermissionDenied(f"you may not {ACTION_WORDS[action]} this {noun}")
    return component


def require_global(request, tenant: Tenant, action: str, what: str) -> None:
    """Raise 403 unless the user holds the global policy ``action`` of ``tenant``."""
    if not access_for(request, tenant).has_global(action):
        raise exceptions.PermissionDenied(f"you may not {what} (the tenant's '{action}' policy)")
