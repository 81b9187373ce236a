"""API tokens: bearer secrets for scripts and tools, stored hashed, shown once, able to expire
and be revoked, and to be narrowed to one tenant and to reading only. A token made with a token
holds no more than its parent (see ``narrowed``)."""

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
    tenant = models.ForeignKey("tenancy.Tenant", on_delete=models.CASCADE, null=True, blank=True,
                               related_name="+", help_text="The one tenant the token reaches (none: every tenant "
                                                           "of its user).")
    read_only = models.BooleanField(default=False, help_text="The token may only read (safe methods).")
    parent = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="children",
                               help_text="The token that created this one, if a token did.")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"

    @classmethod
    def issue(cls, user, name: str, expires_at=None, *, tenant=None, read_only: bool = False,
              parent: ApiToken | None = None) -> tuple[ApiToken, str]:
        """A new token for ``user`` and its secret (which is not stored and cannot be shown again).
        The caller has checked the scope against ``parent`` (``narrowed``)."""
        key = secrets.token_hex(6)
        secret = f"{TOKEN_PREFIX}{key}_{secrets.token_urlsafe(32)}"
        token = cls.objects.create(user=user, name=name, key=key, secret_hash=digest(secret), expires_at=expires_at,
                                   tenant=tenant, read_only=read_only, parent=parent)
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


def narrowed(parent: ApiToken | None, expires_at, tenant, read_only: bool) -> tuple[dict[str, str], dict]:
    """The scope of a token made by a request authenticated with ``parent`` (None: a session):
    (problems by field, the scope to issue). A child never outlives its parent (an expiring
    parent gives an expiring child, by default expiring with it), never reaches another tenant,
    and is read-only when the parent is."""
    problems: dict[str, str] = {}
    if parent is not None:
        if parent.expires_at is not None:
            if expires_at is None:
                expires_at = parent.expires_at
            elif expires_at > parent.expires_at:
                problems["expiresAt"] = (f"a token cannot make a token that outlives it: this token expires at "
                                         f"{parent.expires_at.isoformat()}")
        if parent.tenant_id is not None:
            if tenant is None:
                tenant = parent.tenant
            elif tenant.pk != parent.tenant_id:
                problems["tenant"] = "no such tenant"
        if parent.read_only and not read_only:
            problems["readOnly"] = "a read-only token can only make read-only tokens"
    return problems, {"expires_at": expires_at, "tenant": tenant, "read_only": read_only or bool(
        parent and parent.read_only)}
