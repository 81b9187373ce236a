"""The landing page and switching the tenant a session works in."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from flowsite.flows.tenants import root_group
from flowsite.portal.tenancy import current_tenant, switch_tenant


@login_required
def home(request):
    """The root group of the current tenant (a notice for a user without tenants)."""
    tenant = current_tenant(request)
    if tenant is None:
        return render(request, "portal/no_tenant.html")
    return redirect("portal:group", root_group(tenant).pk)


@login_required
@require_POST
def switch(request):
    """Make one of the user's tenants the current one; any other tenant is not found."""
    try:
        pk = uuid.UUID(request.POST.get("tenant", ""))
    except ValueError:
        raise Http404("no such tenant") from None
    tenant = request.user.tenants.filter(pk=pk).first()
    if tenant is None:
        raise Http404("no such tenant")
    switch_tenant(request, tenant)
    messages.info(request, f"You are now working in {tenant.name}.")
    return redirect("portal:home")
