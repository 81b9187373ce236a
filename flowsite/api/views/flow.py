"""Export a process group as a flow definition, and import one as a new group."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import APIView

from flowsite.api.changes import check_restricted
from flowsite.api.lookup import component_or_404
from flowsite.api.readable import require_view_subtree
from flowsite.api.serializers.groups import ImportQuerySerializer, ProcessGroupSerializer
from flowsite.flows import access as policies
from flowsite.flows.actions import do_import_group
from flowsite.flows.definition import Identity, export_group, parse_definition
from flowsite.flows.models import ProcessGroup


class FlowDefinitionView(APIView):
    """The group and everything in it as a flow definition (NiFi's "download flow definition").
    Sensitive values are left out; identifiers are versioned ids, so exporting what an import
    made gives the document that was imported. As in NiFi, the caller needs the view policy on
    the group and on everything inside it (else 403 naming the component)."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT},
                   parameters=[OpenApiParameter("download", OpenApiTypes.BOOL, required=False,
                                                description="Answer as an attachment (a file to save).")])
    def get(self, request, pk):
        group = component_or_404(request, ProcessGroup, pk, policies.VIEW)
        require_view_subtree(request, group)
        response = Response(export_group(group, Identity.VERSIONED))
        filename = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in group.name) or "flow"
        if request.query_params.get("download") in ("1", "true"):
            response["Content-Disposition"] = f'attachment; filename="{filename}.json"'
        return response


class ImportView(APIView):
    """Create a group inside this one from a flow definition (the request body, as NiFi writes
    it). Every problem of a malformed definition comes back at once, with its JSON path."""

    @extend_schema(request=OpenApiTypes.OBJECT, responses={201: ProcessGroupSerializer},
                   parameters=[ImportQuerySerializer])
    def post(self, request, pk):
        parent = component_or_404(request, ProcessGroup, pk, policies.MODIFY)
        query = ImportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        if not isinstance(request.data, dict):
            raise exceptions.ValidationError("the body must be a flow definition (a JSON object)")
        flow = parse_definition(dict(request.data))
        for processor in flow.processors():
            check_restricted(request, parent, processor.type)
        for service in flow.services():
            check_restricted(request, parent, service.type, "service")
        group = do_import_group(parent, flow, acting_user=request.user, name=query.validated_data.get("name") or None)
        data = ProcessGroupSerializer(group, context={"request": request}).data
        return Response(data, status=status.HTTP_201_CREATED, headers={"Location": data["uri"]})
