"""The provenance analytics endpoints: submit a request (a ready question, or SQL for platform
operators), follow it, read its result, delete it. The request runs as a Celery job
(``flowsite.provenance.jobs``); these endpoints only keep and read requests in the cluster's Redis
(503 when it does not answer). A request is its maker's alone: to anyone else it is a 404."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.throttling import ScopedRateThrottle

from engine.spark.provenance_sql import QUESTIONS
from flowsite.cluster.api.views import ClusterEndpoint
from flowsite.provenance import analytics, store
from flowsite.provenance.api.serializers import (AnalyticsAnswerSerializer, AnalyticsRequestSerializer,
                                                 QuestionsSerializer)
from flowsite.tenancy.models import is_platform_operator


class AnalyticsThrottle(ScopedRateThrottle):
    """Submissions per user at the ``analytics`` rate; reading is not throttled."""

    def allow_request(self, request, view):
        return request.method != "POST" or super().allow_request(request, view)


class AnalyticsList(ClusterEndpoint):
    """Submit an analytics request: 202 with the request, to be followed at its ``url`` until its
    state is ``done`` (or ``failed``)."""

    serializer_class = AnalyticsRequestSerializer
    throttle_classes = [AnalyticsThrottle]
    throttle_scope = "analytics"
    #: Asking a question only reads: read-only API tokens may.
    read_in_effect = True
    #: 404: the request names a tenant that does not exist or that the user does not belong to.
    extra_error_statuses = (404, 503)

    @extend_schema(request=AnalyticsRequestSerializer, responses={202: AnalyticsAnswerSerializer})
    def post(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        scope = analytics.scope_for(request, data.get("tenant"))
        record = analytics.submit(request.user, scope, question=data.get("question"), params=data.get("params"),
                                  sql=data.get("sql"))
        answer = analytics.public(record, request.user)
        url = reverse("api:provenance-analytics-request", args=[record["id"]], request=request)
        return Response({**answer, "url": url}, status=status.HTTP_202_ACCEPTED, headers={"Location": url})


class AnalyticsQuestions(ClusterEndpoint):
    """The ready questions, and whether you may send ad-hoc SQL."""

    serializer_class = QuestionsSerializer
    extra_error_statuses = ()

    def get(self, request):
        return Response({"questions": [question.as_dict() for question in QUESTIONS.values()],
                         "may_use_sql": is_platform_operator(request.user)})


class AnalyticsDetail(ClusterEndpoint):
    """One of your analytics requests: its state, progress and (once done) result; DELETE forgets
    it (a job still running stops)."""

    serializer_class = AnalyticsAnswerSerializer
    read_in_effect = True

    def get(self, request, request_id):
        return Response(analytics.public(analytics.owned(request_id, request.user), request.user))

    @extend_schema(responses={204: None})
    def delete(self, request, request_id):
        store.delete(analytics.owned(request_id, request.user))
        return Response(status=status.HTTP_204_NO_CONTENT)
