"""How the OpenAPI schema describes what drf-spectacular cannot infer: bearer-token auth, list
views, creations and the error answers of each operation."""

import copy

from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import force_instance, is_serializer

from flowsite.api.serializers.errors import ErrorSerializer


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """API tokens sent as ``Authorization: Bearer <secret>``."""

    target_class = "flowsite.api.authentication.BearerTokenAuthentication"
    name = "bearerToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "An API token (POST /api/v1/tokens)."}


class AutoSchema(openapi.AutoSchema):
    """Views that answer GET with a page of items say so with ``lists_on_get = True`` (their
    paths carry the parent's id, which would otherwise read as a single object); POST to them
    creates (201). Views whose changes name a revision say so with ``checks_revisions = True``
    (a stale one is a 409), views whose PUT changes only the fields it names with
    ``partial_updates = True``. Every operation documents its error answers, and those a view
    names in ``extra_error_statuses`` (409 for a state conflict, 503 when the cluster is away)."""

    def _is_list_view(self, serializer=None) -> bool:
        if self.method == "GET" and getattr(self.view, "lists_on_get", False):
            return True
        return super()._is_list_view(serializer)

    def _is_create_operation(self) -> bool:
        if self.method == "POST" and getattr(self.view, "lists_on_get", False):
            return True
        return super()._is_create_operation()

    def _get_request_for_media_type(self, serializer, direction="request"):
        if self.method == "PUT" and getattr(self.view, "partial_updates", False) and is_serializer(serializer):
            serializer = copy.copy(force_instance(serializer))
            serializer.partial = True
        return super()._get_request_for_media_type(serializer, direction)

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for status in self._error_statuses():
            responses.setdefault(str(status), self._get_response_for_code(ErrorSerializer, str(status),
                                                                          direction=direction))
        return responses

    def _error_statuses(self) -> list[int]:
        # 400: invalid input (or a Content-Length that is no number); 429: locked out after failed
        # authentications from the address (or, creating tokens, throttled)
        statuses = [400, 401, 403, 429]
        if "{" in self.path:
            statuses.append(404)
        if self.method != "GET" and getattr(self.view, "checks_revisions", False):
            statuses.append(409)
        if self.method in ("PUT", "PATCH", "POST"):
            statuses += [413, 415]
        if self.method == "DELETE":
            statuses += list(getattr(self.view, "delete_error_statuses", ()))
        extra = getattr(self.view, "extra_error_statuses", ())
        if self.method == "GET":
            extra = tuple(code for code in extra if code != 409)
        return sorted(set(statuses) | set(extra))
