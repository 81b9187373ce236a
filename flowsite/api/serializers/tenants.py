"""Tenant resources: the tenants the user belongs to."""

from __future__ import annotations

from rest_framework import serializers

from flowsite.api.lookup import access_for
from flowsite.flows.access import GLOBAL_ACTIONS
from flowsite.flows.tenants import root_group


class TenantSerializer(serializers.Serializer):
    """A tenant, its root group and the user's global policies in it."""

    id = serializers.UUIDField(read_only=True)
    name = serializers.CharField(read_only=True)
    slug = serializers.CharField(read_only=True)
    rootGroupId = serializers.SerializerMethodField()
    globalPolicies = serializers.SerializerMethodField()

    def get_rootGroupId(self, tenant) -> str:
        return str(root_group(tenant).pk)

    def get_globalPolicies(self, tenant) -> list[str]:
        access = access_for(self.context["request"], tenant)
        return [action for action in GLOBAL_ACTIONS if access.has_global(action)]
