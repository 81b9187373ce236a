"""Control commands carried to every connected node, and their answers node by node.

A node that holds a component in its flow but does not run it (its tenant is placed on other
nodes, ``engine.cluster.placement``) answers ``"here": false``; such answers are left out, so a
command on a pinned tenant's component shows only the nodes that run it.
"""

from __future__ import annotations

from typing import Any

import redis

from engine.cluster.records import ClusterView
from flowsite.cluster import redis as cluster_redis

__all__ = ["COMMAND_TIMEOUT", "NOT_PLACED", "on_nodes", "on_nodes_if_reachable"]

#: How long the nodes may take to carry out a command, in seconds.
COMMAND_TIMEOUT = 5.0
NOT_PLACED = ("no connected node runs this component: its tenant is placed on a pool of nodes none of which is "
              "connected")


def _not_here(reply) -> bool:
    return reply.ok and isinstance(reply.result, dict) and reply.result.get("here") is False


def on_nodes(kind: str, args: dict[str, Any]) -> dict[str, Any]:
    """Send ``kind`` to every connected node and wait for their answers: ``{"reached", "message",
    "nodes"}`` with one entry per node (``node``, ``ok``, ``result``, ``error``, ``timed_out``);
    raises redis.RedisError."""
    nodes = ClusterView(cluster_redis.client(), cluster_redis.keys()).connected()
    if not nodes:
        return {"reached": False, "message": "no node is connected to the cluster", "nodes": []}
    replies = cluster_redis.bus().request(nodes, kind, args, timeout=COMMAND_TIMEOUT)
    answers = [{**reply.as_dict(), "timed_out": reply.timed_out} for _, reply in sorted(replies.items())
               if not _not_here(reply)]
    return {"reached": True, "message": "" if answers or not replies else NOT_PLACED, "nodes": answers}


def on_nodes_if_reachable(kind: str, args: dict[str, Any]) -> dict[str, Any]:
    """``on_nodes`` that does not fail when Redis is away: ``reached`` is False then, and
    ``message`` says why."""
    try:
        return on_nodes(kind, args)
    except redis.RedisError as error:
        return {"reached": False, "message": f"{cluster_redis.unreachable_message()} ({error}); "
                                             "the nodes were not told and keep their state until the next deployment "
                                             "or command",
                "nodes": []}
