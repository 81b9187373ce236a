"""What an API token's scope allows on top of the user's policies."""

from __future__ import annotations

from django.conf import settings
from rest_framework.permissions import SAFE_METHODS, BasePermission


class TokenScope(BasePermission):
    """A read-only token may only read: GET, HEAD, OPTIONS, and the requests that only read
    though they are sent as POST or DELETE — submitting a search (a provenance query, lineage, an
    export, a queue listing, analytics) and forgetting one's own request resource, which NiFi
    authorizes as reads too. A view says so with ``read_in_effect = True``. Anything else
    (replaying, dropping, every change to the flow) is a 403. (A token scoped to one tenant is
    narrowed where tenants are looked up: ``flowsite.api.lookup``.)"""

    message = "this API token is read-only: it may only read (GET, HEAD, OPTIONS, and submit searches)"

    def has_permission(self, request, view) -> bool:
        return (request.method in SAFE_METHODS or getattr(view, "read_in_effect", False)
                or not getattr(request.auth, "read_only", False))


class DocsAccess(BasePermission):
    """The schema and API documentation: open to anyone while ``DEBUG`` is on (development),
    to authenticated users only otherwise (production)."""

    message = "the API schema and documentation need you to log in (or send an API token)"

    def has_permission(self, request, view) -> bool:
        return settings.DEBUG or bool(request.user and request.user.is_authenticated)
