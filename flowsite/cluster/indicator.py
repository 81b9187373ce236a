"""Whether the cluster runs a tenant's latest deployment, for the portal's indicator.

Every deployment publishes a cluster flow holding every tenant's latest deployment, so the
cluster is up to date for a tenant when the flow it runs (the ``flow`` hash's fingerprint, and the
``flow_fingerprint`` of each connected node's heartbeat) holds the tenant's latest deployment —
whatever other tenants deployed since, which the tenant does not learn of.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import redis

from engine.cluster.records import ClusterView
from flowsite.cluster import redis as cluster_redis
from flowsite.cluster.models import Deployment
from flowsite.cluster.visibility import running_deployment

__all__ = ["Indicator", "indicator"]


@dataclass(frozen=True)
class Indicator:
    """``state``: ``current``, ``stale``, ``unreachable`` or ``undeployed``; ``message`` says why."""

    state: str
    message: str
    lagging_nodes: list[str] = field(default_factory=list)

    @property
    def alert(self) -> bool:
        return self.state in ("stale", "unreachable")


def indicator(tenant) -> Indicator:
    """How the cluster stands for ``tenant``'s latest deployment."""
    latest = Deployment.objects.filter(tenant=tenant).first()
    try:
        client, keys = cluster_redis.client(), cluster_redis.keys()
        running = client.hget(keys.flow, "fingerprint")
        view = ClusterView(client, keys)
    except redis.RedisError:
        return Indicator("unreachable", f"cluster unreachable: Redis at {cluster_redis.redis_address()} does not "
                                        "answer")
    if latest is None:
        return Indicator("undeployed", "this tenant's flow has not been deployed to the cluster")
    running = running.decode() if isinstance(running, bytes) else (running or "")

    def holds_latest(fingerprint: str) -> bool:
        found = running_deployment(tenant, fingerprint)
        return found is not None and found.pk == latest.pk

    lagging = [node for node in view.connected()
               if view.nodes[node].heartbeat is None or not holds_latest(view.nodes[node].heartbeat.flow_fingerprint)]
    if not holds_latest(running):
        return Indicator("stale", f"the cluster runs another flow than the latest deployment "
                                  f"({latest.label} of {latest.created_at:%Y-%m-%d %H:%M} UTC)", lagging)
    if lagging:
        return Indicator("stale", f"node{'s' if len(lagging) > 1 else ''} {', '.join(lagging)} "
                                  f"{'do' if len(lagging) > 1 else 'does'} not run the latest deployment yet", lagging)
    return Indicator("current", f"the cluster runs the latest deployment ({latest.label})")
