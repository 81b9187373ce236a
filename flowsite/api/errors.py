"""One shape for every error the API answers:

    {"status": 400, "code": "invalid", "message": "...",
     "problems": [{"path": "$.properties['File Size']", "message": "..."}]}

``problems`` lists each thing wrong with the request, with the JSON path (in the request body,
or in the flow definition for imports) where it is; a revision conflict adds
``currentRevision``.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, JsonResponse
from django.views.defaults import page_not_found
from django.views.defaults import server_error as site_server_error
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from engine.flow.loader import FlowDefinitionError, json_path
from flowsite.flows.actions import RunningProcessors
from flowsite.flows.revisions import StaleRevisionError


class Conflict(exceptions.APIException):
    """409: the request is valid but the component is not in a state that allows it."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"

    def __init__(self, message: str, problems: list[dict] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


def error_body(status_code: int, code: str, message: str, problems: list[dict] | None = None,
               **extra: Any) -> dict[str, Any]:
    """The body of an error answer."""
    return {"status": status_code, "code": code, "message": message, "problems": problems or [], **extra}


def _flatten(detail: Any, path: str = "$") -> list[dict]:
    """DRF's nested validation details as a flat list of {path, message}."""
    if isinstance(detail, dict):
        problems = []
        for key, value in detail.items():
            if key == "non_field_errors":
                problems += _flatten(value, path)
            else:
                problems += _flatten(value, json_path(path, int(key) if isinstance(key, int) else str(key)))
        return problems
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return [{"path": path, "message": str(item)} for item in detail]
        problems = []
        for index, item in enumerate(detail):
            if item:
                problems += _flatten(item, json_path(path, index))
        return problems
    return [{"path": path, "message": str(detail)}]


def _summary(problems: list[dict]) -> str:
    if len(problems) == 1:
        problem = problems[0]
        return problem["message"] if problem["path"] == "$" else f"{problem['path']}: {problem['message']}"
    return f"the request has {len(problems)} problems"


def exception_handler(error: Exception, context: dict) -> Response | None:
    """Turns every error into the shape the module docstring gives."""
    if isinstance(error, StaleRevisionError):
        return Response(error_body(409, "stale_revision", str(error), currentRevision=error.current.as_dict()),
                        status=409)
    if isinstance(error, RunningProcessors):
        return Response(error_body(409, "conflict", str(error)), status=409)
    if isinstance(error, FlowDefinitionError):
        problems = [{"path": p.path, "message": p.message} for p in error.problems]
        return Response(error_body(400, "invalid_flow_definition",
                                   f"the flow definition has {len(problems)} problem(s)", problems), status=400)
    if isinstance(error, Http404):
        error = exceptions.NotFound()
    elif isinstance(error, DjangoPermissionDenied):
        error = exceptions.PermissionDenied()
    response = drf_exception_handler(error, context)
    if response is None:
        return None
    if isinstance(error, exceptions.ValidationError):
        problems = _flatten(error.detail)
        response.data = error_body(response.status_code, "invalid", _summary(problems), problems)
        return response
    code = error.get_codes() if isinstance(error, exceptions.APIException) else "error"
    if not isinstance(code, str):
        code = "error"
    message = str(error.detail) if isinstance(error, exceptions.APIException) else str(error)
    problems = [{"path": "$", "message": message}] if isinstance(error, exceptions.ParseError) else None
    response.data = error_body(response.status_code, code, message, getattr(error, "problems", problems))
    return response


def not_found(request, exception=None):
    """The answer to a path no route matches: the error shape under /api/, the site's page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse(error_body(404, "not_found", f"nothing at {request.path}"), status=404)
    return page_not_found(request, exception)


def server_error(request):
    """The answer to an unexpected failure: the error shape under /api/, the site's page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse(error_body(500, "server_error", "the server failed to answer; the failure is logged"),
                            status=500)
    return site_server_error(request)
