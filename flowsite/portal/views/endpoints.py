"""Funnels and ports, the components that only pass FlowFiles on, and the canvas's labels:
adding and deleting them."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from flowsite.api.serializers.groups import FunnelSerializer, PortSerializer
from flowsite.api.serializers.labels import LabelSerializer
from flowsite.flows import access as policies
from flowsite.flows.models import Funnel, Kind, Label, Port, ProcessGroup
from flowsite.portal import editing
from flowsite.portal.lookup import component_or_404

_PORT_KINDS = {"input": Kind.INPUT_PORT, "output": Kind.OUTPUT_PORT}


def _created(request, group: ProcessGroup, outcome: editing.Outcome, what: str):
    if outcome.ok:
        name = outcome.component.name
        messages.success(request, f"Added {what}{' ' + name if name else ''}.")
    else:
        messages.error(request, outcome.message or "; ".join(editing.messages(outcome.errors)))
    return redirect("portal:group", group.pk)


@login_required
@require_POST
def new_funnel(request, pk):
    """Add a funnel to the group."""
    group = component_or_404(request, ProcessGroup, pk, policies.MODIFY)
    return _created(request, group, editing.create(request, FunnelSerializer, group, {}), "a funnel")


@login_required
@require_POST
def new_port(request, pk):
    """Add an input or output port (``kind``) to the group."""
    group = component_or_404(request, ProcessGroup, pk, policies.MODIFY)
    kind = _PORT_KINDS.get(request.POST.get("kind", ""))
    if kind is None:
        raise Http404("no such kind of port")
    outcome = editing.create(request, PortSerializer, group, {"name": request.POST.get("name", "")},
                             port_kind=kind)
    return _created(request, group, outcome, f"an {request.POST['kind']} port")


def _delete(request, component, what: str):
    refused = editing.delete(request, component, request.POST.get("version"))
    if refused:
        messages.error(request, refused)
    else:
        messages.success(request, f"Deleted {what}.")
    return redirect("portal:group", component.parent_id)


@login_required
@require_POST
def delete_funnel(request, pk):
    """Delete a funnel."""
    return _delete(request, component_or_404(request, Funnel, pk, policies.MODIFY), "the funnel")


@login_required
@require_POST
def delete_port(request, pk):
    """Delete an input or output port."""
    port = component_or_404(request, Port, pk, policies.MODIFY)
    return _delete(request, port, f"the port {port.name}")


@login_required
@require_POST
def new_label(request, pk):
    """Add a label (its ``text``) to the group."""
    group = component_or_404(request, ProcessGroup, pk, policies.MODIFY)
    outcome = editing.create(request, LabelSerializer, group, {"label": request.POST.get("text", "")})
    return _created(request, group, outcome, "a label")


@login_required
@require_POST
def delete_label(request, pk):
    """Delete a label."""
    return _delete(request, component_or_404(request, Label, pk, policies.MODIFY), "the label")
