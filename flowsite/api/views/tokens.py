"""API tokens of the requesting user: create (the secret is shown once), list, revoke."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle

from flowsite.api.lookup import tenants_of
from flowsite.api.models import ApiToken, narrowed
from flowsite.api.serializers.tokens import NewTokenSerializer, TokenSerializer


class TokenCreationThrottle(ScopedRateThrottle):
    """Token creation, per user, at the ``tokens`` rate of ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``;
    reading tokens is not throttled."""

    scope_attr = "throttle_scope"

    def allow_request(self, request, view):
        return request.method != "POST" or super().allow_request(request, view)


def issue_for(request, data: dict) -> tuple[dict[str, str], tuple[ApiToken, str] | None]:
    """Create a token from validated serializer ``data`` for the requesting user, no wider than
    the token the request came with: (problems by field, (token, secret) or None)."""
    tenant = None
    if data.get("tenant_id") is not None:
        tenant = tenants_of(request).filter(pk=data["tenant_id"]).first()
        if tenant is None:
            return {"tenant": "no such tenant"}, None
    parent = request.auth if isinstance(getattr(request, "auth", None), ApiToken) else None
    problems, scope = narrowed(parent, data.get("expires_at"), tenant, data.get("read_only", False))
    if problems:
        return problems, None
    return {}, ApiToken.issue(request.user, data["name"], parent=parent, **scope)


class TokenList(GenericAPIView):
    """The user's tokens, or create one (throttled: the ``tokens`` rate)."""

    filter_backends = ()
    throttle_classes = [TokenCreationThrottle]
    throttle_scope = "tokens"

    lists_on_get = True

    serializer_class = TokenSerializer

    def get(self, request):
        page = self.paginate_queryset(ApiToken.objects.filter(user=request.user))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @extend_schema(responses={201: NewTokenSerializer})
    def post(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        problems, issued = issue_for(request, serializer.validated_data)
        if problems:
            raise exceptions.ValidationError(problems)
        token, secret = issued
        token.secret = secret
        return Response(NewTokenSerializer(token).data, status=status.HTTP_201_CREATED)


class TokenDetail(GenericAPIView):
    """One of the user's tokens; DELETE revokes it (it stays listed, revoked)."""

    serializer_class = TokenSerializer

    def token(self, request, pk) -> ApiToken:
        token = ApiToken.objects.filter(pk=pk, user=request.user).first()
        if token is None:
            raise exceptions.NotFound("no such token")
        return token

    def get(self, request, pk):
        return Response(self.get_serializer(self.token(request, pk)).data)

    @extend_schema(responses={200: TokenSerializer})
    def delete(self, request, pk):
        token = self.token(request, pk)
        if token.revoked_at is None:
            token.revoked_at = timezone.now()
            token.save(update_fields=["revoked_at"])
        return Response(self.get_serializer(token).data)
