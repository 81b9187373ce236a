"""Fixtures every test package can use."""

from __future__ import annotations

import shutil

import pytest

from tests.servers import RedisServer


@pytest.fixture
def redis_server(tmp_path):
    """A private redis-server on a free port, data in ``tmp_path``; stopped after the test."""
    if shutil.which("redis-server") is None:
        pytest.fail("the redis-server binary is not installed (scripts/test installs it: apt-get install redis-server)")
    server = RedisServer(tmp_path / "redis")
    server.start()
    yield server
    server.stop()
