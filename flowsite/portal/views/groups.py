"""A process group's page (what it holds, with validation status), creating a group inside it
and deleting it."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from engine.units import format_data_size

from flowsite.api.serializers.connections import ConnectionSerializer
from flowsite.api.serializers.groups import FunnelSerializer, PortSerializer, ProcessGroupSerializer
from flowsite.api.serializers.labels import LabelSerializer
from flowsite.api.serializers.processors import ProcessorSerializer
from flowsite.cluster.indicator import indicator
from flowsite.cluster.status import awaiting_transfer
from flowsite.flows import access as policies
from flowsite.flows.models import (
    Connection,
    ControllerService,
    Funnel,
    Kind,
    Label,
    ParameterContext,
    Port,
    ProcessGroup,
    Processor,
)
from flowsite.portal import editing
from flowsite.portal.lookup import access, component_or_404


def breadcrumb(request, group: ProcessGroup) -> list[dict]:
    """``group``'s ancestors from the root down, then ``group``; each with its name when the
    user may view it."""
    chain = [group]
    while chain[-1].parent_id is not None:
        chain.append(chain[-1].parent)
    allowed = access(request, group)
    return [{"id": g.pk, "name": g.name, "visible": allowed.can(g, policies.VIEW)} for g in reversed(chain)]


def _listing(request, group: ProcessGroup, model, serializer_class, **filters) -> list[dict]:
    found = (model.objects.filter(parent=group, **filters).restrict(access(request, group), policies.VIEW)
             .select_related("tenant", "parent").order_by("name", "id"))
    return serializer_class(found, many=True, context={"request": request, "group": group}).data


def _connection_rows(request, group: ProcessGroup, cluster_reachable: bool) -> list[dict]:
    """The group's connections, each with ``awaitingTransfer`` (the seed's indicator: how many
    FlowFiles wait to go to another node, so a queue whose destination seems idle is explained)
    when the nodes hold any for it."""
    rows = [dict(row) for row in _listing(request, group, Connection, ConnectionSerializer)]
    awaiting = awaiting_transfer(request.user, group) if rows and cluster_reachable else {}
    for row in rows:
        count, size = awaiting.get(row["id"], (0, 0))
        row["awaitingTransfer"] = f"↔ {count:,} ({format_data_size(size)}) awaiting transfer" if count else ""
    return rows


def render_group(request, group: ProcessGroup, status: int = 200, **extra):
    """The page of ``group``; ``extra`` adds to its context (a form sent back with errors)."""
    cluster = indicator(group.tenant)
    context = {
        "group": group, "breadcrumb": breadcrumb(request, group),
        "can_modify": access(request, group).can(group, policies.MODIFY),
        "groups": _listing(request, group, ProcessGroup, ProcessGroupSerializer),
        "processors": _listing(request, group, Processor, ProcessorSerializer),
        "connections": _connection_rows(request, group, cluster.state not in ("unreachable", "undeployed")),
        "funnels": _listing(request, group, Funnel, FunnelSerializer),
        "labels": _listing(request, group, Label, LabelSerializer),
        "input_ports": _listing(request, group, Port, PortSerializer, kind=Kind.INPUT_PORT),
        "output_ports": _listing(request, group, Port, PortSerializer, kind=Kind.OUTPUT_PORT),
        "indicator": cluster,
        "service_count": ControllerService.objects.filter(parent=group).count(),
        "parameter_contexts": ParameterContext.objects.filter(tenant=group.tenant).order_by("name"),
        **extra,
    }
    return render(request, "portal/group.html", context, status=status)


@login_required
def detail(request, pk):
    """A process group's page."""
    return render_group(request, component_or_404(request, ProcessGroup, pk, policies.VIEW))


@login_required
@require_POST
def create_child(request, pk):
    """Create a process group inside this one."""
    group = component_or_404(request, ProcessGroup, pk, policies.MODIFY)
    name = request.POST.get("name", "")
    outcome = editing.create(request, ProcessGroupSerializer, group, {"name": name})
    if not outcome.ok:
        return render_group(request, group, status=400, new_group={
            "name": name, "errors": editing.messages(outcome.errors) + ([outcome.message] if outcome.message else [])})
    messages.success(request, f"Created the process group {outcome.component.name}.")
    return redirect("portal:group", group.pk)


@login_required
@require_POST
def delete(request, pk):
    """Delete a process group and everything inside it."""
    group = component_or_404(request, ProcessGroup, pk, policies.MODIFY)
    refused = editing.delete(request, group, request.POST.get("version"))
    if refused:
        messages.error(request, refused)
        return redirect("portal:group", group.pk)
    messages.success(request, f"Deleted the process group {group.name}.")
    return redirect("portal:group", group.parent_id)
