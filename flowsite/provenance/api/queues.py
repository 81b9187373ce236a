"""A connection's queue as NiFi's ``/flowfile-queues`` shows it: listing requests, drop requests,
one queued FlowFile and its content.

Listing a queue, and a queued FlowFile and its content, need *view the data* on the connection;
dropping needs *modify the data*. Another tenant's connection is a 404 (``component_or_404``);
a request of another queue, or of anyone else, is a 404 too.
"""

from __future__ import annotations

import base64
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from flowsite.api.lookup import component_or_404
from flowsite.cluster.api.views import ClusterEndpoint
from flowsite.flows.access import MODIFY_DATA, VIEW_DATA
from flowsite.flows.models import Connection
from flowsite.provenance import store
from flowsite.provenance.api import shapes
from flowsite.provenance.api.content import AnyMediaRenderer, content_response, downloader
from flowsite.provenance.api.dtos import (DropRequestEntitySerializer, FlowFileEntitySerializer,
                                          ListingRequestEntitySerializer)
from flowsite.provenance.api.requests import RequestDetail, RequestEndpoint
from flowsite.provenance.direct import ContentGone, ask, ask_connected
from flowsite.provenance.submission import submit

__all__ = ["DropDetail", "DropRequests", "ListingDetail", "ListingRequests", "QueuedContent", "QueuedFlowFile"]

#: FlowFiles a listing shows (NiFi's 100).
LISTING_SIZE = 100
_NO_FLOWFILE = "no such FlowFile in this queue"
_NODE_PARAMETER = OpenApiParameter("clusterNodeId", str, required=False,
                                   description="The node holding the FlowFile (default: ask every node).")


class _QueueRequest:
    """A request about one queue, at ``flowfile-queues/{pk}/…/{request_id}``."""

    def route_args(self, record: dict[str, Any]) -> dict[str, Any]:
        return {"pk": record["connection"], "request_id": record["id"]}

    def record(self, request_id, pk=None, **kwargs) -> dict[str, Any]:
        record = store.owned(request_id, self.request.user, self.kind)
        if record["connection"] != str(pk):
            raise exceptions.NotFound(f"no such {store.NOUNS[self.kind]}")
        return record

    def new(self, connection: Connection, **fields: Any) -> dict[str, Any]:
        return store.new(self.kind, self.request.user, connection=str(connection.pk),
                         tenants=[str(connection.tenant_id)], **fields)


class _Listing(_QueueRequest):
    kind = "listing"
    envelope = "listingRequest"
    detail_route = "api:listing-request"


class ListingRequests(_Listing, RequestEndpoint):
    """List the queue (NiFi's listing request): its size over every node and its first 100
    FlowFiles by priority on each node, merged by position; 202, then follow its ``uri``."""

    serializer_class = ListingRequestEntitySerializer

    @extend_schema(request=None, responses={202: ListingRequestEntitySerializer})
    def post(self, request, pk):
        connection = component_or_404(request, Connection, pk, VIEW_DATA)
        return self.answer(submit(self.new(connection, max_results=LISTING_SIZE)), status.HTTP_202_ACCEPTED)


class ListingDetail(_Listing, RequestDetail):
    """One of your listings of this queue: GET follows it, DELETE forgets it."""

    serializer_class = ListingRequestEntitySerializer


class _Drop(_QueueRequest):
    kind = "drop"
    envelope = "dropRequest"
    detail_route = "api:drop-request"


class DropRequests(_Drop, RequestEndpoint):
    """Drop every FlowFile queued in the connection on every node (NiFi's drop request, "Empty
    queue"): 202, then follow its ``uri``. Each dropped FlowFile gets a DROP event naming you."""

    serializer_class = DropRequestEntitySerializer
    read_in_effect = False

    @extend_schema(request=None, responses={202: DropRequestEntitySerializer})
    def post(self, request, pk):
        connection = component_or_404(request, Connection, pk, MODIFY_DATA)
        record = self.new(connection, requester=request.user.get_username())
        return self.answer(submit(record), status.HTTP_202_ACCEPTED)


class DropDetail(_Drop, RequestDetail):
    """One of your drop requests of this queue: GET follows it, DELETE forgets it."""

    serializer_class = DropRequestEntitySerializer


def _queued(request, pk, uuid: str) -> tuple[Connection, str, dict[str, Any]]:
    """The connection, the node and the FlowFile ``uuid`` queued there (404 when none)."""
    connection = component_or_404(request, Connection, pk, VIEW_DATA)
    args = {"id": str(connection.pk), "uuid": uuid}
    node = request.query_params.get("clusterNodeId")
    if node:
        answers = {node: ask(node, "queue.flowfile", args, _NO_FLOWFILE)}
    else:
        answers = ask_connected("queue.flowfile", args)
    for name, answer in sorted(answers.items()):
        if answer.get("flowfile"):
            return connection, name, answer["flowfile"]
    raise exceptions.NotFound(_NO_FLOWFILE)


class QueuedFlowFile(ClusterEndpoint):
    """A FlowFile queued in the connection: its attributes and content claim (NiFi's FlowFileDTO)."""

    serializer_class = FlowFileEntitySerializer

    @extend_schema(parameters=[_NODE_PARAMETER])
    def get(self, request, pk, uuid):
        connection, node, found = _queued(request, pk, uuid)
        return Response({"flowFile": shapes.flowfile(str(connection.pk), node, found)})


class QueuedContent(ClusterEndpoint):
    """The content of a FlowFile queued in the connection, streamed from its node; ``Range:
    bytes=…`` asks for part of it (206)."""

    renderer_classes = [JSONRenderer, AnyMediaRenderer]
    extra_error_statuses = (413, 416, 503)

    @extend_schema(parameters=[_NODE_PARAMETER, OpenApiParameter("Range", str, OpenApiParameter.HEADER,
                                                                  required=False, description="bytes=first-last")],
                   responses={(200, "*/*"): OpenApiResponse(OpenApiTypes.BINARY, description="The content."),
                              (206, "*/*"): OpenApiResponse(OpenApiTypes.BINARY, description="Part of it.")})
    def get(self, request, pk, uuid):
        connection, node, found = _queued(request, pk, uuid)
        claim = found.get("claim")
        if claim and not found.get("content_available"):
            raise ContentGone(f"content no longer available: it was removed from the content repository (node {node})")
        args = {"id": str(connection.pk), "uuid": uuid}

        def read(offset: int, length: int, first: bool) -> bytes:
            asked = {**args, "offset": offset, "length": length, **(downloader(request) if first else {})}
            answer = ask(node, "queue.content", asked, _NO_FLOWFILE)
            return base64.b64decode(answer.get("data") or "")

        attributes = found.get("attributes") or {}
        return content_response(request, size=int(claim["length"]) if claim else 0, read=read,
                                filename=attributes.get("filename"),
                                mime_type=attributes.get("mime.type"))
