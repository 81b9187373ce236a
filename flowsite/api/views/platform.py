"""The platform operators' API: every tenant and what it is granted on the shared nodes
(restricted capabilities, file roots, outbound allowlist, listen ports, node pool). Only holders
of ``tenancy.operate_platform`` reach it; to anyone else it answers 403 and shows nothing."""

from __future__ import annotations

from dataclasses import replace

from rest_framework import exceptions
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import BasePermission
from rest_framework.response import Response

from flowsite.api.serializers.platform import PlatformTenantSerializer
from flowsite.tenancy.actions import do_change_tenant_grants
from flowsite.tenancy.grants import GrantError, Grants
from flowsite.tenancy.models import Tenant, is_platform_operator

#: Request fields by the name GrantError gives them.
_FIELDS = {"capabilities": "capabilities", "file_roots": "fileRoots", "network_allow": "networkAllow",
           "listen_ports": "listenPorts", "pool": "pool"}


class IsPlatformOperator(BasePermission):
    """Only platform operators (``tenancy.operate_platform``)."""

    message = "platform operators only"

    def has_permission(self, request, view) -> bool:
        return is_platform_operator(request.user)


class PlatformTenantList(GenericAPIView):
    """Every tenant of the platform with its grants."""

    permission_classes = [IsPlatformOperator]
    serializer_class = PlatformTenantSerializer
    filter_backends = ()
    lists_on_get = True

    def get(self, request):
        page = self.paginate_queryset(Tenant.objects.order_by("slug"))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class PlatformTenantDetail(GenericAPIView):
    """One tenant's grants: read, or change (PATCH and PUT replace the fields they name)."""

    permission_classes = [IsPlatformOperator]
    serializer_class = PlatformTenantSerializer
    partial_updates = True

    def tenant(self, pk) -> Tenant:
        tenant = Tenant.objects.filter(pk=pk).first()
        if tenant is None:
            raise exceptions.NotFound("no such tenant")
        return tenant

    def get(self, request, pk):
        return Response(self.get_serializer(self.tenant(pk)).data)

    def patch(self, request, pk):
        tenant = self.tenant(pk)
        serializer = self.get_serializer(tenant, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        if "listenPorts" in data:
            ports = data.pop("listenPorts")
            data["listen_port_low"], data["listen_port_high"] = ports if ports is not None else (None, None)
        try:
            do_change_tenant_grants(tenant, replace(Grants.of(tenant), **data), acting_user=request.user)
        except GrantError as error:
            raise exceptions.ValidationError({_FIELDS[error.field]: [error.message]}) from None
        return Response(self.get_serializer(tenant).data)

    def put(self, request, pk):
        return self.patch(request, pk)
