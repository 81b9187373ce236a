"""Single resources asked of one node straight from the web tier: one event, its content, a
replay, one queued FlowFile and its content (NiFi replicates these to the one node named).

The node must be a node of the cluster (else what it holds does not exist: 404) and connected
(else 503, saying so); it has ``FLOWSITE_NODE_REQUEST_TIMEOUT`` to answer (else 503).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import exceptions, status

from engine.cluster.records import NodeState
from flowsite.cluster import redis as cluster_redis
from flowsite.cluster.nodes import connected, nodes

__all__ = ["NodeFailed", "NodeUnavailable", "ask", "ask_connected"]


class NodeUnavailable(exceptions.APIException):
    """503: the node holding what was asked is not connected or did not answer in time."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "node_unavailable"


class NodeFailed(Exception):
    """The node answered the command with an error (its words in ``str()``)."""


def ask(node: str, command: str, args: dict[str, Any], missing: str) -> dict[str, Any]:
    """The result of ``command`` on ``node``: 404 saying ``missing`` when the cluster has no such
    node, 503 when it is not connected or does not answer, NodeFailed when it answers an error."""
    view = nodes().get(node)
    if view is None:
        raise exceptions.NotFound(missing)
    if view.state != NodeState.CONNECTED.value:
        raise NodeUnavailable(f"node {node} is not connected to the cluster ({view.state}): what it holds cannot be "
                              "reached now")
    timeout = float(settings.FLOWSITE_NODE_REQUEST_TIMEOUT)
    reply = cluster_redis.bus().request([node], command, args, timeout=timeout)[node]
    if reply.timed_out:
        raise NodeUnavailable(f"node {node} did not answer within {timeout:g} s")
    if not reply.ok:
        raise NodeFailed(reply.error)
    return reply.result if isinstance(reply.result, dict) else {}


def ask_connected(command: str, args: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The results of ``command`` from every connected node that answered it, by node."""
    connected_nodes = connected()
    if not connected_nodes:
        return {}
    timeout = float(settings.FLOWSITE_NODE_REQUEST_TIMEOUT)
    replies = cluster_redis.bus().request(connected_nodes, command, args, timeout=timeout)
    return {node: reply.result for node, reply in replies.items() if reply.ok and isinstance(reply.result, dict)}
