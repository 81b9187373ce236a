"""Creating, updating and deleting components once their serializer has validated the request:
the rules a change must pass besides the serializer's (using restricted components, modifying
the enclosing group, the component's run state) checked, and the change handed to its action
(``flowsite.flows.actions``, which takes the revision lock, records and publishes it). The REST
API and the portal both change components through here; a refused change raises the API's
exceptions (ValidationError, PermissionDenied, Conflict, StaleRevisionError)."""

from __future__ import annotations

from rest_framework import exceptions

from flowsite.api.errors import Conflict
from flowsite.api.lookup import access_for
from flowsite.api.serializers.processors import ProcessorSerializer
from flowsite.api.serializers.services import ControllerServiceSerializer
from flowsite.cluster.queues import QueuesUnknown, queued
from flowsite.flows import access as policies
from flowsite.flows import restricted
from flowsite.flows.actions import do_create_component, do_delete_component, do_update_component
from flowsite.flows.definition import subtree_ids
from flowsite.flows.services import referencing_components
from flowsite.flows.validation import component_problems
from flowsite.flows.models import Component, Connection, Kind, Port, ProcessGroup, Processor


def check_restricted(request, group: ProcessGroup, type_name: str, kind: str = "processor") -> None:
    """Raise 403 when ``type_name`` is a restricted component that the tenant (lacking a granted
    capability) or the user (lacking the policy for it) may not use; the message says which."""
    reason = restricted.refusal(access_for(request, group.tenant), type_name, kind)
    if reason is not None:
        raise exceptions.PermissionDenied(reason)


def create(request, group: ProcessGroup, serializer) -> Component:
    """Create in ``group`` the component a validated ``serializer`` (built with ``group`` in its
    context) describes."""
    if isinstance(serializer, ProcessorSerializer):
        check_restricted(request, group, serializer.validated_data["type"])
    if isinstance(serializer, ControllerServiceSerializer):
        check_restricted(request, group, serializer.validated_data["type"], "service")
    component = serializer.build(serializer.validated_data)
    client_id = (serializer.validated_data.get("revision") or {}).get("clientId", "")
    return do_create_component(component, acting_user=request.user, client_id=client_id)


def update(request, component: Component, serializer) -> Component:
    """Apply the change a validated ``serializer`` of ``component`` holds, if the revision it
    names is current."""
    revision = serializer.validated_data.get("revision")
    if revision is None:
        raise exceptions.ValidationError({"revision": "an update names the revision it is based on"})
    return do_update_component(component, lambda c: serializer.apply(c, serializer.validated_data),
                               version=revision.get("version"), client_id=revision.get("clientId") or "",
                               acting_user=request.user, check=lambda c: check_update(request, c))


def delete(request, component: Component, version: int | None, client_id: str) -> None:
    """Delete ``component`` (a group with everything inside it), if the revision (``version``,
    ``client_id``) is current."""
    if component.parent_id is not None and not access_for(request, component.tenant).can(component.parent,
                                                                                           policies.MODIFY):
        raise exceptions.PermissionDenied("you may not modify the group this component is in")
    do_delete_component(component, version=version, client_id=client_id, acting_user=request.user,
                        check=check_delete)


def check_update(request, component: Component) -> None:
    """Raise when ``component`` cannot be changed in its present state, or by this user."""
    if getattr(component, "scheduled_state", None) == "RUNNING":
        raise Conflict(f"{component} is running: stop it before changing it")
    if component.kind == Kind.CONTROLLER_SERVICE and component.scheduled_state == "ENABLED":
        raise Conflict(f"{component} is enabled: disable it before changing it")
    if component.kind == Kind.CONTROLLER_SERVICE:
        check_restricted(request, component.parent, component.type, "service")
    if component.kind == Kind.PROCESSOR:
        check_restricted(request, component.parent, component.type)


def check_delete(component: Component) -> None:
    """Raise when ``component`` cannot be deleted in its present state."""
    if component.kind == Kind.PROCESS_GROUP:
        _check_group_delete(component)
        return
    if component.kind == Kind.CONNECTION:
        _check_connection_delete(component)
        return
    if component.kind == Kind.CONTROLLER_SERVICE:
        _check_service_delete(component)
        return
    if getattr(component, "scheduled_state", None) == "RUNNING":
        raise Conflict(f"{component} is running: stop it before deleting it")
    joined = Connection.objects.filter(source=component.pk) | Connection.objects.filter(destination=component.pk)
    if joined.exists():
        names = ", ".join(sorted(str(c.pk) for c in joined))
        raise Conflict(f"{component} is connected (connections {names}): delete its connections first")


