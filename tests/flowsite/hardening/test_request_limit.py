"""The request-size limit counts the body as it streams in: a chunked body (no Content-Length)
past ``FLOWSITE_MAX_REQUEST_BYTES`` is answered 413 by a real daphne serving the project's ASGI
application, as a body that announces its length is."""

from __future__ import annotations

import http.client
import json
import os
import socket
import sys
from pathlib import Path

import pytest

from tests.processes import OutputProcess, wait_until
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[3]
LIMIT = 4096


@pytest.fixture(scope="module")
def daphne():
    """daphne serving flowsite.asgi on a free port, with a 4 KiB request limit."""
    port = free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "flowsite.settings", "FLOWSITE_MAX_REQUEST_BYTES": str(LIMIT)}
    server = OutputProcess([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                            "flowsite.asgi:application"], cwd=ROOT, env=env)

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    wait_until(listening, what="daphne listening")
    yield port
    server.terminate()


def _post(port: int, chunks, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("POST", "/api/v1/tenants", body=chunks, encode_chunked=headers is None,
                       headers={"Content-Type": "application/json", **(headers or {})})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, body


def test_a_chunked_body_past_the_limit_is_413(daphne):
    status, body = _post(daphne, (b" " * 1024 for _ in range(64)))  # 64 KiB in chunks, no Content-Length
    assert status == 413, body
    answer = json.loads(body)
    assert answer["code"] == "request_too_large" and str(LIMIT) in answer["message"]


def test_a_chunked_body_under_the_limit_reaches_the_application(daphne):
    status, body = _post(daphne, (b" " for _ in range(10)))
    assert status == 401, body  # the API answers: nobody is logged in


def test_an_announced_length_past_the_limit_is_413_before_the_body_is_read(daphne):
    status, body = _post(daphne, b"x" * (LIMIT + 1), headers={"Content-Length": str(LIMIT + 1)})
    assert status == 413 and json.loads(body)["code"] == "request_too_large"
