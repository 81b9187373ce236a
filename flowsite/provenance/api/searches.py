"""Searches of the nodes' provenance: NiFi's provenance queries and lineage, and exports.

Each is a request resource run as a job (``flowsite.provenance.jobs``): the POST keeps it,
queues the job and waits up to half a second for it; GET follows it, DELETE forgets it. A search
needs the tenant's *query provenance* policy and covers the components of one's tenants one may
*view the provenance* of (``flowsite.provenance.scope``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import StreamingHttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from engine.provenance.lineage import EXPANDABLE
from flowsite.api.errors import Conflict
from flowsite.cluster.api.views import ClusterEndpoint
from flowsite.cluster.nodes import nodes
from flowsite.provenance import criteria, scope, store
from flowsite.provenance.api import shapes
from flowsite.provenance.api.content import AnyMediaRenderer, streamed
from flowsite.provenance.api.dtos import (ExportEntitySerializer, LineageEntitySerializer,
                                          ProvenanceEntitySerializer, ProvenanceOptionsEntitySerializer)
from flowsite.provenance.api.events import locate, viewable_event
from flowsite.provenance.api.inputs import (ExportRequestSerializer, ExportSubmitSerializer, LineageSubmitSerializer,
                                            ProvenanceRequestSerializer, ProvenanceSubmitSerializer, problem_at)
from flowsite.provenance.api.requests import RequestDetail, RequestEndpoint
from flowsite.provenance.events import Presenter
from flowsite.provenance.submission import submit

__all__ = ["ExportContent", "ExportDetail", "Exports", "LineageDetail", "LineageRequests", "ProvenanceQueries",
           "ProvenanceQuery", "SearchOptions"]

#: The event types whose parents and children a lineage request may expand (NiFi's).
_EXPANDABLE = {event_type.value for event_type in EXPANDABLE}


def _known_node(node: str | None, path: tuple[str, ...]) -> None:
    """400 unless ``node`` (when given) is a node of the cluster."""
    if node and node not in nodes():
        raise problem_at((*path, "clusterNodeId"), f"no node {node!r} in the cluster")


def _search_record(kind: str, request, search: dict[str, Any], path: tuple[str, ...], **fields: Any) -> dict[str, Any]:
    """A new request of ``kind`` searching with the validated NiFi ``search`` (a ``request``
    found at ``path`` of the body)."""
    _known_node(search.get("clusterNodeId"), path)
    reach = scope.searchable(request, search.get("tenant"))
    found = criteria.search(search, reach.visible)
    shown = {name: str(value) if name == "tenant" else value for name, value in search.items() if value is not None}
    return store.new(kind, request.user, request=shown, tenants=list(reach.tenants),
                     search={"query": found.query, "scope": sorted(found.scope)}, **fields)


class SearchOptions(ClusterEndpoint):
    """The fields a provenance query may search (NiFi's ``ProvenanceOptionsEntity``)."""

    serializer_class = ProvenanceOptionsEntitySerializer
    extra_error_statuses = ()

    def get(self, request):
        scope.require_query(request)
        return Response({"provenanceOptions": {"searchableFields": [
            {"id": identifier, "field": field, "label": label, "type": "STRING"}
            for identifier, field, label in criteria.SEARCHABLE_FIELDS]}})


class _QueryEndpoint:
    kind = "query"
    envelope = "provenance"
    detail_route = "api:provenance-query"

    def shape(self, record):
        asked = self.request.query_params.get("incrementalResults")
        incremental = record["request"].get("incrementalResults", True) if asked is None else asked.lower() != "false"
        return shapes.query(record, self.uri(record), self.request.user, Presenter(scope.accesses(self.request)),
                            incremental)


class ProvenanceQueries(_QueryEndpoint, RequestEndpoint):
    """Submit a provenance query (NiFi's ``POST /provenance``): 201 with the query, finished if
    it took less than half a second; follow its ``uri`` until ``finished``, then DELETE it."""

    serializer_class = ProvenanceSubmitSerializer
    #: 404: a tenant that is none of yours.
    extra_error_statuses = (404, 409, 503)

    @extend_schema(request=ProvenanceSubmitSerializer, responses={201: ProvenanceEntitySerializer})
    def post(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        search = (serializer.validated_data.get("provenance") or {}).get("request")
        if search is None:
            defaults = ProvenanceRequestSerializer(data={})
            defaults.is_valid(raise_exception=True)
            search = defaults.validated_data
        record = submit(_search_record("query", request, dict(search), ("provenance", "request")))
        return self.answer(record, status.HTTP_201_CREATED)


class ProvenanceQuery(_QueryEndpoint, RequestDetail):
    """One of your provenance queries (NiFi's ``GET``/``DELETE /provenance/{id}``)."""

    serializer_class = ProvenanceEntitySerializer

    @extend_schema(parameters=[OpenApiParameter("incrementalResults", bool, required=False,
                                                description="false: no events until the query has finished."),
                               OpenApiParameter("summarize", bool, required=False,
                                                description="Accepted for NiFi clients: results are summaries.")])
    def get(self, request, request_id, **kwargs):
        return super().get(request, request_id, **kwargs)


class _LineageEndpoint:
    kind = "lineage"
    envelope = "lineage"
    detail_route = "api:lineage-request"


class LineageRequests(_LineageEndpoint, RequestEndpoint):
    """Submit a lineage request (NiFi's ``POST /provenance/lineage``): the lineage of a FlowFile,
    or the parents or children of an event; 201, then follow its ``uri``."""

    serializer_class = LineageSubmitSerializer
    #: 404: an eventId that is none of yours.
    extra_error_statuses = (404, 409, 503)

    @extend_schema(request=LineageSubmitSerializer, responses={201: LineageEntitySerializer})
    def post(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        asked = dict(serializer.validated_data["lineage"]["request"])
        kind = asked["lineageRequestType"]
        reach = scope.searchable(request, asked.get("tenant"))
        fields: dict[str, Any] = {"root": asked.get("uuid")}
        if asked.get("eventId") and not (kind == "FLOWFILE" and asked.get("uuid")):
            node, number = locate(asked["eventId"], asked.get("clusterNodeId"), ("lineage", "request"))
            found = viewable_event(request, f"{node}:{number}")
            if str(found.event.get("component_id")) not in reach.components:
                raise exceptions.PermissionDenied("you may not query this tenant's provenance (the "
                                                  "'query_provenance' policy)")
            if kind != "FLOWFILE" and found.event.get("type") not in _EXPANDABLE:
                raise problem_at(("lineage", "request", "eventId"), (
                    f"a {found.event.get('type')} event has no {kind.lower()} to expand: only FORK, JOIN, CLONE and "
                    "REPLAY events have them"))
            fields = {"root": found.event["flowfile_uuid"]} if kind == "FLOWFILE" else {"event": [node, number]}
        record = store.new("lineage", request.user, request={key: str(value) if key == "tenant" else value
                                                             for key, value in asked.items() if value is not None},
                           tenants=list(reach.tenants), scope=sorted(reach.components), visible=sorted(reach.visible),
                           **fields)
        return self.answer(submit(record), status.HTTP_201_CREATED)


class LineageDetail(_LineageEndpoint, RequestDetail):
    """One of your lineage requests (NiFi's ``GET``/``DELETE /provenance/lineage/{id}``)."""

    serializer_class = LineageEntitySerializer


class _ExportEndpoint:
    kind = "export"
    envelope = "provenanceExport"
    detail_route = "api:provenance-export"


class Exports(_ExportEndpoint, RequestEndpoint):
    """Export the events of a search as CSV or JSON, newest first across the nodes (at most
    FLOWSITE_PROVENANCE_EXPORT_MAX_EVENTS): 202, then follow its ``uri`` until ``finished`` and
    read its ``contentUri``."""

    serializer_class = ExportSubmitSerializer
    #: 404: a tenant that is none of yours.
    extra_error_statuses = (404, 409, 503)

    @extend_schema(request=ExportSubmitSerializer, responses={202: ExportEntitySerializer})
    def post(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        asked = serializer.validated_data.get("provenanceExport") or {}
        search = asked.get("request")
        if search is None:
            defaults = ExportRequestSerializer(data={})
            defaults.is_valid(raise_exception=True)
            search = defaults.validated_data
        record = _search_record("export", request, dict(search), ("provenanceExport", "request"),
                                format=asked.get("format", "CSV"),
                                max_events=asked.get("maxEvents") or settings.FLOWSITE_PROVENANCE_EXPORT_MAX_EVENTS)
        return self.answer(submit(record), status.HTTP_202_ACCEPTED)


class ExportDetail(_ExportEndpoint, RequestDetail):
    """One of your provenance exports: GET follows it, DELETE forgets it and its file."""

    serializer_class = ExportEntitySerializer


class ExportContent(_ExportEndpoint, RequestDetail):
    """The file of one of your finished provenance exports (409 until it has finished)."""

    renderer_classes = [JSONRenderer, AnyMediaRenderer]
    extra_error_statuses = (409, 503)
    http_method_names = ["get", "head", "options"]

    @extend_schema(responses={(200, "*/*"): OpenApiResponse(description="The CSV or JSON file.")})
    def get(self, request, request_id, **kwargs):
        record = self.record(request_id)
        if record["state"] != "done":
            raise Conflict(f"the export has not finished ({record['state']}): follow its uri until it has")
        form = record["format"]
        kind = "text/csv; charset=utf-8" if form == "CSV" else "application/json"
        response = StreamingHttpResponse(streamed(request, store.content(record["id"])), content_type=kind)
        response["Content-Length"] = str((record.get("result") or {}).get("bytes") or 0)
        response["Content-Disposition"] = content_disposition_header(True, f"provenance-{record['id']}.{form.lower()}")
        return response
