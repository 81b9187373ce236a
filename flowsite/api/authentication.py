"""``Authorization: Bearer <token>`` authentication with API tokens. Failed attempts count
toward the login lockout (django-axes) under the user name ``(api token)``, per client address:
a client that keeps sending wrong tokens is locked out (429) like one guessing passwords."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from axes.handlers.proxy import AxesProxyHandler
from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.http import HttpRequest
from django.utils import timezone
from rest_framework import authentication, exceptions, status

from flowsite.api.models import ApiToken
from flowsite.lockout import lockout_message

#: How often a token's ``last_used_at`` is written (not on every request).
_LAST_USED_RESOLUTION = timedelta(minutes=1)
#: The user name token failures are counted under (no user has a name with parentheses and spaces).
TOKEN_CREDENTIALS = {"username": "(api token)"}


class TokenRefused(Exception):
    """A secret that authenticates nobody; the message says why (unknown, expired, revoked, inactive user)."""


class TokenLockedOut(TokenRefused):
    """Too many failed authentications from this address: not even a right token is looked at."""


def active_token(secret: str) -> ApiToken:
    """The active API token ``secret`` belongs to, its user active, with its last use recorded
    (at most once a minute); raises TokenRefused saying why not. The API and the live WebSocket
    endpoint (``flowsite.live.auth``) both authenticate programs with it, within ``counted``."""
    token = ApiToken.find(secret)
    if token is None:
        raise TokenRefused("unknown API token")
    if token.state != "active":
        raise TokenRefused(f"the API token is {token.state}")
    if not token.user.is_active:
        raise TokenRefused("the token's user is inactive")
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > _LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


@contextmanager
def counted(request: HttpRequest) -> Iterator[None]:
    """A token authentication attempt by ``request``'s client: TokenLockedOut at once when the
    address is locked out; a TokenRefused raised inside counts as a failed login."""
    if not AxesProxyHandler.is_allowed(request, TOKEN_CREDENTIALS):
        raise TokenLockedOut(lockout_message())
    try:
        yield
    except TokenRefused:
        user_login_failed.send(sender=__name__, credentials=dict(TOKEN_CREDENTIALS), request=request)
        raise


class LockedOut(exceptions.APIException):
    """429: too many failed authentications from this address."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "locked_out"

    def __init__(self, message: str, wait: float) -> None:
        super().__init__(message)
        self.wait = wait  # DRF sends it as Retry-After


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """Authenticates a request carrying an API token; a wrong, expired or revoked token is a 401
    that says which (and counts as a failed login), a request without one is left to the other
    authenticators."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        try:
            with counted(request._request):
                token = active_token(_secret(header))
        except TokenLockedOut as locked:
            raise LockedOut(str(locked), settings.AXES_COOLOFF_TIME.total_seconds()) from None
        except TokenRefused as refused:
            raise exceptions.AuthenticationFailed(str(refused)) from None
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword


def _secret(header: list[bytes]) -> str:
    """The secret of a split ``Bearer <secret>`` header; TokenRefused when it is malformed."""
    if len(header) != 2:
        raise TokenRefused("the Authorization header must read 'Bearer <token>'")
    try:
        return header[1].decode()
    except UnicodeDecodeError:
        raise TokenRefused("the token is not valid text") from None
