"""Adding a processor to a group (its type chosen from the catalogue), configuring it and
deleting it. Changes go through the API's ProcessorSerializer and change rules."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from flowsite.api.serializers.processors import ProcessorSerializer
from flowsite.flows import access as policies
from flowsite.flows import restricted
from flowsite.flows.catalogue import find_type, processor_types
from flowsite.flows.models import ProcessGroup, Processor
from flowsite.portal import editing
from flowsite.portal.forms.processors import ProcessorForm
from flowsite.portal.lookup import access, component_or_404
from flowsite.portal.views.groups import breadcrumb


def _matches(processor_type: dict, query: str) -> bool:
    text = " ".join([processor_type["type"], processor_type["description"], *processor_type["tags"]]).lower()
    return all(word in text for word in query.lower().split())


@login_required
def new(request, pk):
    """Choose a processor type (and a name) and add the processor to the group."""
    group = component_or_404(request, ProcessGroup, pk, policies.MODIFY)
    query = request.GET.get("q", "").strip()
    chosen = {"type": request.POST.get("type", ""), "name": request.POST.get("name", "")}
    outcome = editing.Outcome()
    if request.method == "POST":
        data = {"type": chosen["type"], **({"name": chosen["name"]} if chosen["name"].strip() else {})}
        outcome = editing.create(request, ProcessorSerializer, group, data)
        if outcome.ok:
            messages.success(request, f"Added {outcome.component.name}. Configure it below.")
            return redirect("portal:processor", outcome.component.pk)
    tenant_access = access(request, group)
    types = []
    for processor_type in processor_types():
        if _matches(processor_type, query):
            refused = restricted.refusal(tenant_access, processor_type["type"])
            types.append({**processor_type, "available": refused is None, "refusal": refused or ""})
    context = {
        "group": group, "breadcrumb": breadcrumb(request, group), "query": query, "chosen": chosen, "types": types,
        "errors": editing.messages(outcome.errors), "refusal": outcome.message,
    }
    status = 200 if request.method == "GET" else 409 if outcome.message else 400
    return render(request, "portal/processor_new.html", context, status=status)


@login_required
def detail(request, pk):
    """A processor's configuration: shown to those who may view it, saved by those who may
    modify it."""
    processor = component_or_404(request, Processor, pk,
                                 policies.MODIFY if request.method == "POST" else policies.VIEW)
    group = processor.parent
    processor_type = find_type(processor.type, "processor")
    representation = _representation(request, processor)
    form = ProcessorForm(representation, processor_type)
    refusal, status = "", 200
    if request.method == "POST":
        form = ProcessorForm(representation, processor_type, request.POST)
        outcome = editing.update(request, ProcessorSerializer, processor, form.payload())
        if outcome.ok:
            messages.success(request, f"Saved {processor.name}.")
            return redirect("portal:processor", processor.pk)
        processor.refresh_from_db()
        form = ProcessorForm(representation, processor_type, request.POST, outcome.errors)
        refusal, status = outcome.message, 409 if outcome.message else 400
    allowed = access(request, processor)
    can_modify = allowed.can(processor, policies.MODIFY)
    context = {
        "processor": processor, "group": group, "breadcrumb": breadcrumb(request, group), "form": form,
        "type": processor_type, "refusal": refusal, "can_modify": can_modify,
        "can_query_provenance": allowed.has_global(policies.QUERY_PROVENANCE),
        "editable": can_modify and processor.scheduled_state != "RUNNING",
        "version": request.POST.get("version", processor.version) if request.method == "POST" else processor.version,
    }
    return render(request, "portal/processor.html", context, status=status)


def _representation(request, processor: Processor) -> dict:
    return ProcessorSerializer(processor, context={"request": request, "group": processor.parent}).data


@login_required
@require_POST
def delete(request, pk):
    """Delete a processor."""
    processor = component_or_404(request, Processor, pk, policies.MODIFY)
    refused = editing.delete(request, processor, request.POST.get("version"))
    if refused:
        messages.error(request, refused)
        return redirect("portal:processor", processor.pk)
    messages.success(request, f"Deleted {processor.name}.")
    return redirect("portal:group", processor.parent_id)
