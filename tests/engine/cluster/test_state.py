"""Cluster-scoped state in Redis, fenced by the primary lease."""

from __future__ import annotations

import time

import pytest

from engine.cluster.lease import Lease
from engine.cluster.state import ClusterStateProvider, StaleStateWriteError
from engine.components.state import Scope
from engine.runtime.state import LocalStateProvider


def provider(tmp_path, client, keys, lease):
    state = ClusterStateProvider(LocalStateProvider(tmp_path / "local"), keys,
                                 fence=lambda: lease.value if lease.token else "")
    state.use(client)
    return state


def test_state_lives_in_redis_with_versions(tmp_path, client, keys):
    lease = Lease(client, keys, "primary", "a", ttl=5)
    assert lease.hold()
    state = provider(tmp_path, client, keys, lease)
    assert state.get("list", Scope.CLUSTER).version == -1
    assert state.set("list", {"listed": "10"}, Scope.CLUSTER)
    assert state.get("list", Scope.CLUSTER).values == {"listed": "10"}
    assert state.get("list", Scope.CLUSTER).version == 0
    assert not state.set("list", {"listed": "11"}, Scope.CLUSTER, expected_version=7)
    assert state.set("list", {"listed": "12"}, Scope.CLUSTER, expected_version=0)
    other = provider(tmp_path / "b", client, keys, Lease(client, keys, "primary", "b", ttl=5))
    assert other.get("list", Scope.CLUSTER).values == {"listed": "12"}, "another node sees the same state"
    assert LocalStateProvider(tmp_path / "local").get("list", Scope.CLUSTER).values == {"listed": "12"}, \
        "a copy is kept locally"
    state.clear("list", Scope.CLUSTER)
    assert state.get("list", Scope.CLUSTER).values == {}
    assert LocalStateProvider(tmp_path / "local").get("list", Scope.CLUSTER).values == {}


def test_a_former_primary_cannot_overwrite_its_successors_state(tmp_path, client, keys):
    old = Lease(client, keys, "primary", "a", ttl=0.2)
    assert old.hold()
    old_state = provider(tmp_path / "a", client, keys, old)
    old_state.set("list", {"listed": "1"}, Scope.CLUSTER)
    time.sleep(0.3)
    new = Lease(client, keys, "primary", "b", ttl=5)
    assert new.hold()
    provider(tmp_path / "b", client, keys, new).set("list", {"listed": "2"}, Scope.CLUSTER)
    with pytest.raises(StaleStateWriteError, match="no longer the primary"):
        old_state.set("list", {"listed": "1-late"}, Scope.CLUSTER)
    with pytest.raises(StaleStateWriteError):
        old_state.clear("list", Scope.CLUSTER)
    assert old_state.get("list", Scope.CLUSTER).values == {"listed": "2"}


def test_without_redis_the_state_stays_local(tmp_path, keys):
    state = ClusterStateProvider(LocalStateProvider(tmp_path / "local"), keys)
    state.set("list", {"listed": "3"}, Scope.CLUSTER)
    assert LocalStateProvider(tmp_path / "local").get("list", Scope.CLUSTER).values == {"listed": "3"}


def test_with_nothing_in_redis_the_local_copy_is_read_and_replaced(tmp_path, client, keys):
    local = LocalStateProvider(tmp_path / "local")
    local.set("list", {"listed": "7"}, Scope.CLUSTER)
    local.set("list", {"listed": "8"}, Scope.CLUSTER)
    lease = Lease(client, keys, "primary", "a", ttl=5)
    assert lease.hold()
    state = provider(tmp_path, client, keys, lease)
    kept = state.get("list", Scope.CLUSTER)
    assert kept.values == {"listed": "8"} and kept.version == -1, "what the node kept while standalone"
    assert state.set("list", {"listed": "9"}, Scope.CLUSTER, expected_version=kept.version)
    assert client.hget(keys.state("list"), "listed") == b"9"
