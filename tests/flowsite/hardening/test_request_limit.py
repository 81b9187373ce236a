"""The request-size limit counts the body as it streams in: a chunked body (no Content-Length)
past ``FLOWSITE_MAX_REQUEST_BYTES`` is answered 413 by a real daphne serving the project's ASGI
application, as a body that announces its length is."""

from __future__ import annotations

import http.client
import json
import os

import pytest

from tests.daphne import daphne

LIMIT = 4096


@pytest.fixture(scope="module")
def web():
    """daphne serving flowsite.asgi on a free port, with a 4 KiB request limit."""
    with daphne({**os.environ, "FLOWSITE_MAX_REQUEST_BYTES": str(LIMIT)}) as server:
        yield server.port


def _post(port: int, chunks, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("POST", "/api/v1/tenants", body=chunks, encode_chunked=headers is None,
                       headers={"Content-Type": "application/json", **(headers or {})})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, body


def test_a_chunked_body_past_the_limit_is_413(web):
    status, body = _post(web, (b" " * 1024 for _ in range(64)))  # 64 KiB in chunks, no Content-Length
    assert status == 413, body
    answer = json.loads(body)
    assert answer["code"] == "request_too_large" and str(LIMIT) in answer["message"]


def test_a_chunked_body_under_the_limit_reaches_the_application(web):
    status, body = _post(web, (b" " for _ in range(10)))
    assert status == 401, body  # the API answers: nobody is logged in


def test_an_announced_length_past_the_limit_is_413_before_the_body_is_read(web):
    status, body = _post(web, b"x" * (LIMIT + 1), headers={"Content-Length": str(LIMIT + 1)})
    assert status == 413 and json.loads(body)["code"] == "request_too_large"
