"""The web process's relay of the nodes' figures to its subscribers.

One asyncio task per web process runs while any socket of this process subscribes to a process
group: every ``LIVE_INTERVAL_SECONDS`` it asks the nodes for their status once (in a thread;
``flowsite.cluster.status.ask_nodes``, answers cached for about a second whoever asks),
compares each subscribed group's figures (``group_figures``) with those it sent before and sends
only the components that changed, as a ``stats.delta`` event to the group's Channels group. Each
consumer keeps what its user may view. When the set of nodes that answer changes (the first
answer, a node joining or leaving, none answering, Redis not answering), a ``cluster.state``
event says so, once per change.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Any

import redis
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings

from flowsite.cluster.redis import unreachable_message
from flowsite.cluster.status import NO_NODE, ask_nodes, group_figures
from flowsite.flows.publish import group_name

__all__ = ["relay"]

log = logging.getLogger(__name__)


@database_sync_to_async
def _ask(group_ids: list[str]) -> tuple[dict[str, Any], dict[str, dict[str, dict[str, Any]]]]:
    """(the cluster's state, each group's figures); the nodes asked once. Redis not answering is a
    state with no node and figures of no group."""
    try:
        answers = ask_nodes()
        figures = {group_id: group_figures(group_id, answers) for group_id in group_ids}
    except redis.RedisError:  # the same message each time: the state is sent once, not every second
        return {"reachable": False, "nodes": [], "message": unreachable_message()}, {}
    nodes = sorted(node for node, reply in answers.replies.items() if reply.ok)
    message = f"{len(nodes)} of {len(answers.replies)} connected nodes answer" if answers.replies else NO_NODE
    return {"reachable": bool(nodes), "nodes": nodes, "message": message}, figures


class Relay:
    """Subscriber counts per group, what was sent last, and the task that sends the changes."""

    def __init__(self) -> None:
        self.subscribers: Counter[str] = Counter()
        self.sent: dict[str, dict[str, dict[str, Any]]] = {}
        self.cluster: dict[str, Any] | None = None
        self.task: asyncio.Task | None = None

    def subscribe(self, group_id: str) -> None:
        """Count one more socket on ``group_id``; start the task if it is the first of the process."""
        self.subscribers[group_id] += 1
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())

    def unsubscribe(self, group_id: str) -> None:
        """Count one socket less; the task ends when no socket of this process subscribes."""
        self.subscribers[group_id] -= 1
        if self.subscribers[group_id] <= 0:
            del self.subscribers[group_id]
            self.sent.pop(group_id, None)
        if not self.subscribers and self.task is not None:
            self.task.cancel()
            self.task = None
            self.cluster = None

    def known(self, group_id: str) -> dict[str, dict[str, Any]]:
        """The figures last sent for ``group_id`` (what a new subscriber starts from)."""
        return self.sent.get(group_id, {})

    async def _run(self) -> None:
        layer = get_channel_layer()
        while self.subscribers:
            try:
                await self.step(layer)
            except Exception:  # the relay outlives any one failure (e.g. the channel layer away)
                log.exception("the live relay failed to send the nodes' figures")
            await asyncio.sleep(settings.LIVE_INTERVAL_SECONDS)

    async def step(self, layer) -> None:
        """Ask the nodes once and send each subscribed group what changed."""
        group_ids = list(self.subscribers)
        cluster, current = await _ask(group_ids)
        if cluster != self.cluster:
            self.cluster = cluster
            for group_id in group_ids:
                await layer.group_send(group_name(group_id), {"type": "cluster.state", **cluster})
        for group_id, figures in current.items():
            if group_id not in self.subscribers:  # the last socket left meanwhile
                continue
            previous = self.sent.get(group_id, {})
            changed = {pk: values for pk, values in figures.items() if previous.get(pk) != values}
            self.sent[group_id] = figures
            if changed:
                await layer.group_send(group_name(group_id), {"type": "stats.delta", "components": changed})


#: This web process's relay.
relay = Relay()
