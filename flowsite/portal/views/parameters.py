"""Parameter contexts in the portal: the session tenant's list with a form to add one, a
context's page (its parameters, sensitive ones shown as set but never their values, rows to add
parameters) and binding a group to a context from the group's page. Changes go through
``flowsite.api.parameter_changes`` and the API's serializers, so the pages accept and refuse
what the API does.

Posted parameter fields: ``value[<name>]``, ``description[<name>]``, ``remove[<name>]`` for the
existing ones (a sensitive one left empty keeps its value), ``new-name-<i>``, ``new-value-<i>``,
``new-sensitive-<i>``, ``new-description-<i>`` for new ones."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from rest_framework import exceptions

from flowsite.api import parameter_changes as changes
from flowsite.api.serializers.groups import ProcessGroupSerializer
from flowsite.api.serializers.parameters import ParameterContextSerializer
from flowsite.flows import access as policies
from flowsite.flows.models import ParameterContext, ProcessGroup
from flowsite.flows.revisions import StaleRevisionError
from flowsite.portal import editing
from flowsite.portal.lookup import component_or_404
from flowsite.portal.tenancy import current_tenant, switch_tenant

#: Blank rows offered for new parameters.
NEW_ROWS = 3


def _context_or_404(request, pk, action: str) -> ParameterContext:
    try:
        context = changes.context_or_404(request, pk, action)
    except exceptions.NotFound as error:
        raise Http404(str(error.detail)) from None
    except exceptions.PermissionDenied as error:
        raise PermissionDenied(str(error.detail)) from None
    if current_tenant(request) != context.tenant:
        switch_tenant(request, context.tenant)
    return context


def _attempt(change) -> tuple[object | None, list[str]]:
    """Run ``change``; (its result, []) or (None, why it was refused)."""
    try:
        return change(), []
    except StaleRevisionError as error:
        return None, [editing.stale_message(error)]
    except exceptions.APIException as error:
        return None, editing.messages(error.detail)


@login_required
def index(request):
    """The session tenant's parameter contexts; POST adds one (name and description)."""
    tenant = current_tenant(request)
    if tenant is None:
        return render(request, "portal/no_tenant.html")
    if not changes.may(request, tenant, policies.VIEW):
        raise PermissionDenied("you may not view the parameter contexts of this tenant")
    posted = {"name": request.POST.get("name", "").strip(), "description": request.POST.get("description", "")}
    errors: list[str] = []
    if request.method == "POST":
        serializer = ParameterContextSerializer(data=posted, context={"request": request})
        if serializer.is_valid():
            context, errors = _attempt(lambda: changes.create(request, tenant, serializer))
            if context is not None:
                messages.success(request, f"Created the parameter context {context.name}. Add its parameters below.")
                return redirect("portal:parameter-context", context.pk)
        else:
            errors = editing.messages(serializer.errors)
    contexts = ParameterContext.objects.filter(tenant=tenant).prefetch_related("groups").order_by("name")
    page = {"contexts": contexts, "posted": posted, "errors": errors,
            "can_modify": changes.may(request, tenant, policies.MODIFY)}
    return render(request, "portal/parameter_contexts.html", page, status=400 if errors else 200)


def _rows(context: ParameterContext, post=None) -> list[dict]:
    rows = []
    for parameter in context.parameters:
        name = parameter["name"]
        rows.append({"name": name, "sensitive": bool(parameter.get("sensitive")),
                     "is_set": parameter.get("value") is not None,
                     "value": "" if parameter.get("sensitive") else (
                         post.get(f"value[{name}]", "") if post is not None else parameter.get("value") or ""),
                     "description": post.get(f"description[{name}]", "") if post is not None
                     else parameter.get("description", ""),
                     "remove": post is not None and bool(post.get(f"remove[{name}]"))})
    return rows


def _new_rows(post=None) -> list[dict]:
    get = (lambda key: post.get(key, "")) if post is not None else (lambda key: "")
    return [{"index": i, "name": get(f"new-name-{i}").strip(), "value": get(f"new-value-{i}"),
             "sensitive": bool(get(f"new-sensitive-{i}")), "description": get(f"new-description-{i}")}
            for i in range(NEW_ROWS)]


def _payload(context: ParameterContext, post) -> dict:
    parameters = []
    for row in _rows(context, post):
        if row["remove"]:
            continue
        entry = {"name": row["name"], "description": row["description"]}
        value = post.get(f"value[{row['name']}]", "")
        if not row["sensitive"]:
            entry["value"] = value if value != "" else None
        elif value:
            entry["value"] = value
        parameters.append(entry)
    for row in _new_rows(post):
        if row["name"]:
            parameters.append({"name": row["name"], "value": row["value"], "sensitive": row["sensitive"],
                               "description": row["description"]})
    return {"name": post.get("name", ""), "description": post.get("description", ""), "parameters": parameters,
            "revision": {"version": post.get("version", "")}}


@login_required
def detail(request, pk):
    """A parameter context: shown to those who may view it, saved by those who may modify it."""
    context = _context_or_404(request, pk, policies.MODIFY if request.method == "POST" else policies.VIEW)
    errors: list[str] = []
    post = None
    if request.method == "POST":
        serializer = ParameterContextSerializer(context, data=_payload(context, request.POST), partial=True,
                                                context={"request": request})
        if serializer.is_valid():
            done, errors = _attempt(lambda: changes.update(request, context, serializer))
            if done is not None:
                messages.success(request, f"Saved {context.name}.")
                return redirect("portal:parameter-context", context.pk)
        else:
            errors = editing.messages(serializer.errors)
        context.refresh_from_db()
        post = request.POST
    page = {"context": context, "rows": _rows(context, post), "new_rows": _new_rows(post), "errors": errors,
            "values": {"name": post.get("name", "") if post else context.name,
                       "description": post.get("description", "") if post else context.description},
            "version": post.get("version", context.version) if post else context.version,
            "groups": context.groups.order_by("name"),
            "can_modify": changes.may(request, context.tenant, policies.MODIFY)}
    return render(request, "portal/parameter_context.html", page, status=400 if errors else 200)


@login_required
@require_POST
def delete(request, pk):
    """Delete a parameter context."""
    context = _context_or_404(request, pk, policies.MODIFY)
    version = request.POST.get("version", "")
    _, errors = _attempt(lambda: changes.delete(request, context, int(version) if version.isdigit() else None, ""))
    if errors:
        messages.error(request, " ".join(errors))
        return redirect("portal:parameter-context", context.pk)
    messages.success(request, f"Deleted the parameter context {context.name}.")
    return redirect("portal:parameter-contexts")


@login_required
@require_POST
def bind(request, pk):
    """Bind a group to one of the tenant's contexts (``context``: its id, or empty for none)."""
    group = component_or_404(request, ProcessGroup, pk, policies.MODIFY)
    data = {"parameterContextId": request.POST.get("context") or None,
            "revision": {"version": request.POST.get("version", "")}}
    outcome = editing.update(request, ProcessGroupSerializer, group, data)
    if outcome.ok:
        bound = group.parameter_context
        messages.success(request, f"{group.name} uses the parameter context {bound.name}." if bound
                         else f"{group.name} uses no parameter context.")
    else:
        messages.error(request, " ".join(editing.messages(outcome.errors) + ([outcome.message] if outcome.message
                                                                               else [])))
    return redirect("portal:group", group.pk)
