"""Fixtures of the cluster tests: a Redis client to a private redis-server."""

from __future__ import annotations

import pytest
import redis

from engine.cluster.keys import ClusterKeys


@pytest.fixture
def client(redis_server):
    connection = redis.Redis(host="127.0.0.1", port=redis_server.port)
    yield connection
    connection.close()


@pytest.fixture
def keys() -> ClusterKeys:
    return ClusterKeys("test")