class CannotConfirmEmpty(exceptions.APIException):
    """503: whether a connection holds FlowFiles cannot be found out (the cluster is away)."""

    status_code = 503
    default_code = "cluster_unavailable"


def _check_queues_empty(tenant, connections: list[Component], what: str) -> None:
    """Raise 409 when one of ``connections`` holds FlowFiles on the cluster, 503 when that
    cannot be confirmed (deleting would lose whatever they hold)."""
    try:
        counts = queued(tenant, [c.pk for c in connections])
    except QueuesUnknown as error:
        raise CannotConfirmEmpty(f"cannot confirm that {what} holds no FlowFiles: {error}; try again once the "
                                 f"cluster answers") from None
    if counts:
        held = ", ".join(f"connection {pk} holds {n} FlowFile(s)" for pk, n in sorted(counts.items()))
        first = min(counts)
        raise Conflict(f"{what} is not empty ({held}): deleting would lose them; empty the queue first "
                       f"(POST /api/v1/connections/{first}/empty), then delete")


def _check_connection_delete(connection: Component) -> None:
    """NiFi's rules: the source must not be running (a funnel excepted) and the queue must be empty."""
    source = Connection.objects.select_related("source").get(pk=connection.pk).source
    model = {Kind.PROCESSOR: Processor, Kind.INPUT_PORT: Port, Kind.OUTPUT_PORT: Port}.get(source.kind)
    if model is not None and model.objects.filter(pk=source.pk, scheduled_state="RUNNING").exists():
        raise Conflict(f"the source of the connection ({source}, {source.pk}) is running: stop it before deleting "
                       f"the connection")
    _check_queues_empty(connection.tenant, [connection], f"connection {connection.pk}")


def _check_group_delete(group: ProcessGroup) -> None:
    if group.parent_id is None:
        raise Conflict("the root group of a tenant cannot be deleted")
    inside = subtree_ids(group.pk)
    running = Processor.objects.filter(parent__in=inside, scheduled_state="RUNNING")
    if running.exists():
        raise Conflict(f"{running.count()} processor(s) inside the group are running: stop them first")
    outside = (Connection.objects.filter(source__parent__in=inside) |
               Connection.objects.filter(destination__parent__in=inside)).exclude(parent__in=inside)
    if outside.exists():
        raise Conflict("connections outside the group lead to its ports ("
                       + ", ".join(sorted(str(c.pk) for c in outside)) + "): delete them first")
    running_ports = Port.objects.filter(parent__in=inside, scheduled_state="RUNNING")
    if running_ports.exists():
        raise Conflict(f"{running_ports.count()} port(s) inside the group are running: stop them first")
    _check_queues_empty(group.tenant, list(Connection.objects.filter(parent__in=inside)), f"the group {group.pk}")


def _check_service_delete(service: Component) -> None:
    """NiFi's rules: an enabled service, or one a component references, cannot be deleted."""
    if service.scheduled_state == "ENABLED":
        raise Conflict(f"{service} is enabled: disable it before deleting it")
    references = referencing_components(service)
    if references:
        raise Conflict(f"{service} is referenced by " + ", ".join(f"{r.kind.lower().replace('_', ' ')} {r.name} "
                                                                  f"({r.id}, property {r.property!r})"
                                                                  for r in references)
                       + ": remove those references first")


def check_service_state(service, state: str) -> None:
    """Raise 409 when ``service`` cannot move to ``state``: an invalid service cannot be enabled,
    and one that a running processor references cannot be disabled."""
    if state == "ENABLED" and service.scheduled_state != "ENABLED":
        problems = component_problems(service)
        if problems:
            raise Conflict(f"{service} is invalid and cannot be enabled",
                           [{"path": f"$.properties['{p.property}']" if p.property else "$", "message": p.message}
                            for p in problems])
    if state == "DISABLED" and service.scheduled_state == "ENABLED":
        running = [r for r in referencing_components(service) if r.state == "RUNNING"]
        if running:
            raise Conflict(f"{service} is referenced by running components ("
                           + ", ".join(f"{r.name} ({r.id})" for r in running) + "): stop them before disabling it")
