"""How the OpenAPI schema describes what drf-spectacular cannot infer: bearer-token auth and
list views."""

from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiAuthenticationExtension


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """API tokens sent as ``Authorization: Bearer <secret>``."""

    target_class = "flowsite.api.authentication.BearerTokenAuthentication"
    name = "bearerToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "An API token (POST /api/v1/tokens)."}


class AutoSchema(openapi.AutoSchema):
    """Views that answer GET with a page of items say so with ``lists_on_get = True`` (their
    paths carry the parent's id, which would otherwise read as a single object)."""

    def _is_list_view(self, serializer=None) -> bool:
        if self.method == "GET" and getattr(self.view, "lists_on_get", False):
            return True
        return super()._is_list_view(serializer)
