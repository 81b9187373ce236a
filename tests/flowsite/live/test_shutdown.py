"""daphne serving the project stops on SIGTERM at any moment: with page, API and static-file
requests and live sockets in flight (every middleware runs in Django's async mode, so no request
is left in a thread waiting for the stopped event loop), and static files are served in that
mode."""

from __future__ import annotations

import http.client
import random
import signal
import subprocess
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.flowsite.live.conftest import receive, web_process

pytestmark = pytest.mark.django_db(transaction=True)

CANVAS_JS = Path(__file__).resolve().parents[3] / "static" / "portal" / "canvas.js"


def _get(port: int, path: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _requests_until(stop: threading.Event, port: int, paths: list[str]) -> None:
    while not stop.is_set():
        for path in paths:
            try:
                _get(port, path)
            except OSError:  # refused or cut once daphne stops
                pass


def test_sigterm_stops_daphne_promptly_with_requests_and_sockets_in_flight(redis_url, tenant_a, admin_a):
    rng = random.Random(7)
    paths = [f"/api/v1/process-groups/{tenant_a.root.pk}", "/static/portal/canvas.js", "/login/"]
    for round_ in range(4):
        with web_process(redis_url) as web, ExitStack() as open_sockets:
            sockets = [open_sockets.enter_context(web.socket(tenant_a.root.pk, user=admin_a)) for _ in range(2)]
            for socket in sockets:
                assert receive(socket)["type"] == "hello"
            stop = threading.Event()
            clients = [threading.Thread(target=_requests_until, args=(stop, web.port, paths), daemon=True)
                       for _ in range(2)]
            for client in clients:
                client.start()
            time.sleep(rng.uniform(0.2, 1.5))
            web.server.process.send_signal(signal.SIGTERM)
            try:
                web.server.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pytest.fail(f"round {round_}: daphne still runs 15 s after SIGTERM (its threads' stacks follow "
                            "when the fixture aborts it)")
            finally:
                stop.set()
                for client in clients:
                    client.join(timeout=15)


def test_static_files_are_served_in_async_mode(redis_url):
    with web_process(redis_url) as web:
        status, body = _get(web.port, "/static/portal/canvas.js")
        assert (status, body) == (200, CANVAS_JS.read_bytes())
        assert _get(web.port, "/static/portal/no-such-file.js")[0] == 404
