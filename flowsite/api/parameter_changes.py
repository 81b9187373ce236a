"""Creating, updating and deleting parameter contexts once their serializer has validated the
request: the rules besides the serializer's (the user's policies, unique names, a bound or
inherited context) checked, and the change handed to its action
(``flowsite.flows.parameter_actions``). The REST API and the portal both change contexts
through here; a refused change raises the API's exceptions.

Contexts are tenant-wide, so the root group's policies govern them: viewing it to read them,
modifying it to change them."""

from __future__ import annotations

from rest_framework import exceptions

from flowsite.api.errors import Conflict
from flowsite.api.lookup import access_for, tenants_of
from flowsite.flows import access as policies
from flowsite.flows.models import ParameterContext
from flowsite.flows.parameter_actions import (
    do_create_parameter_context,
    do_delete_parameter_context,
    do_update_parameter_context,
)
from flowsite.flows.tenants import root_group

_WORDS = {policies.VIEW: "view", policies.MODIFY: "modify"}


def may(request, tenant, action: str) -> bool:
    """True when the user may ``action`` (VIEW or MODIFY) the parameter contexts of ``tenant``."""
    return access_for(request, tenant).can(root_group(tenant), action)


def visible_contexts(request):
    """The parameter contexts of the user's tenants that the user may view."""
    tenants = [t.pk for t in tenants_of(request) if may(request, t, policies.VIEW)]
    return ParameterContext.objects.filter(tenant__in=tenants).order_by("name", "id")


def context_or_404(request, pk, action: str) -> ParameterContext:
    """The parameter context ``pk`` if the user's tenant holds it and the user may ``action`` it;
    another tenant's is not found, like a missing one."""
    context = ParameterContext.objects.select_related("tenant").filter(pk=pk).first()
    if context is None or not access_for(request, context.tenant).is_member:
        raise exceptions.NotFound("no such parameter context")
    if not may(request, context.tenant, action):
        raise exceptions.PermissionDenied(f"you may not {_WORDS[action]} the parameter contexts of this tenant")
    return context


def _check_name(context: ParameterContext, name: str) -> None:
    if ParameterContext.objects.filter(tenant_id=context.tenant_id, name=name).exclude(pk=context.pk).exists():
        raise exceptions.ValidationError({"name": f"the tenant has a parameter context named {name!r} already"})


def _heirs(context: ParameterContext) -> list[str]:
    return sorted(c.name for c in ParameterContext.objects.filter(tenant_id=context.tenant_id)
                  if context.name in (c.inherited or ()))


def create(request, tenant, serializer) -> ParameterContext:
    """Create in ``tenant`` the context a validated ``serializer`` describes."""
    if not may(request, tenant, policies.MODIFY):
        raise exceptions.PermissionDenied("you may not modify the parameter contexts of this tenant")
    data = serializer.validated_data
    if not data.get("name"):
        raise exceptions.ValidationError({"name": "a parameter context needs a name"})
    context = ParameterContext(tenant=tenant, name=data["name"], description=data.get("description", ""))
    _check_name(context, context.name)
    return do_create_parameter_context(context, data.get("parameters") or [], acting_user=request.user,
                                       client_id=(data.get("revision") or {}).get("clientId", ""))


def update(request, context: ParameterContext, serializer) -> ParameterContext:
    """Apply the change a validated ``serializer`` of ``context`` holds, if its revision is current."""
    data = serializer.validated_data
    revision = data.get("revision")
    if revision is None:
        raise exceptions.ValidationError({"revision": "an update names the revision it is based on"})
    if "tenant_id" in data and data["tenant_id"] != context.tenant_id:
        raise exceptions.ValidationError({"tenantId": "a parameter context cannot move to another tenant"})

    def check(locked: ParameterContext) -> None:
        name = data.get("name")
        if name and name != locked.name:
            _check_name(locked, name)
            if _heirs(locked):
                raise Conflict(f"{locked.name} is inherited by {', '.join(_heirs(locked))}: it cannot be renamed")

    return do_update_parameter_context(context, lambda c: serializer.apply(c, data), data.get("parameters"),
                                       version=revision.get("version"), client_id=revision.get("clientId") or "",
                                       acting_user=request.user, check=check)


def _check_delete(context: ParameterContext) -> None:
    groups = sorted(str(pk) for pk in context.groups.values_list("pk", flat=True))
    if groups:
        raise Conflict(f"parameter context {context.name} is bound to process group(s) {', '.join(groups)}: "
                       "bind them to another context (or none) first")
    if _heirs(context):
        raise Conflict(f"parameter context {context.name} is inherited by {', '.join(_heirs(context))}")


def delete(request, context: ParameterContext, version: int | None, client_id: str) -> None:
    """Delete ``context`` if the revision is current and no group uses it."""
    do_delete_parameter_context(context, version=version, client_id=client_id, acting_user=request.user,
                                check=_check_delete)
