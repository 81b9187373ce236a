"""Flow versions of a process group: commit, list, show, compare, revert."""

from __future__ import annotations

from django.db.models import ProtectedError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from flowsite.api.errors import Conflict
from flowsite.api.lookup import component_or_404
from flowsite.api.readable import require_view_document, require_view_subtree
from flowsite.api.serializers.groups import ProcessGroupSerializer
from flowsite.api.serializers.versions import (
    FlowVersionDetailSerializer,
    FlowVersionSerializer,
    RevertSerializer,
    VersionDiffSerializer,
)
from flowsite.flows import access as policies
from flowsite.flows.actions import do_commit_version, do_revert_to_version
from flowsite.flows.definition import Identity, export_group
from flowsite.flows.diff import flow_difference
from flowsite.flows.models import FlowVersion, ProcessGroup


def _version(group: ProcessGroup, number) -> FlowVersion:
    try:
        return group.versions.get(number=int(number))
    except (ValueError, FlowVersion.DoesNotExist):
        raise exceptions.NotFound(f"the group has no version {number}") from None


class VersionList(GenericAPIView):
    """The committed versions of a group (newest first), or commit a new one."""

    filter_backends = ()

    lists_on_get = True

    serializer_class = FlowVersionSerializer

    def get(self, request, pk):
        group = component_or_404(request, ProcessGroup, pk, policies.VIEW)
        page = self.paginate_queryset(group.versions.select_related("author").order_by("-number"))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def post(self, request, pk):
        group = component_or_404(request, ProcessGroup, pk, policies.MODIFY)
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        version = do_commit_version(group, serializer.validated_data.get("comment", ""), acting_user=request.user)
        return Response(self.get_serializer(version).data, status=status.HTTP_201_CREATED)


class VersionDetail(GenericAPIView):
    """One committed version with its flow definition (the caller must be able to view every
    component of it, see ``flowsite.api.readable``)."""

    serializer_class = FlowVersionDetailSerializer

    def get(self, request, pk, number):
        group = component_or_404(request, ProcessGroup, pk, policies.VIEW)
        version = _version(group, number)
        require_view_document(request, group, version.definition)
        return Response(self.get_serializer(version).data)


class VersionDiff(GenericAPIView):
    """What changed between two versions; ``current`` stands for the group as it is now."""

    serializer_class = VersionDiffSerializer

    @extend_schema(parameters=[
        OpenApiParameter("from", OpenApiTypes.STR, required=True, description="A version number or 'current'."),
        OpenApiParameter("to", OpenApiTypes.STR, required=False, description="A version number or 'current' "
                                                                             "(the default)."),
    ])
    def get(self, request, pk):
        group = component_or_404(request, ProcessGroup, pk, policies.VIEW)
        names = {"from": request.query_params.get("from"), "to": request.query_params.get("to") or "current"}
        if not names["from"]:
            raise exceptions.ValidationError({"from": "name the version to compare from (?from=N or ?from=current)"})
        definitions = {}
        for end, name in names.items():
            if name == "current":
                require_view_subtree(request, group, "comparing versions")
                definitions[end] = export_group(group, Identity.VERSIONED)
            else:
                try:
                    definitions[end] = group.versions.get(number=int(name)).definition
                except (ValueError, FlowVersion.DoesNotExist):
                    raise exceptions.ValidationError({end: f"the group has no version {name!r}"}) from None
                require_view_document(request, group, definitions[end], "comparing versions")
        return Response({"fromVersion": names["from"], "toVersion": names["to"],
                         "differences": flow_difference(definitions["from"], definitions["to"])})


class VersionRevert(GenericAPIView):
    """Make the group match a committed version (components kept by identifier, sensitive values
    kept where the version leaves them out)."""

    checks_revisions = True
    serializer_class = RevertSerializer

    @extend_schema(request=RevertSerializer, responses=ProcessGroupSerializer)
    def post(self, request, pk, number):
        group = component_or_404(request, ProcessGroup, pk, policies.MODIFY)
        version = _version(group, number)
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        revision = serializer.validated_data["revision"]
        try:
            do_revert_to_version(group, version, revision=revision.get("version"),
                                 client_id=revision.get("clientId") or "", acting_user=request.user)
        except ProtectedError as error:
            joined = ", ".join(sorted(str(c.pk) for c in error.protected_objects))
            raise Conflict("the version leaves out components that connections outside the group lead to "
                           f"(connections {joined}): delete those connections first") from None
        return Response(ProcessGroupSerializer(group, context={"request": request}).data)
