"""A bound on request bodies: a request announcing more than ``MAX_REQUEST_BYTES`` is answered
413 before anything reads it."""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse


class RequestSizeLimitMiddleware:
    """Refuses oversized request bodies (by Content-Length) with 413 and a JSON error body."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        length = request.META.get("CONTENT_LENGTH")
        try:
            size = int(length) if length else 0
        except ValueError:
            return JsonResponse({"status": 400, "code": "bad_request", "problems": [],
                                 "message": f"Content-Length {length!r} is not a number"}, status=400)
        if size > settings.MAX_REQUEST_BYTES:
            return JsonResponse({"status": 413, "code": "request_too_large", "problems": [],
                                 "message": f"the request body has {size} bytes; at most "
                                            f"{settings.MAX_REQUEST_BYTES} are accepted"}, status=413)
        return self.get_response(request)
