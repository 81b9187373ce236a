"""``Authorization: Bearer <token>`` authentication with API tokens."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework import authentication, exceptions

from flowsite.api.models import ApiToken

#: How often a token's ``last_used_at`` is written (not on every request).
_LAST_USED_RESOLUTION = timedelta(minutes=1)


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """Authenticates a request carrying an API token; a wrong, expired or revoked token is a 401
    that says which, a request without one is left to the other authenticators."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("the Authorization header must read 'Bearer <token>'")
        try:
            secret = header[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("the token is not valid text") from None
        token = ApiToken.find(secret)
        if token is None:
            raise exceptions.AuthenticationFailed("unknown API token")
        if token.state != "active":
            raise exceptions.AuthenticationFailed(f"the API token is {token.state}")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("the token's user is inactive")
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > _LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword
