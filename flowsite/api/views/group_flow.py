"""Everything directly inside a process group in one answer — what a canvas draws (NiFi's
``GET /flow/process-groups/{id}``): one request, one access check and one validation of the
flow instead of one list request per kind of component."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from flowsite.api.lookup import access_for, component_or_404
from flowsite.api.serializers.connections import ConnectionSerializer
from flowsite.api.serializers.groups import FunnelSerializer, PortSerializer, ProcessGroupSerializer
from flowsite.api.serializers.labels import LabelSerializer
from flowsite.api.serializers.processors import ProcessorSerializer
from flowsite.flows import access as policies
from flowsite.flows.models import Connection, Funnel, Kind, Label, Port, ProcessGroup, Processor

#: Each part of the answer: its key, the model, its serializer and what else picks its rows.
_PARTS = (
    ("processGroups", ProcessGroup, ProcessGroupSerializer, {}),
    ("processors", Processor, ProcessorSerializer, {}),
    ("inputPorts", Port, PortSerializer, {"kind": Kind.INPUT_PORT}),
    ("outputPorts", Port, PortSerializer, {"kind": Kind.OUTPUT_PORT}),
    ("funnels", Funnel, FunnelSerializer, {}),
    ("labels", Label, LabelSerializer, {}),
    ("connections", Connection, ConnectionSerializer, {}),
)


class GroupFlowSerializer(serializers.Serializer):
    """The components directly inside a group that the caller may view, by kind (each as its own
    list endpoint gives it)."""

    id = serializers.UUIDField()
    processGroups = ProcessGroupSerializer(many=True)
    processors = ProcessorSerializer(many=True)
    inputPorts = PortSerializer(many=True)
    outputPorts = PortSerializer(many=True)
    funnels = FunnelSerializer(many=True)
    labels = LabelSerializer(many=True)
    connections = ConnectionSerializer(many=True)


class GroupFlow(GenericAPIView):
    """Every component directly inside the group that you may view, by kind, unpaged."""

    serializer_class = GroupFlowSerializer

    def get(self, request, pk):
        group = component_or_404(request, ProcessGroup, pk, policies.VIEW)
        access = access_for(request, group.tenant)
        context = {"request": request, "group": group, "problems": {}}  # one validation for every processor
        answer = {"id": str(group.pk)}
        for key, model, serializer_class, picks in _PARTS:
            rows = (model.objects.filter(parent=group, **picks).restrict(access, policies.VIEW)
                    .select_related("tenant", "parent").order_by("name", "id"))
            if model is Connection:
                rows = rows.select_related("source", "destination", "source__processor")
            answer[key] = serializer_class(rows, many=True, context={**context, "port_kind": picks.get("kind")}).data
        return Response(answer)
