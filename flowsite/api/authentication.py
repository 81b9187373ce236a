"""``Authorization: Bearer <token>`` authentication with API tokens. Failed attempts count
toward the login lockout (django-axes) under the user name ``(api token)``, per client address:
a client that keeps sending wrong tokens is locked out (429) like one guessing passwords."""

from __future__ import annotations

from datetime import timedelta

from axes.handlers.proxy import AxesProxyHandler
from django.conf import settings
from django.contrib.auth.signals import user_login_failed
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


def active_token(secret: str) -> ApiToken:
    """The active API token ``secret`` belongs to, its user active, with its last use recorded
    (at most once a minute); raises TokenRefused saying why not. The API and the live WebSocket
    endpoint (``flowsite.live.auth``) both authenticate programs with it."""
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
        if not AxesProxyHandler.is_allowed(request._request, TOKEN_CREDENTIALS):
            raise LockedOut(lockout_message(), settings.AXES_COOLOFF_TIME.total_seconds())
        try:
            return self._check(request, header)
        except exceptions.AuthenticationFailed:
            user_login_failed.send(sender=__name__, credentials=dict(TOKEN_CREDENTIALS), request=request._request)
            raise

    def _check(self, request, header):
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("the Authorization header must read 'Bearer <token>'")
        try:
            secret = header[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("the token is not valid text") from None
        try:
            token = active_token(secret)
        except TokenRefused as refused:
            raise exceptions.AuthenticationFailed(str(refused)) from None
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword
