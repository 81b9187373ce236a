"""API tokens: bearer secrets for scripts and tools, stored hashed, shown once, able to expire
and be revoked."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

TOKEN_PREFIX = "fst_"


def digest(secret: str) -> str:
    """The stored form of a token secret (SHA-256: the secret is random, not a password)."""
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiToken(models.Model):
    """A user's API token. The secret reads ``fst_<key>_<random>``: ``key`` finds the row, the
    whole secret is compared against ``secret_hash``."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    key = models.CharField(max_length=16, unique=True, editable=False)
    secret_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"

    @classmethod
    def issue(cls, user, name: str, expires_at=None) -> tuple[ApiToken, str]:
        """A new token for ``user`` and its secret (which is not stored and cannot be shown again)."""
        key = secrets.token_hex(6)
        secret = f"{TOKEN_PREFIX}{key}_{secrets.token_urlsafe(32)}"
        token = cls.objects.create(user=user, name=name, key=key, secret_hash=digest(secret), expires_at=expires_at)
        return token, secret

    @classmethod
    def find(cls, secret: str) -> ApiToken | None:
        """The token ``secret`` belongs to, whatever its state; None when it belongs to none."""
        if not secret.startswith(TOKEN_PREFIX):
            return None
        key = secret[len(TOKEN_PREFIX):].split("_", 1)[0]
        token = cls.objects.select_related("user").filter(key=key).first()
        if token is None or not hmac.compare_digest(token.secret_hash, digest(secret)):
            return None
        return token

    @property
    def state(self) -> str:
        """``active``, ``expired`` or ``revoked``."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= timezone.now():
            return "expired"
        return "active"
