"""The tenant a portal session works in (kept in the session; the first of the user's tenants
by default)."""

from __future__ import annotations

from flowsite.tenancy.models import Tenant

SESSION_KEY = "flowsite.tenant"


def current_tenant(request) -> Tenant | None:
    """The tenant the session works in, or None for a user without tenants."""
    cached = getattr(request, "_flowsite_tenant", None)
    if cached is not None:
        return cached
    tenants = request.user.tenants.all()
    chosen = tenants.filter(pk=request.session.get(SESSION_KEY)).first() or tenants.first()
    request._flowsite_tenant = chosen
    return chosen


def switch_tenant(request, tenant: Tenant) -> None:
    """Make ``tenant`` (one of the user's) the session's tenant."""
    request.session[SESSION_KEY] = str(tenant.pk)
    request._flowsite_tenant = tenant
