"""API token resources."""

from __future__ import annotations

from django.utils import timezone
from rest_framework import serializers


class TokenSerializer(serializers.Serializer):
    """An API token (its secret is never shown again after creation)."""

    id = serializers.UUIDField(read_only=True)
    name = serializers.CharField(max_length=100)
    key = serializers.CharField(read_only=True, help_text="The public part of the secret, to recognise it.")
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    expiresAt = serializers.DateTimeField(source="expires_at", required=False, allow_null=True,
                                          help_text="When the token stops working (none: never).")
    revokedAt = serializers.DateTimeField(source="revoked_at", read_only=True, allow_null=True)
    lastUsedAt = serializers.DateTimeField(source="last_used_at", read_only=True, allow_null=True)
    state = serializers.CharField(read_only=True)
    tenant = serializers.UUIDField(source="tenant_id", required=False, allow_null=True,
                                   help_text="The one tenant the token reaches (none: every tenant of the user).")
    readOnly = serializers.BooleanField(source="read_only", required=False, default=False,
                                        help_text="The token may only read: unsafe methods are refused (403).")

    def validate_expiresAt(self, value):
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError("the expiry must be in the future")
        return value


class NewTokenSerializer(TokenSerializer):
    """A token just created, with its secret."""

    secret = serializers.CharField(read_only=True, help_text="Send as 'Authorization: Bearer <secret>'. "
                                                             "Shown this once only.")
