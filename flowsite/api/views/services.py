"""Controller services of a process group: list and create under the group, read, configure and
delete each one, and enable or disable it through its ``run-status`` sub-resource (NiFi's
rules: an enabled service is neither changed nor deleted, a referenced one is not deleted, and
one that a running processor references is not disabled)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from flowsite.api import changes, filters
from flowsite.api.lookup import component_or_404
from flowsite.api.serializers.services import ControllerServiceSerializer, ServiceRunStatusSerializer
from flowsite.api.views.components import ChildList, ComponentDetail
from flowsite.cluster.actions import do_set_service_state
from flowsite.cluster.api.serializers import CommandOutcomeSerializer
from flowsite.flows import access as policies
from flowsite.flows.models import ControllerService


class ControllerServiceDetail(ComponentDetail):
    """A controller service, with the components that reference it."""

    model = ControllerService
    serializer_class = ControllerServiceSerializer
    delete_error_statuses = (409,)  # enabled, or referenced


class ControllerServiceList(ChildList):
    """Controller services of a group."""

    model = ControllerService
    serializer_class = ControllerServiceSerializer
    filterset_class = filters.ControllerServiceFilter


class ServiceStateAnswerSerializer(ControllerServiceSerializer):
    """A controller service whose state changed, and what the nodes were told."""

    cluster = CommandOutcomeSerializer(read_only=True, help_text="Nodes are not told: the next deployment "
                                                                 "carries the new state (``reached`` false).")


class ControllerServiceRunStatus(GenericAPIView):
    """Enable or disable a controller service. The design changes at once; the nodes run the new
    state from the next deployment (``cluster.message`` says so)."""

    checks_revisions = True
    serializer_class = ServiceRunStatusSerializer

    @extend_schema(request=ServiceRunStatusSerializer, responses=ServiceStateAnswerSerializer)
    def put(self, request, pk):
        service = component_or_404(request, ControllerService, pk, policies.OPERATE)
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        state = serializer.validated_data["state"]
        revision = serializer.validated_data["revision"]
        outcome = do_set_service_state(service, state, version=revision.get("version"),
                                       client_id=revision.get("clientId") or "", acting_user=request.user,
                                       check=lambda locked: changes.check_service_state(locked, state))
        data = ControllerServiceSerializer(service, context={"request": request}).data
        return Response({**data, "cluster": outcome})
