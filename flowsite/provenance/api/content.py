"""FlowFile content streamed from a node to the client (an event's input or output, a queued
FlowFile's): chunk by chunk, never held whole by the web process.

``Content-Type`` comes from the ``mime.type`` attribute, ``Content-Disposition`` names the
``filename`` (always an attachment: content is never rendered by the browser on the API's
origin), ``Accept-Ranges: bytes``; one byte range (``Range: bytes=…``) is answered 206 with
``Content-Range``, a range that starts past the end 416. Content larger than
``FLOWSITE_CONTENT_MAX_BYTES`` is refused whole (413, saying to ask for a range). The first chunk
is read before answering, so content that is gone is a 404 rather than a broken download.
Under ASGI the chunks are read off the event loop (an async iterator, which Django streams as it
comes; a plain iterator it would first read whole).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.http import StreamingHttpResponse
from django.utils.http import content_disposition_header
from rest_framework import exceptions, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from flowsite.api.errors import error_body

__all__ = ["CHUNK_BYTES", "ContentTooLarge", "AnyMediaRenderer", "content_response", "downloader", "streamed"]

#: The most bytes asked of a node at once (the node commands' limit).
CHUNK_BYTES = 1 << 20
_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.IGNORECASE)


class ContentTooLarge(exceptions.APIException):
    """413: the content is larger than what is served whole."""

    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "content_too_large"


class AnyMediaRenderer(JSONRenderer):
    """Lets a client that asks for any media type (``Accept: application/octet-stream``) reach a
    content endpoint; the errors it may get are JSON."""

    media_type = "*/*"
    format = "bin"


def streamed(request, chunks: Iterator[bytes]):
    """``chunks`` as the server streams them: read off the event loop under ASGI."""
    if not isinstance(getattr(request, "_request", request), ASGIRequest):
        return chunks
    end = object()

    async def pull():
        while True:
            chunk = await sync_to_async(next, thread_sensitive=False)(chunks, end)
            if chunk is end:
                return
            yield chunk
    return pull()


def _range(header: str | None, size: int) -> tuple[int, int] | None:
    """The first and last byte of the one range ``header`` asks for; None for the whole content
    (no header, one that is not a single byte range: RFC 9110 lets a server ignore those);
    ValueError when the range cannot be satisfied."""
    match = _RANGE.match(header or "")
    if match is None:
        return None
    first, last = match.groups()
    if not first and not last:
        return None
    if not first:
        suffix = int(last)
        if suffix == 0 or size == 0:
            raise ValueError("empty range")
        return max(size - suffix, 0), size - 1
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or (last and int(last) < start):
        raise ValueError("range outside the content")
    return start, end


def downloader(request) -> dict[str, str]:
    """What a node records of who downloads content (a DOWNLOAD event): the requester's user name
    and the address asked."""
    return {"requester": request.user.get_username(), "uri": request.build_absolute_uri()}


def content_response(request, *, size: int, read: Callable[[int, int, bool], bytes], filename: str | None,
                     mime_type: str | None):
    """The answer streaming ``size`` bytes of content, ``read(offset, length, first)`` giving at
    most ``length`` bytes from ``offset``; ``first`` for the first read of the answer (the node
    records the download then: see ``engine.runtime.downloads``)."""
    try:
        wanted = _range(request.headers.get("Range"), size)
    except ValueError:
        return Response(error_body(416, "range_not_satisfiable", f"the content has {size} bytes: the range asked for "
                                                                  "is not within it"),
                        status=416, headers={"Content-Range": f"bytes */{size}"})
    start, end = wanted if wanted is not None else (0, size - 1)
    if wanted is None and size > settings.FLOWSITE_CONTENT_MAX_BYTES:
        raise ContentTooLarge(f"the content has {size} bytes, more than is served whole "
                              f"({settings.FLOWSITE_CONTENT_MAX_BYTES}, FLOWSITE_CONTENT_MAX_BYTES): ask for part of "
                              f"it with a Range header (Range: bytes=0-{CHUNK_BYTES - 1})")
    first = read(start, min(CHUNK_BYTES, end - start + 1), True) if size else b""

    def chunks() -> Iterator[bytes]:
        data, offset = first, start
        while data:
            yield data
            offset += len(data)
            if offset > end:
                return
            data = read(offset, min(CHUNK_BYTES, end - offset + 1), False)
        if offset <= end:
            raise OSError(f"the content ended at byte {offset} of {size}")

    response = StreamingHttpResponse(streamed(request, chunks()), content_type=mime_type or "application/octet-stream",
                                     status=206 if wanted is not None else 200)
    response["Content-Length"] = str(end - start + 1 if size else 0)
    response["Accept-Ranges"] = "bytes"
    response["Cache-Control"] = "no-cache, no-store"
    response["Content-Disposition"] = content_disposition_header(True, filename or "content")
    if wanted is not None:
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
    return response
