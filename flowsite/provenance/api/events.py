"""One provenance event, its content and its replay, asked of the node that holds it.

The id is cluster-unique (``node-1:42``) or the node's number with ``?clusterNodeId=``. The node
receives the ids of every component of the user's tenants as scope: an event of any other
component is not found there (404, as an id that never existed); an event of one's own tenant
needs *view provenance* on its component (else 403), its content *view the data*, its replay
*modify the data* (NiFi's policies).
"""

from __future__ import annotations

import base64
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.reverse import reverse

from flowsite.cluster.api.views import ClusterEndpoint
from flowsite.provenance import scope
from flowsite.provenance.actions import do_replay
from flowsite.provenance.api.content import AnyMediaRenderer, content_response, downloader
from flowsite.provenance.api.dtos import ProvenanceEventEntitySerializer
from flowsite.provenance.api.inputs import ReplaySerializer, problem_at
from flowsite.provenance.direct import ContentGone, ask
from flowsite.provenance.events import Presenter, event_id, split_event_id
from flowsite.flows.access import MODIFY_DATA, VIEW_DATA, VIEW_PROVENANCE

__all__ = ["EventContent", "EventDetail", "Replays", "viewable_event"]

_MISSING = "no such provenance event"
_NODE_PARAMETER = OpenApiParameter("clusterNodeId", str, required=False,
                                   description="The node of a numeric event id.")


class _Event:
    """An event the user may view the provenance of, as its node gave it."""

    def __init__(self, node: str, number: int, event: dict[str, Any], presenter: Presenter, reach) -> None:
        self.node, self.number, self.event, self.presenter, self.reach = node, number, event, presenter, reach

    @property
    def component(self) -> str:
        return self.event.get("component_id") or ""

    def require(self, action: str) -> None:
        """403 unless the user may ``action`` the event's component."""
        if not self.presenter.can(self.component, action):
            raise exceptions.PermissionDenied(self.presenter.refusal(action))


def locate(text: str, cluster_node_id: str | None, path: tuple[str, ...] = ()) -> tuple[str, int]:
    """(node, number) of an event id (400 naming ``path``'s ``eventId`` when it is none)."""
    located = split_event_id(text, cluster_node_id or None)
    if located is None:
        raise problem_at((*path, "eventId"), f"{text!r} is not an event id: give 'node:number' (as events show it) "
                                             "or a number with clusterNodeId")
    return located


def viewable_event(request, text: str, cluster_node_id: str | None = None) -> _Event:
    """The event ``text`` names if the user may view its provenance: 404 when it is none of
    theirs, 403 without *view provenance* on its component."""
    node, number = locate(text, cluster_node_id)
    reach = scope.single(request)
    if number < 1 or not reach.components:
        raise exceptions.NotFound(_MISSING)
    event = ask(node, "provenance.event", {"id": number, "scope": sorted(reach.components)}, _MISSING).get("event")
    if not event:
        raise exceptions.NotFound(_MISSING)
    found = _Event(node, number, event, Presenter(scope.accesses(request)), reach)
    found.require(VIEW_PROVENANCE)
    return found


class EventDetail(ClusterEndpoint):
    """A provenance event with every field you may see (NiFi's ``ProvenanceEventEntity``)."""

    serializer_class = ProvenanceEventEntitySerializer

    @extend_schema(parameters=[_NODE_PARAMETER])
    def get(self, request, event_id):
        found = viewable_event(request, event_id, request.query_params.get("clusterNodeId"))
        return Response({"provenanceEvent": found.presenter.full(found.node, found.event)})


class EventContent(ClusterEndpoint):
    """The content of a provenance event as it was before (input) or after (output) the event,
    streamed from its node; ``Range: bytes=…`` asks for part of it (206)."""

    renderer_classes = [JSONRenderer, AnyMediaRenderer]
    direction = ""
    extra_error_statuses = (413, 416, 503)

    @extend_schema(parameters=[_NODE_PARAMETER, OpenApiParameter("Range", str, OpenApiParameter.HEADER,
                                                                  required=False, description="bytes=first-last")],
                   responses={(200, "*/*"): OpenApiResponse(OpenApiTypes.BINARY, description="The content."),
                              (206, "*/*"): OpenApiResponse(OpenApiTypes.BINARY, description="Part of it.")})
    def get(self, request, event_id):
        found = viewable_event(request, event_id, request.query_params.get("clusterNodeId"))
        found.require(VIEW_DATA)
        event = found.event
        claim = event.get(f"{self.direction}_claim")
        if not claim:
            raise ContentGone(f"content no longer available: the FlowFile had no content "
                              f"{'before' if self.direction == 'input' else 'after'} the event")
        if not event.get(f"{self.direction}_content_available"):
            raise ContentGone(f"content no longer available: it was aged off or deleted from the content repository "
                              f"(node {found.node})")
        attributes = found.presenter.full(found.node, event)["attributes"] or []
        values = {item["name"]: item["value"] for item in attributes}
        if self.direction == "input":
            values = {item["name"]: item["previousValue"] for item in attributes}
        scope_ids = sorted(found.reach.components)

        def read(offset: int, length: int, first: bool) -> bytes:
            args = {"id": found.number, "scope": scope_ids, "direction": self.direction, "offset": offset,
                    "length": length, **(downloader(request) if first else {})}
            answer = ask(found.node, "provenance.content", args, _MISSING)
            return base64.b64decode(answer.get("data") or "")

        return content_response(request, size=int(claim["length"]), read=read, filename=values.get("filename"),
                                mime_type=values.get("mime.type"))


class Replays(ClusterEndpoint):
    """Replay a provenance event: a new FlowFile with the event's input content and the
    attributes it had then is queued on the event's source connection (201 with the REPLAY
    event), or 409 saying why the node refused (NiFi's reasons)."""

    serializer_class = ReplaySerializer
    #: 404: an event that is none of yours.
    extra_error_statuses = (404, 409, 503)

    @extend_schema(request=ReplaySerializer, responses={201: ProvenanceEventEntitySerializer})
    def post(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        found = viewable_event(request, data["eventId"], data.get("clusterNodeId"))
        found.require(MODIFY_DATA)
        replay = do_replay(found.node, found.number, sorted(found.reach.components), request.user)
        shown = found.presenter.full(found.node, replay)
        uri = reverse("api:provenance-event", args=[event_id(found.node, replay["id"])], request=request)
        return Response({"provenanceEvent": shown}, status=status.HTTP_201_CREATED, headers={"Location": uri})
