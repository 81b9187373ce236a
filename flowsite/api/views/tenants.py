"""The tenants the requesting user belongs to."""

from __future__ import annotations

from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from flowsite.api.lookup import tenant_or_404, tenants_of
from flowsite.api.serializers.tenants import TenantSerializer


class TenantList(GenericAPIView):
    """The user's tenants."""

    filter_backends = ()

    lists_on_get = True

    serializer_class = TenantSerializer

    def get(self, request):
        page = self.paginate_queryset(tenants_of(request).order_by("name"))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class TenantDetail(GenericAPIView):
    """One of the user's tenants."""

    serializer_class = TenantSerializer

    def get(self, request, pk):
        return Response(self.get_serializer(tenant_or_404(request, pk)).data)
