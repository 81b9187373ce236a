"""What platform operators see and change of a tenant: its grants on the shared nodes."""

from __future__ import annotations

from rest_framework import serializers

from flowsite.tenancy.grants import PORT_HIGH, PORT_LOW
from engine.flow.loader import CAPABILITIES


class PlatformTenantSerializer(serializers.Serializer):
    """A tenant and what an operator granted it. PATCH replaces the fields it names."""

    id = serializers.UUIDField(read_only=True)
    name = serializers.CharField(read_only=True)
    slug = serializers.CharField(read_only=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    capabilities = serializers.ListField(
        child=serializers.ChoiceField(CAPABILITIES), required=False, max_length=len(CAPABILITIES) * 2,
        help_text="Restricted-component capabilities granted (NiFi 2's names).")
    fileRoots = serializers.ListField(
        child=serializers.CharField(max_length=1024), source="file_roots", required=False, max_length=100,
        help_text="Absolute directories the tenant's flow may use on the nodes; [] means <files root>/<slug>. "
                  "/proc, /sys, /dev and the platform's directories are refused.")
    networkAllow = serializers.ListField(
        child=serializers.CharField(max_length=255), source="network_allow", required=False, max_length=1000,
        help_text="Outbound destinations opened: CIDR range, host, or host:port.")
    listenPorts = serializers.ListField(
        child=serializers.IntegerField(min_value=PORT_LOW, max_value=PORT_HIGH), min_length=2, max_length=2,
        allow_null=True, required=False,
        help_text="[first, last] port the tenant's listeners may bind, or null: the tenant may not listen.")
    pool = serializers.CharField(max_length=64, allow_blank=True, required=False,
                                 help_text="Node pool (a runnode label) the tenant runs on; \"\" = the shared pool.")

    def to_representation(self, tenant):
        data = super().to_representation(tenant)
        low, high = tenant.listen_port_low, tenant.listen_port_high
        data["listenPorts"] = [low, high] if low is not None and high is not None else None
        return data
