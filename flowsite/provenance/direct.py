"""Single resources asked of one node straight from the web tier: one event, its content, a
replay, one queued FlowFile and its content (NiFi replicates these to the one node named).

The node must be a node of the cluster (else what it holds does not exist: 404) and connected
(else 503, saying so); it has ``FLOWSITE_NODE_REQUEST_TIMEOUT`` to answer (else 503). What the
node answers when something is not there becomes a 404: an event that is not known there (or
not in the scope, answered alike), a FlowFile not in the queue, content no longer available —
told apart by the ``code`` of the node's answer (``engine.cluster.bus.Reply``). A node's own
words may name its files, so the answers say why in words of their own and the node's are
logged; any other error of the node is a 503.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from rest_framework import exceptions, status

from engine.cluster.bus import Reply
from engine.cluster.records import NodeState
from flowsite.cluster import redis as cluster_redis
from flowsite.cluster.nodes import connected, nodes

__all__ = ["ContentGone", "NodeUnavailable", "ask", "ask_connected"]

log = logging.getLogger(__name__)

#: Why content is no longer available, by the code of the node's answer (``engine.content.reader``,
#: ``engine.runtime.event_inspection``).
_GONE = {"content_missing": "it was aged off or deleted from the content repository",
         "content_damaged": "it is damaged in the content repository",
         "content_unreadable": "it cannot be read whole from the content repository",
         "no_content": "the FlowFile had no content then"}


class NodeUnavailable(exceptions.APIException):
    """503: the node holding what was asked is not connected, did not answer in time, or failed."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "node_unavailable"


class ContentGone(exceptions.NotFound):
    """404: the content asked for is no longer available (the message says why)."""

    default_code = "content_gone"


def _refusal(node: str, reply: Reply, missing: str) -> exceptions.APIException:
    """What the API answers for the node's failed ``reply``."""
    if reply.code == "not_found":
        return exceptions.NotFound(missing)
    if reply.code == "swapped_out":
        return exceptions.NotFound("the FlowFile is swapped out of the queue on its node: it can be looked at once the "
                                   "queue swaps it back in")
    if reply.code in _GONE:
        return ContentGone(f"content no longer available: {_GONE[reply.code]} (node {node})")
    log.warning("node %s failed a request: %s", node, reply.error)
    return NodeUnavailable(f"node {node} could not answer (its log says why)")


def ask(node: str, command: str, args: dict[str, Any], missing: str) -> dict[str, Any]:
    """The result of ``command`` on ``node`` (see the module docstring); ``missing`` is the 404's
    message when what was asked is not there."""
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
        raise _refusal(node, reply, missing)
    return reply.result if isinstance(reply.result, dict) else {}


def ask_connected(command: str, args: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The results of ``command`` from every connected node that answered it, by node."""
    connected_nodes = connected()
    if not connected_nodes:
        return {}
    timeout = float(settings.FLOWSITE_NODE_REQUEST_TIMEOUT)
    replies = cluster_redis.bus().request(connected_nodes, command, args, timeout=timeout)
    return {node: reply.result for node, reply in replies.items() if reply.ok and isinstance(reply.result, dict)}
