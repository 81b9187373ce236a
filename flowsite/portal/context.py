"""Template context shared by every portal page."""

from __future__ import annotations

from flowsite.portal.tenancy import current_tenant


def tenant(request) -> dict:
    """The current tenant and the others the user can switch to."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"current_tenant": current_tenant(request), "user_tenants": list(user.tenants.all())}
