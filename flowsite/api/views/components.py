"""Create, read, update and delete process groups, processors, connections, funnels, ports and
labels.

Collections hang under their group (``/process-groups/{id}/processors``), single components
have their own resource (``/processors/{id}``). Updates carry the revision they are based on in
the body, deletions as ``?version=&clientId=``; a stale one is a 409 with the current revision.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from flowsite.api import changes, filters
from flowsite.api.errors import Conflict
from flowsite.api.lookup import access_for, component_or_404
from flowsite.api.serializers.connections import ConnectionSerializer
from flowsite.api.serializers.groups import FunnelSerializer, PortSerializer, ProcessGroupSerializer
from flowsite.api.serializers.labels import LabelSerializer
from flowsite.api.serializers.processors import GroupRunStatusSerializer, ProcessorSerializer, RunStatusSerializer
from flowsite.cluster.api.serializers import GroupStartAnswerSerializer, ProcessorRunStatusAnswerSerializer
from flowsite.cluster.actions import do_set_run_state, do_start_group, group_starts
from flowsite.flows import access as policies
from flowsite.flows.models import Component, Connection, Funnel, Kind, Label, Port, ProcessGroup, Processor
from flowsite.flows.validation import component_problems

REVISION_PARAMETERS = [
    OpenApiParameter("version", OpenApiTypes.INT, required=False,
                     description="The version of the component the deletion is based on."),
    OpenApiParameter("clientId", OpenApiTypes.STR, required=False,
                     description="The client that made the last change (may stand for the version)."),
]


def revision_from_query(request) -> tuple[int | None, str]:
    """The revision a deletion names in its query (``?version=N``, ``?clientId=``); 400 without one."""
    raw_version = request.query_params.get("version")
    client_id = request.query_params.get("clientId", "")
    if raw_version is None and not client_id:
        raise exceptions.ValidationError({"version": "a deletion names the revision it is based on "
                                                     "(?version=N or ?clientId=...)"})
    if raw_version is None:
        return None, client_id
    try:
        version = int(raw_version)
    except ValueError:
        raise exceptions.ValidationError({"version": f"{raw_version!r} is not a number"}) from None
    if version < 0:
        raise exceptions.ValidationError({"version": "a version is not negative"})
    return version, client_id


class ComponentDetail(GenericAPIView):
    """Read, update or delete one component; PUT, like PATCH, changes the fields it names."""

    checks_revisions = True
    partial_updates = True
    model: type[Component]

    def component(self, action: str):
        return component_or_404(self.request, self.model, self.kwargs["pk"], action)

    def get_serializer_context(self):
        context = super().get_serializer_context()
        component = getattr(self, "_component", None)
        if component is not None and component.parent_id is not None:
            context["group"] = component.parent
        return context

    def get(self, request, pk):
        self._component = self.component(policies.VIEW)
        return Response(self.get_serializer(self._component).data)

    def put(self, request, pk):
        self._component = component = self.component(policies.MODIFY)
        serializer = self.get_serializer(component, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        changes.update(request, component, serializer)
        return Response(self.get_serializer(component).data)

    def patch(self, request, pk):
        return self.put(request, pk)

    @extend_schema(parameters=REVISION_PARAMETERS, responses={204: None})
    def delete(self, request, pk):
        self._component = component = self.component(policies.MODIFY)
        version, client_id = revision_from_query(request)
        changes.delete(request, component, version, client_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ChildList(GenericAPIView):
    """List a group's components of one kind, or create one in the group."""

    lists_on_get = True

    model: type[Component]
    kind: str

    def group(self, action: str) -> ProcessGroup:
        return component_or_404(self.request, ProcessGroup, self.kwargs["pk"], action)

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if getattr(self, "_group", None) is not None:
            context["group"] = self._group
        return context

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator asks without a request
            return self.model.objects.none()
        return self.model.objects.filter(parent=self._group).select_related("tenant", "parent").order_by("name", "id")

    def get(self, request, pk):
        self._group = self.group(policies.VIEW)
        visible = self.get_queryset().restrict(access_for(request, self._group.tenant), policies.VIEW)
        page = self.paginate_queryset(self.filter_queryset(visible))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def post(self, request, pk):
        self._group = self.group(policies.MODIFY)
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        component = changes.create(request, self._group, serializer)
        data = self.get_serializer(component).data
        return Response(data, status=status.HTTP_201_CREATED, headers={"Location": data["uri"]})


# ---------------------------------------------------------------------------- process groups

class ProcessGroupDetail(ComponentDetail):
    """A process group: read, update, delete (with everything inside it)."""

    model = ProcessGroup
    delete_error_statuses = (409, 503)  # 409: running or holding FlowFiles; 503: the cluster cannot say
    serializer_class = ProcessGroupSerializer


