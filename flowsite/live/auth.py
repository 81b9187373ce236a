"""Who a WebSocket is: a browser by its Django session, a program by ``Authorization: Bearer
<API token>`` (checked as the REST API checks it, ``flowsite.api.authentication.active_token``).

``live_auth(inner)`` wraps the routes: a browser must send an ``Origin`` of an allowed host
(Channels' ``AllowedHostsOriginValidator``; refused before the handshake completes, HTTP 403); a
request carrying a bearer token may omit ``Origin`` (a browser cannot set that header on a
WebSocket, and one that sends an ``Origin`` is held to it). A token that authenticates nobody
leaves the socket anonymous with ``scope["auth_refusal"]`` (close code, why); the consumer
closes it so. Wrong tokens count toward the login lockout as they do on the REST API.
"""

from __future__ import annotations

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from channels.security.websocket import AllowedHostsOriginValidator
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest

from flowsite.api.authentication import TokenLockedOut, TokenRefused, active_token, counted

__all__ = ["LOCKED_OUT", "UNAUTHENTICATED", "live_auth"]

#: Close codes of a refused bearer token: it authenticates nobody; the address is locked out.
UNAUTHENTICATED = 4401
LOCKED_OUT = 4429


def _header(scope, name: bytes) -> bytes | None:
    return next((value for key, value in scope.get("headers", ()) if key.lower() == name), None)


def _bearer(scope) -> str | None:
    """The secret of an ``Authorization: Bearer`` header ('' when malformed: no token has it), None without one."""
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


def _http_request(scope) -> HttpRequest:
    """The socket's handshake as the HttpRequest django-axes counts failed logins by (client address)."""
    request = HttpRequest()
    request.method = "GET"
    request.path = request.path_info = scope["path"]
    request.META = {"REMOTE_ADDR": (scope.get("client") or ("",))[0],
                    "HTTP_USER_AGENT": (_header(scope, b"user-agent") or b"").decode("latin1")}
    return request


@database_sync_to_async
def _token_of(secret: str, scope):
    """(token, None), or (None, (close code, why)): 4429 while the address is locked out, else 4401."""
    try:
        with counted(_http_request(scope)):
            return active_token(secret), None
    except TokenLockedOut as locked:
        return None, (LOCKED_OUT, str(locked))
    except TokenRefused as refused:
        return None, (UNAUTHENTICATED, str(refused))


class TokenAuthMiddleware(BaseMiddleware):
    """A bearer token, when sent, decides the user (over any session cookie)."""

    async def __call__(self, scope, receive, send):
        secret = _bearer(scope)
        if secret is not None:
            token, refusal = await _token_of(secret, scope)
            scope = {**scope, "user": token.user if token else AnonymousUser(), "token": token,
                     "auth_refusal": refusal}
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
