"""Controller services of a process group: the list (state, type, validation problems), adding
one from the catalogue's types, configuring it, enabling and disabling it and deleting it. The
changes go through the API's serializer, change rules and actions, so the pages accept and
refuse what the API does."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from rest_framework import exceptions

from flowsite.api import changes
from flowsite.api.serializers.services import ControllerServiceSerializer
from flowsite.cluster.actions import do_set_service_state
from flowsite.flows import access as policies
from flowsite.flows.catalogue import find_type, service_types
from flowsite.flows.models import ControllerService, ProcessGroup
from flowsite.flows.revisions import StaleRevisionError
from flowsite.portal import editing
from flowsite.portal.forms.services import ServiceForm
from flowsite.portal.lookup import access, component_or_404
from flowsite.portal.views.groups import breadcrumb


def _rows(request, group: ProcessGroup) -> list[dict]:
    allowed = access(request, group)
    found = [s for s in ControllerService.objects.filter(parent=group).select_related("tenant", "parent")
             .order_by("name", "id") if allowed.can(s, policies.VIEW)]
    return ControllerServiceSerializer(found, many=True, context={"request": request, "group": group}).data


@login_required
def group_services(request, pk):
    """The services of a group; POST adds one (type and name)."""
    group = component_or_404(request, ProcessGroup, pk, policies.MODIFY if request.method == "POST" else policies.VIEW)
    chosen = {"type": request.POST.get("type", ""), "name": request.POST.get("name", "").strip()}
    outcome = editing.Outcome()
    if request.method == "POST":
        data = {"type": chosen["type"], **({"name": chosen["name"]} if chosen["name"] else {})}
        outcome = editing.create(request, ControllerServiceSerializer, group, data)
        if outcome.ok:
            messages.success(request, f"Added {outcome.component.name}. Configure it below, then enable it.")
            return redirect("portal:service", outcome.component.pk)
    context = {"group": group, "breadcrumb": breadcrumb(request, group), "services": _rows(request, group),
               "types": service_types(), "chosen": chosen, "can_modify": access(request, group).can(group,
                                                                                                  policies.MODIFY),
               "errors": editing.messages(outcome.errors) + ([outcome.message] if outcome.message else [])}
    status = 200 if request.method == "GET" else 409 if outcome.message else 400
    return render(request, "portal/services.html", context, status=status)


@login_required
def detail(request, pk):
    """A service's configuration, state and referencing components."""
    service = component_or_404(request, ControllerService, pk,
                               policies.MODIFY if request.method == "POST" else policies.VIEW)
    service_type = find_type(service.type, "service")
    representation = ControllerServiceSerializer(service, context={"request": request, "group": service.parent}).data
    form = ServiceForm(representation, service_type)
    refusal, status = "", 200
    if request.method == "POST":
        form = ServiceForm(representation, service_type, request.POST)
        outcome = editing.update(request, ControllerServiceSerializer, service, form.payload())
        if outcome.ok:
            messages.success(request, f"Saved {service.name}.")
            return redirect("portal:service", service.pk)
        service.refresh_from_db()
        form = ServiceForm(representation, service_type, request.POST, outcome.errors)
        refusal, status = outcome.message, 409 if outcome.message else 400
    allowed = access(request, service)
    can_modify = allowed.can(service, policies.MODIFY)
    context = {"service": service, "group": service.parent, "breadcrumb": breadcrumb(request, service.parent),
               "form": form, "type": service_type, "refusal": refusal, "can_modify": can_modify,
               "can_operate": allowed.can(service, policies.OPERATE),
               "editable": can_modify and service.scheduled_state != "ENABLED",
               "references": representation["referencingComponents"],
               "version": request.POST.get("version", service.version) if request.method == "POST" else service.version}
    return render(request, "portal/service.html", context, status=status)


@login_required
@require_POST
def set_state(request, pk):
    """Enable or disable a service (``state`` ENABLED or DISABLED)."""
    service = component_or_404(request, ControllerService, pk, policies.OPERATE)
    state = request.POST.get("state")
    version = request.POST.get("version", "")
    if state not in ("ENABLED", "DISABLED"):
        messages.error(request, "Choose to enable or disable the service.")
        return redirect("portal:service", service.pk)
    try:
        outcome = do_set_service_state(service, state, version=int(version) if version.isdigit() else None,
                                       client_id="", acting_user=request.user,
                                       check=lambda locked: changes.check_service_state(locked, state))
    except StaleRevisionError as error:
        messages.error(request, editing.stale_message(error))
    except exceptions.APIException as error:
        messages.error(request, " ".join(editing.messages(error.detail)))
    else:
        messages.success(request, f"{'Enabled' if state == 'ENABLED' else 'Disabled'} {service.name}: "
                                  f"{outcome['message']}.")
    return redirect("portal:service", service.pk)


@login_required
@require_POST
def delete(request, pk):
    """Delete a service."""
    service = component_or_404(request, ControllerService, pk, policies.MODIFY)
    refused = editing.delete(request, service, request.POST.get("version"))
    if refused:
        messages.error(request, refused)
        return redirect("portal:service", service.pk)
    messages.success(request, f"Deleted {service.name}.")
    return redirect("portal:group-services", service.parent_id)
