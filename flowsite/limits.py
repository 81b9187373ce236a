"""A bound on request bodies, ``MAX_REQUEST_BYTES``.

``RequestBodyLimit`` wraps the ASGI application (what daphne serves): it counts the bytes of the
body as they stream in, chunked or not, whatever the headers announce, and answers 413 once the
count passes the limit (a ``Content-Length`` above it is refused before anything is read). The
Django middleware ``RequestSizeLimitMiddleware`` refuses an announced oversized body wherever
Django runs without the wrapper (tests, WSGI)."""

from __future__ import annotations

import json

from django.conf import settings
from django.http import JsonResponse
from django.utils.deprecation import MiddlewareMixin


def _too_large(size: int | None) -> dict:
    counted = f"has {size} bytes" if size is not None else "is longer"
    return {"status": 413, "code": "request_too_large", "problems": [],
            "message": f"the request body {counted}; at most {settings.MAX_REQUEST_BYTES} are accepted"}


class RequestBodyLimit:
    """ASGI middleware: 413 for an HTTP request whose body passes ``MAX_REQUEST_BYTES``."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = settings.MAX_REQUEST_BYTES
        announced = dict(scope.get("headers") or ()).get(b"content-length")
        if announced is not None and announced.strip().isdigit() and int(announced) > limit:
            return await self._refuse(send, int(announced))
        state = {"count": 0, "over": False, "started": False}

        async def counted_receive():
            if state["over"]:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                state["count"] += len(message.get("body", b""))
                if state["count"] > limit:
                    state["over"] = True  # the application sees the client go: it reads no further
                    return {"type": "http.disconnect"}
            return message

        async def watched_send(message):
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        await self.app(scope, counted_receive, watched_send)
        if state["over"] and not state["started"]:
            await self._refuse(send, None)

    @staticmethod
    async def _refuse(send, size: int | None) -> None:
        body = json.dumps(_too_large(size)).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


class RequestSizeLimitMiddleware(MiddlewareMixin):
    """Refuses oversized request bodies (by Content-Length) with 413 and a JSON error body (a
    ``MiddlewareMixin``, so it runs in Django's async mode too: see ``flowsite.static_files``)."""

    def process_request(self, request):
        length = request.META.get("CONTENT_LENGTH")
        try:
            size = int(length) if length else 0
        except ValueError:
            return JsonResponse({"status": 400, "code": "bad_request", "problems": [],
                                 "message": f"Content-Length {length!r} is not a number"}, status=400)
        if size > settings.MAX_REQUEST_BYTES:
            return JsonResponse(_too_large(size), status=413)
        return None
