"""The cluster's nodes as the API and the portal show them."""

from __future__ import annotations

import time
from typing import Any

from engine.cluster.records import ClusterView, NodeView
from flowsite.cluster import redis as cluster_redis

__all__ = ["connected", "node_entry", "nodes"]


def node_entry(view: NodeView, now: float | None = None) -> dict[str, Any]:
    """One node as plain data, with ``heartbeat_age`` (seconds since its last heartbeat, or None)
    and ``sparkUiUrl`` (its Spark UI's address once its Spark started, else None)."""
    now = time.time() if now is None else now
    return {**view.as_dict(), "heartbeat_age": max(0.0, now - view.heartbeat.sent_at) if view.heartbeat else None,
            "sparkUiUrl": (view.heartbeat.spark_ui_url or None) if view.heartbeat else None}


def nodes() -> dict[str, NodeView]:
    """Every node of the cluster by id (raises redis.RedisError)."""
    return ClusterView(cluster_redis.client(), cluster_redis.keys()).nodes


def connected() -> list[str]:
    """The ids of the nodes connected to the cluster now, sorted (raises redis.RedisError)."""
    return sorted(ClusterView(cluster_redis.client(), cluster_redis.keys()).connected())
