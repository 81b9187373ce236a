"""Parameter contexts: list the user's and create one, read, update and delete each (the rules
are ``flowsite.api.parameter_changes``'s)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from flowsite.api import parameter_changes as changes
from flowsite.api.lookup import tenant_or_404, tenants_of
from flowsite.api.serializers.parameters import ParameterContextSerializer
from flowsite.api.views.components import REVISION_PARAMETERS, revision_from_query
from flowsite.flows import access as policies


class ParameterContextList(GenericAPIView):
    """The parameter contexts of the user's tenants (those whose root group the user may view);
    POST creates one (``tenantId`` names the tenant of a member of several)."""

    lists_on_get = True
    filter_backends = ()
    serializer_class = ParameterContextSerializer
    extra_error_statuses = (404,)  # POST: a tenantId that is not one of the user's tenants

    def get(self, request):
        page = self.paginate_queryset(changes.visible_contexts(request))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def post(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        context = changes.create(request, self._tenant(request, serializer.validated_data.get("tenant_id")),
                                 serializer)
        body = self.get_serializer(context).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["uri"]})

    @staticmethod
    def _tenant(request, tenant_id):
        if tenant_id is not None:
            return tenant_or_404(request, tenant_id)
        tenants = list(tenants_of(request)[:2])
        if len(tenants) != 1:
            raise exceptions.ValidationError({"tenantId": "name the tenant the context belongs to"})
        return tenants[0]


class ParameterContextDetail(GenericAPIView):
    """One parameter context: read, update (``parameters`` is the whole list), delete (409 when a
    group uses it or another context inherits it)."""

    checks_revisions = True
    partial_updates = True
    serializer_class = ParameterContextSerializer
    delete_error_statuses = (409,)

    def get(self, request, pk):
        return Response(self.get_serializer(changes.context_or_404(request, pk, policies.VIEW)).data)

    def put(self, request, pk):
        context = changes.context_or_404(request, pk, policies.MODIFY)
        serializer = self.get_serializer(context, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        changes.update(request, context, serializer)
        return Response(self.get_serializer(context).data)

    def patch(self, request, pk):
        return self.put(request, pk)

    @extend_schema(parameters=REVISION_PARAMETERS, responses={204: None})
    def delete(self, request, pk):
        context = changes.context_or_404(request, pk, policies.MODIFY)
        version, client_id = revision_from_query(request)
        changes.delete(request, context, version, client_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