class ProcessGroupRunStatus(GenericAPIView):
    """Start a process group, as NiFi's start of a group: every stopped, valid processor and port
    in it and in the groups inside it is set RUNNING, then the connected nodes are told
    (``group.start``). DISABLED components stay disabled; invalid ones stay stopped and are listed
    in ``not_started`` with their problems. Needs the operate policy of the group and of every
    component it starts."""

    serializer_class = GroupRunStatusSerializer

    @extend_schema(request=GroupRunStatusSerializer, responses=GroupStartAnswerSerializer)
    def put(self, request, pk):
        group = component_or_404(request, ProcessGroup, pk, policies.OPERATE)
        self.get_serializer(data=request.data).is_valid(raise_exception=True)
        access = access_for(request, group.tenant)
        denied = [component.name for component in group_starts(group)[0]
                  if not access.can(component, policies.OPERATE)]
        if denied:
            raise exceptions.PermissionDenied(f"you may not operate {', '.join(denied)}, which starting the group "
                                              "would start")
        return Response(do_start_group(group, request.user))


class ProcessGroupChildren(ChildList):
    """Process groups inside a group."""

    model = ProcessGroup
    serializer_class = ProcessGroupSerializer
    filterset_class = filters.ProcessGroupFilter


# ---------------------------------------------------------------------------- processors

class ProcessorDetail(ComponentDetail):
    """A processor."""

    model = Processor
    serializer_class = ProcessorSerializer


class ProcessorList(ChildList):
    """Processors of a group."""

    model = Processor
    serializer_class = ProcessorSerializer
    filterset_class = filters.ProcessorFilter


class ProcessorRunStatus(GenericAPIView):
    """Start, stop or disable a processor: the design changes, then the change is carried to every
    connected node (``cluster`` in the answer says what each node answered; when the cluster
    cannot be reached the design still changes and ``cluster.reached`` is false)."""

    checks_revisions = True
    serializer_class = RunStatusSerializer

    @extend_schema(request=RunStatusSerializer, responses=ProcessorRunStatusAnswerSerializer)
    def put(self, request, pk):
        processor = component_or_404(request, Processor, pk, policies.OPERATE)
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        state = serializer.validated_data["state"]
        revision = serializer.validated_data["revision"]
        outcome = do_set_run_state(processor, state, version=revision.get("version"),
                                   client_id=revision.get("clientId") or "", acting_user=request.user,
                                   check=lambda locked: _check_can_run(locked, state))
        return Response({**ProcessorSerializer(processor, context={"request": request}).data, "cluster": outcome})


def _check_can_run(processor: Processor, state: str) -> None:
    """Raise 409 when ``processor`` cannot move to ``state``: an invalid one cannot start, a
    disabled one must be enabled first."""
    if state == "RUNNING" and processor.scheduled_state != "RUNNING":
        problems = component_problems(processor)
        if problems:
            raise Conflict(f"{processor} is invalid and cannot start",
                           [{"path": f"$.properties['{p.property}']" if p.property else "$", "message": p.message}
                            for p in problems])
    if state == "RUNNING" and processor.scheduled_state == "DISABLED":
        raise Conflict(f"{processor} is disabled: enable it (state STOPPED) before starting it")


# ---------------------------------------------------------------------------- connections

class ConnectionDetail(ComponentDetail):
    """A connection."""

    model = Connection
    delete_error_statuses = (409, 503)  # 409: running or holding FlowFiles; 503: the cluster cannot say
    serializer_class = ConnectionSerializer


class ConnectionList(ChildList):
    """Connections of a group."""

    model = Connection
    serializer_class = ConnectionSerializer
    filterset_class = filters.ConnectionFilter

    def get_queryset(self):
        return super().get_queryset().select_related("source", "destination", "source__processor")


# ---------------------------------------------------------------------------- funnels, labels, ports

class FunnelDetail(ComponentDetail):
    """A funnel."""

    model = Funnel
    serializer_class = FunnelSerializer


class FunnelList(ChildList):
    """Funnels of a group."""

    model = Funnel
    serializer_class = FunnelSerializer
    filterset_class = filters.FunnelFilter


class LabelDetail(ComponentDetail):
    """A label."""

    model = Label
    serializer_class = LabelSerializer


class LabelList(ChildList):
    """Labels of a group."""

    model = Label
    serializer_class = LabelSerializer
    filterset_class = filters.LabelFilter


class PortDetail(ComponentDetail):
    """An input or output port."""

    model = Port
    serializer_class = PortSerializer
    port_kind: str

    def component(self, action):
        port = super().component(action)
        if port.kind != self.port_kind:
            raise exceptions.NotFound(f"no such {self.port_kind.lower().replace('_', ' ')}")
        return port


class PortList(ChildList):
    """Input or output ports of a group."""

    model = Port
    serializer_class = PortSerializer
    filterset_class = filters.PortFilter
    port_kind: str

    def get_queryset(self):
        return super().get_queryset().filter(kind=self.port_kind)

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "port_kind": self.port_kind}


class InputPortDetail(PortDetail):
    """An input port."""

    port_kind = Kind.INPUT_PORT


class OutputPortDetail(PortDetail):
    """An output port."""

    port_kind = Kind.OUTPUT_PORT


class InputPortList(PortList):
    """Input ports of a group."""

    port_kind = Kind.INPUT_PORT


class OutputPortList(PortList):
    """Output ports of a group."""

    port_kind = Kind.OUTPUT_PORT
