"""What the endpoints of request resources share: following and forgetting one's own request.

``GET`` answers the request in NiFi's envelope (``{"provenance": {…}}``, ``{"lineage": {…}}``,
``{"listingRequest": {…}}``, ``{"dropRequest": {…}}``, ``{"provenanceExport": {…}}``); ``DELETE``
forgets it at once (its job stops) and answers it as it was, as NiFi does. Anyone but its
submitter gets a 404, exactly as for an id that never existed.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.reverse import reverse

from flowsite.cluster.api.views import ClusterEndpoint
from flowsite.provenance import store
from flowsite.provenance.api import shapes

__all__ = ["RequestDetail", "RequestEndpoint"]


class RequestEndpoint(ClusterEndpoint):
    """An endpoint of requests of ``kind``, shown in ``envelope`` as ``shapes.<kind>`` makes
    them; one that submits them answers 409 when the user keeps too many."""

    kind = ""
    envelope = ""
    #: The URL name of the request's own resource.
    detail_route = ""
    #: Submitting a search, and forgetting one's request, only read: read-only API tokens may.
    read_in_effect = True
    extra_error_statuses = (409, 503)

    def uri(self, record: dict[str, Any]) -> str:
        return reverse(self.detail_route, kwargs=self.route_args(record), request=self.request)

    def route_args(self, record: dict[str, Any]) -> dict[str, Any]:
        return {"request_id": record["id"]}

    def shape(self, record: dict[str, Any]) -> dict[str, Any]:
        return getattr(shapes, self.kind)(record, self.uri(record), self.request.user)

    def answer(self, record: dict[str, Any], status: int) -> Response:
        shown = self.shape(record)
        return Response({self.envelope: shown}, status=status, headers={"Location": shown["uri"]})


class RequestDetail(RequestEndpoint):
    """One request of ``kind`` of the requesting user: GET follows it, DELETE forgets it."""

    extra_error_statuses = (503,)

    def record(self, request_id, **kwargs) -> dict[str, Any]:
        """The request, if it is the user's (and, for a queue's request, that queue's)."""
        return store.owned(request_id, self.request.user, self.kind)

    def get(self, request, request_id, **kwargs):
        return Response({self.envelope: self.shape(self.record(request_id, **kwargs))})

    @extend_schema(description="Forget the request at once (a job still running stops); answers it as it was.")
    def delete(self, request, request_id, **kwargs):
        record = self.record(request_id, **kwargs)
        store.delete(record)
        return Response({self.envelope: self.shape(record)})
