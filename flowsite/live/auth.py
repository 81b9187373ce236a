"""Who a WebSocket is: a browser by its Django session, a program by ``Authorization: Bearer
<API token>`` (checked as the REST API checks it, ``flowsite.api.authentication.active_token``).

``live_auth(inner)`` wraps the routes: a browser must send an ``Origin`` of an allowed host
(Channels' ``AllowedHostsOriginValidator``; refused before the handshake completes, HTTP 403); a
request carrying a bearer token may omit ``Origin`` (a browser cannot set that header on a
WebSocket, and one that sends an ``Origin`` is held to it). A token that authenticates nobody
leaves the socket anonymous with ``scope["auth_error"]`` saying why; the consumer refuses it.
"""

from __future__ import annotations

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from channels.security.websocket import AllowedHostsOriginValidator
from django.contrib.auth.models import AnonymousUser

from flowsite.api.authentication import TokenRefused, active_token

__all__ = ["live_auth"]


def _header(scope, name: bytes) -> bytes | None:
    return next((value for key, value in scope.get("headers", ()) if key.lower() == name), None)


def _bearer(scope) -> str | None:
    """The secret of an ``Authorization: Bearer`` header, '' when the header is malformed, None without one."""
    header = _header(scope, b"authorization")
    if header is None:
        return None
    parts = header.split()
    if not parts or parts[0].lower() != b"bearer":
        return None
    try:
        return parts[1].decode() if len(parts) == 2 else ""
    except UnicodeDecodeError:
        return ""


@database_sync_to_async
def _token_of(secret: str):
    """(token, None) or (None, why it is refused)."""
    try:
        return active_token(secret), None
    except TokenRefused as refused:
        return None, str(refused)


class TokenAuthMiddleware(BaseMiddleware):
    """A bearer token, when sent, decides the user (over any session cookie)."""

    async def __call__(self, scope, receive, send):
        secret = _bearer(scope)
        if secret is not None:
            token, problem = await _token_of(secret) if secret else (None, "the Authorization header must read "
                                                                          "'Bearer <token>'")
            scope = {**scope, "user": token.user if token else AnonymousUser(), "token": token,
                     "auth_error": problem}
        return await super().__call__(scope, receive, send)


class OriginCheck:
    """Channels' allowed-hosts origin check, except for a program with a bearer token and no Origin."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.browser = AllowedHostsOriginValidator(inner)

    async def __call__(self, scope, receive, send):
        if _header(scope, b"origin") is None and _bearer(scope) is not None:
            return await self.inner(scope, receive, send)
        return await self.browser(scope, receive, send)


def live_auth(inner):
    """``inner`` behind the origin check, the session and the bearer token (see the module docstring)."""
    return OriginCheck(AuthMiddlewareStack(TokenAuthMiddleware(inner)))
