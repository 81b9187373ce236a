"""Finding the component a portal URL names, with the API's rules (``flowsite.api.lookup``): a
component of a tenant the user is not a member of does not exist (404), one the user lacks the
policy for is forbidden (403). Opening a component of another of the user's tenants makes that
tenant the session's."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions

from flowsite.api import lookup
from flowsite.flows.access import TenantAccess
from flowsite.portal.tenancy import current_tenant, switch_tenant


def component_or_404(request, model, pk, action: str):
    """The ``model`` instance ``pk`` if the user may ``action`` it (Http404 / PermissionDenied)."""
    try:
        component = lookup.component_or_404(request, model, pk, action)
    except exceptions.NotFound as error:
        raise Http404(str(error.detail)) from None
    except exceptions.PermissionDenied as error:
        raise PermissionDenied(str(error.detail)) from None
    if current_tenant(request) != component.tenant:
        switch_tenant(request, component.tenant)
    return component


def access(request, component) -> TenantAccess:
    """The user's access to ``component``'s tenant, resolved once per request."""
    return tenant_access(request, component.tenant)


def tenant_access(request, tenant) -> TenantAccess:
    """The user's access to ``tenant``, resolved once per request."""
    return lookup.access_for(request, tenant)
