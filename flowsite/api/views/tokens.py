"""API tokens of the requesting user: create (the secret is shown once), list, revoke."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from flowsite.api.models import ApiToken
from flowsite.api.serializers.tokens import NewTokenSerializer, TokenSerializer


class TokenList(GenericAPIView):
    """The user's tokens, or create one."""

    filter_backends = ()

    lists_on_get = True

    serializer_class = TokenSerializer

    def get(self, request):
        page = self.paginate_queryset(ApiToken.objects.filter(user=request.user))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @extend_schema(responses={201: NewTokenSerializer})
    def post(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token, secret = ApiToken.issue(request.user, serializer.validated_data["name"],
                                       serializer.validated_data.get("expires_at"))
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
