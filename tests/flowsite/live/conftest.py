"""Fixtures of the live endpoint's tests: a real daphne serving ``flowsite.asgi`` over the test
database, with a private redis-server as the cluster's Redis and the channel layer (the same one
the tests' in-process nodes answer on), and real WebSocket clients (websockets' sync client)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.conf import settings as django_settings
from django.test import Client
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.flowsite.cluster.conftest import cluster, deployed  # noqa: F401  (fixtures of these tests too)
from tests.daphne import daphne
from tests.flowsite.deployment import database_url_of_tests
from tests.processes import OutputProcess

#: The origin a browser of the site sends (ALLOWED_HOSTS holds 127.0.0.1 in development).
SAME_ORIGIN = object()


class Web:
    """A daphne process serving the project, and WebSocket clients of it."""

    def __init__(self, port: int, server: OutputProcess) -> None:
        self.port = port
        self.server = server

    def socket(self, group_id, *, user=None, token: str | None = None, origin=SAME_ORIGIN) -> ClientConnection:
        """A WebSocket on ``group_id``'s endpoint: with ``user``, logged in by a session cookie;
        with ``token``, sending it as a bearer token; ``origin`` None sends no Origin."""
        headers = {}
        if user is not None:
            client = Client()
            client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
            name = django_settings.SESSION_COOKIE_NAME
            headers["Cookie"] = f"{name}={client.cookies[name].value}"
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if origin is SAME_ORIGIN:
            origin = f"http://127.0.0.1:{self.port}"
        return connect(f"ws://127.0.0.1:{self.port}/ws/process-groups/{group_id}", origin=origin,
                       additional_headers=headers, open_timeout=20)


def receive(socket: ClientConnection, timeout: float = 10) -> dict:
    """The next message, decoded."""
    return json.loads(socket.recv(timeout=timeout))


def until_closed(socket: ClientConnection, timeout: float = 10) -> tuple[list[dict], int | None, float]:
    """(the messages received until the server closed the socket, its close code, seconds it took)."""
    started, messages = time.monotonic(), []
    try:
        while True:
            messages.append(receive(socket, timeout))
    except ConnectionClosed as closed:
        return messages, closed.rcvd.code if closed.rcvd else None, time.monotonic() - started


def collect(socket: ClientConnection, seconds: float, until=None) -> list[dict]:
    """The messages received during ``seconds`` (or until ``until(messages)`` is true)."""
    deadline, messages = time.monotonic() + seconds, []
    while time.monotonic() < deadline and not (until and until(messages)):
        try:
            messages.append(receive(socket, max(deadline - time.monotonic(), 0.01)))
        except TimeoutError:
            break
    return messages


@contextmanager
def web_process(redis_url: str, port: int | None = None) -> Iterator[Web]:
    """daphne serving the project on ``port`` (a free one by default), its database the tests',
    its Redis ``redis_url``."""
    env = {**os.environ, "DATABASE_URL": database_url_of_tests(), "REDIS_URL": redis_url,
           "FLOWSITE_CLUSTER": django_settings.FLOWSITE_CLUSTER}
    with daphne(env, port) as server:
        yield Web(server.port, server.server)


@pytest.fixture
def redis_url(transactional_db, cluster, settings) -> str:  # noqa: F811  (the fixture imported above)
    """The cluster's Redis, which the tests' own channel layer uses too (to send events as the
    actions layer does)."""
    url = f"redis://127.0.0.1:{cluster.server.port}/0"
    layer = settings.CHANNEL_LAYERS["default"]
    hosts = [{**host, "address": url} for host in layer["CONFIG"]["hosts"]]
    settings.CHANNEL_LAYERS = {"default": {**layer, "CONFIG": {**layer["CONFIG"], "hosts": hosts}}}
    return url


@pytest.fixture
def web(redis_url) -> Iterator[Web]:
    """A web process."""
    with web_process(redis_url) as server:
        yield server


@pytest.fixture
def another_web(redis_url, web) -> Iterator[Web]:
    """A second web process (a replica) on the same database and Redis."""
    with web_process(redis_url) as server:
        yield server
