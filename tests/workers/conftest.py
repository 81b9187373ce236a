"""Fixtures of the node tests: a cluster of real node processes on a private redis-server."""

from __future__ import annotations

import pytest
import redis

from engine.cluster.bus import CommandBus
from engine.cluster.keys import ClusterKeys
from flowsite.cluster.redis import command_signer
from tests.workers.cluster import Cluster


@pytest.fixture
def cluster_factory(tmp_path, redis_server):
    """Make clusters (each with its own name) over the test's redis-server; stops every node after."""
    made = []

    def make(name: str = "test", **settings) -> Cluster:
        cluster = Cluster(tmp_path / name, redis_server.port, name, **settings)
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        cluster.stop_all()


@pytest.fixture
def dirs(tmp_path):
    """The folders of a load-balanced test flow (``tests.workers.balance``): inbox, outbox, duplicates."""
    paths = {name: tmp_path / name for name in ("inbox", "outbox", "duplicates")}
    for path in paths.values():
        path.mkdir()
    return paths


@pytest.fixture
def bus(redis_server):
    """A command bus to the nodes of cluster ``test`` (the default name) on the test's redis-server."""
    client = redis.Redis(host="127.0.0.1", port=redis_server.port)
    yield CommandBus(client, ClusterKeys("test"), command_signer())
    client.close()
