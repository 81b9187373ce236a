"""daphne serving the project's ASGI application (``flowsite.asgi``) as its own process, on a
free port: what tests and benchmarks that need the real web server (WebSockets, streamed
request bodies) start."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.processes import OutputProcess, wait_until
from tests.servers import free_port

REPO_ROOT = Path(__file__).resolve().parents[1]


class WebProcess:
    """A daphne process and the port it listens on."""

    def __init__(self, port: int, server: OutputProcess) -> None:
        self.port = port
        self.server = server

    @property
    def pid(self) -> int:
        return self.server.process.pid

    def listening(self) -> bool:
        """Whether the port takes connections; fails loudly if daphne has exited."""
        if not self.server.alive:
            raise RuntimeError(f"daphne exited:\n{self.server.output}")
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return False
        return True


@contextmanager
def daphne(env: dict[str, str], port: int | None = None, *, echo: bool = True) -> Iterator[WebProcess]:
    """daphne with ``env`` (its whole environment) on ``port`` (a free one by default), stopped
    afterwards; with ``echo``, its output is printed then (pytest shows it when a test fails)."""
    port = port or free_port()
    # faulthandler: a daphne that does not stop is aborted, and prints its threads' stacks then.
    server = OutputProcess([sys.executable, "-X", "faulthandler", "-m", "daphne", "-b", "127.0.0.1", "-p",
                            str(port), "flowsite.asgi:application"], cwd=REPO_ROOT,
                           env={"DJANGO_SETTINGS_MODULE": "flowsite.settings", **env})
    web = WebProcess(port, server)
    try:
        wait_until(web.listening, what="daphne listening")
        yield web
    finally:
        server.terminate()
        if echo:
            print(server.output)
