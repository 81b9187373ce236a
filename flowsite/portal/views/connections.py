"""Adding a connection to a group (source first, since the relationships it may carry depend on
it), editing one and deleting one. Changes go through the API's ConnectionSerializer."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from flowsite.api.serializers.connections import ConnectionSerializer
from flowsite.flows import access as policies
from flowsite.flows.models import Connection, ProcessGroup
from flowsite.portal import editing
from flowsite.portal.forms.connections import ConnectionForm, endpoint_label, endpoints, new_connection
from flowsite.portal.lookup import access, component_or_404
from flowsite.portal.views.groups import breadcrumb


def _choices(request, group: ProcessGroup, end: str) -> list[dict]:
    allowed = access(request, group)
    return [{"id": str(c.pk), "label": endpoint_label(c, group), "component": c}
            for c in endpoints(group, end, lambda c: allowed.can(c, policies.VIEW))]


def _render(request, group, form: ConnectionForm, status: int, **extra):
    context = {"group": group, "breadcrumb": breadcrumb(request, group), "form": form,
               "source_label": endpoint_label(form.source, group),
               "destinations": _choices(request, group, "destination"), **extra}
    return render(request, "portal/connection.html", context, status=status)


@login_required
def new(request, pk):
    """Choose the source, then the destination, relationships and queue settings."""
    group = component_or_404(request, ProcessGroup, pk, policies.MODIFY)
    sources = _choices(request, group, "source")
    source_id = request.POST.get("source") or request.GET.get("source")
    if not source_id:
        return render(request, "portal/connection_source.html",
                      {"group": group, "breadcrumb": breadcrumb(request, group), "sources": sources})
    source = next((choice["component"] for choice in sources if choice["id"] == source_id), None)
    if source is None:
        raise Http404("no such source in this group")
    if request.method != "POST":
        return _render(request, group, ConnectionForm(source, new_connection(group)), 200, creating=True,
                       editable=True)
    form = ConnectionForm(source, new_connection(group), request.POST)
    outcome = editing.create(request, ConnectionSerializer, group, form.payload(creating=True))
    if outcome.ok:
        messages.success(request, f"Connected {source.name or 'the source'} to "
                                  f"{outcome.component.destination.name or 'the destination'}.")
        return redirect("portal:group", group.pk)
    form = ConnectionForm(source, new_connection(group), request.POST, outcome.errors)
    return _render(request, group, form, 409 if outcome.message else 400, creating=True, editable=True,
                   refusal=outcome.message)


@login_required
def detail(request, pk):
    """A connection's settings: shown to those who may view it, saved by those who may modify it."""
    connection = component_or_404(request, Connection, pk,
                                  policies.MODIFY if request.method == "POST" else policies.VIEW)
    group = connection.parent
    representation = ConnectionSerializer(connection, context={"request": request, "group": group}).data
    allowed = access(request, connection)
    can_modify = allowed.can(connection, policies.MODIFY)
    extra = {"connection": connection, "version": connection.version, "can_modify": can_modify,
             "can_view_data": allowed.can(connection, policies.VIEW_DATA),
             "can_empty": allowed.can(connection, policies.MODIFY_DATA),
             "editable": can_modify, "destination_label": endpoint_label(connection.destination, group)}
    if request.method != "POST":
        return _render(request, group, ConnectionForm(connection.source, representation), 200, **extra)
    form = ConnectionForm(connection.source, representation, request.POST)
    outcome = editing.update(request, ConnectionSerializer, connection, form.payload(creating=False))
    if outcome.ok:
        messages.success(request, "Saved the connection.")
        return redirect("portal:connection", connection.pk)
    form = ConnectionForm(connection.source, representation, request.POST, outcome.errors)
    extra["version"] = request.POST.get("version", "")
    return _render(request, group, form, 409 if outcome.message else 400, refusal=outcome.message, **extra)


@login_required
@require_POST
def delete(request, pk):
    """Delete a connection."""
    connection = component_or_404(request, Connection, pk, policies.MODIFY)
    refused = editing.delete(request, connection, request.POST.get("version"))
    if refused:
        messages.error(request, refused)
        return redirect("portal:connection", connection.pk)
    messages.success(request, "Deleted the connection.")
    return redirect("portal:group", connection.parent_id)
