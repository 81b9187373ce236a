"""PostgreSQL for the database tests: a scratch database on the suite's server (scripts/test
exports DATABASE_URL), its JDBC URL, and a TCP relay in front of it that a test can cut to make
the database go away and come back."""

from __future__ import annotations

import os
import selectors
import socket
import threading
import uuid
from dataclasses import dataclass
from urllib.parse import urlsplit

import psycopg
import pytest

from tests.servers import free_port


@dataclass
class ScratchDatabase:
    """A database of the test's own: ``dsn`` for psycopg, ``host``/``port`` of its server."""

    name: str
    dsn: str
    host: str
    port: int
    user: str
    password: str

    def jdbc_url(self, host: str | None = None, port: int | None = None) -> str:
        return f"jdbc:postgresql://{host or self.host}:{port or self.port}/{self.name}"

    def pool_properties(self, host: str | None = None, port: int | None = None, **extra: str) -> dict[str, str]:
        """Properties of a DBCPConnectionPool reaching this database (through ``host:port`` if given)."""
        return {"Database Connection URL": self.jdbc_url(host, port), "Database User": self.user,
                "Password": self.password, **extra}

    def execute(self, sql: str, params=None) -> list[tuple]:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            cursor = conn.execute(sql, params)
            return cursor.fetchall() if cursor.description else []


def scratch_database(prefix: str):
    """Create a database named after ``prefix``; yields it and drops it afterwards."""
    url = os.environ.get("DATABASE_URL")
    if not url:
        pytest.fail("DATABASE_URL is not set: run the tests with scripts/test, which starts PostgreSQL")
    parts = urlsplit(url)
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    host = parts.hostname or "localhost"
    if host.startswith("/"):
        pytest.fail("DATABASE_URL names a Unix socket; the database tests need a TCP address")
    database = ScratchDatabase(name, parts._replace(path=f"/{name}").geturl(), host, parts.port or 5432,
                               parts.username or "", parts.password or "")
    try:
        yield database
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


class TcpRelay:
    """Relays connections from a local port to ``host:port``. ``cut()`` drops every relayed
    connection and stops listening (connections are refused); ``restore()`` listens again."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = free_port()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self._listener = listener
        self._stop.clear()
        self._thread = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        self._thread.start()

    def _accept(self, listener: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        selector = selectors.DefaultSelector()
        selector.register(a, selectors.EVENT_READ, b)
        selector.register(b, selectors.EVENT_READ, a)
        try:
            while True:
                for key, _ in selector.select():
                    data = key.fileobj.recv(65536)
                    if not data:
                        return
                    key.data.sendall(data)
        except OSError:
            return
        finally:
            selector.close()
            for sock in (a, b):
                sock.close()

    def cut(self) -> None:
        self._stop.set()
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._listener.close()
            self._listener = None
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self) -> None:
        self.cut()
