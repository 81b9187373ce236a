"""How many FlowFiles the cluster's nodes hold in given connections, for refusing a deletion that
would lose them (NiFi refuses to delete a connection whose queue is not empty).

A connection that is in none of its tenant's latest deployment has never been on a node since:
it holds nothing and the nodes are not asked. Otherwise every connected node is asked, fresh (no
cached answer: the question decides whether data is lost); a cluster that cannot be asked, or a
node that does not answer, raises ``QueuesUnknown``."""

from __future__ import annotations

from typing import Any, Iterable

import redis

from engine.cluster.records import ClusterView
from flowsite.cluster import redis as cluster_redis
from flowsite.cluster.models import Deployment
from flowsite.cluster.status import STATUS_TIMEOUT


class QueuesUnknown(Exception):
    """The nodes could not be asked what they hold; the message says why."""


def _connection_ids(group: dict[str, Any]) -> Iterable[str]:
    for connection in group.get("connections") or ():
        yield str(connection.get("identifier"))
    for child in group.get("processGroups") or ():
        yield from _connection_ids(child)


def deployed_connections(tenant) -> set[str]:
    """The ids of the connections in ``tenant``'s latest deployment (what its nodes run)."""
    latest = Deployment.objects.filter(tenant=tenant).order_by("-created_at", "-id").only("document").first()
    if latest is None:
        return set()
    return set(_connection_ids(latest.document.get("flowContents") or {}))


def queued(tenant, connection_ids: Iterable) -> dict[str, int]:
    """FlowFiles queued over every connected node in each of ``connection_ids`` (of ``tenant``)
    that holds any; raises QueuesUnknown when that cannot be found out."""
    wanted = {str(pk) for pk in connection_ids} & deployed_connections(tenant)
    if not wanted:
        return {}
    try:
        nodes = ClusterView(cluster_redis.client(), cluster_redis.keys()).connected()
        replies = cluster_redis.bus().request(nodes, "status", {}, timeout=STATUS_TIMEOUT) if nodes else {}
    except redis.RedisError as error:
        raise QueuesUnknown(f"the cluster cannot be reached ({error.__class__.__name__})") from None
    counts: dict[str, int] = {}
    for node, reply in sorted(replies.items()):
        if not reply.ok or not isinstance(reply.result, dict):
            raise QueuesUnknown(f"node {node} did not answer ({reply.error or 'no status'})")
        for item in reply.result.get("connections") or ():
            if item.get("id") in wanted and item.get("queued_count"):
                counts[item["id"]] = counts.get(item["id"], 0) + int(item["queued_count"])
    return counts
