"""The web process's relay of the nodes' figures to its subscribers.

One asyncio task per web process runs while any socket of this process subscribes to a process
group: every ``LIVE_INTERVAL_SECONDS`` it asks the nodes for their status (in a thread:
``flowsite.cluster.status.group_figures``, the nodes' answers cached for about a second
whoever asks), compares each subscribed group's figures with the previous ones and sends only
the components that changed, as a ``stats.delta`` event to the group's Channels group. Each
consumer then keeps what its user may view. When the nodes cannot be asked (Redis does not
answer), a ``cluster.state`` event says so once; another says when they answer again.
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

from flowsite.cluster.status import group_figures
from flowsite.live.groups import group_name

__all__ = ["relay"]

log = logging.getLogger(__name__)


@database_sync_to_async
def _figures(group_ids: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
    return {group_id: group_figures(group_id) for group_id in group_ids}


class Relay:
    """Subscriber counts per group, the figures last sent, and the task that sends the changes."""

    def __init__(self) -> None:
        self.subscribers: Counter[str] = Counter()
        self.sent: dict[str, dict[str, dict[str, Any]]] = {}
        self.reachable = True
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
        try:
            current = await _figures(group_ids)
        except redis.RedisError as error:
            if self.reachable:
                self.reachable = False
                await self._cluster_state(layer, group_ids, False, f"the nodes cannot be reached: {error}")
            return
        if not self.reachable:
            self.reachable = True
            await self._cluster_state(layer, group_ids, True, "the nodes can be reached again")
        for group_id in group_ids:
            if group_id not in self.subscribers:  # the last socket left meanwhile
                continue
            previous = self.sent.get(group_id, {})
            changed = {pk: figures for pk, figures in current[group_id].items() if previous.get(pk) != figures}
            self.sent[group_id] = current[group_id]
            if changed:
                await layer.group_send(group_name(group_id), {"type": "stats.delta", "components": changed})

    @staticmethod
    async def _cluster_state(layer, group_ids: list[str], reachable: bool, message: str) -> None:
        for group_id in group_ids:
            await layer.group_send(group_name(group_id),
                                   {"type": "cluster.state", "reachable": reachable, "message": message})


#: This web process's relay.
relay = Relay()
