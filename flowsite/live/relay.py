"""The web process's relay of the nodes' figures to its subscribers.

One asyncio task per web process runs while any socket of this process subscribes to a process
group: every ``LIVE_INTERVAL_SECONDS`` it asks the nodes for their status once (in a thread;
``flowsite.cluster.status.ask_nodes``, answers cached for about a second whoever asks),
compares each subscribed group's figures (``group_live``) with those it sent before and hands
only the components that changed, and the bulletins the nodes posted since, to this process's
own sockets on that group (each consumer
keeps what its user may view). Every web process relays to its own sockets only, so a socket
receives each change once however many replicas serve the group (design events, which happen
once, travel through the channel layer instead). When the set of nodes that answer changes (the
first answer, a node joining or leaving, none answering, Redis not answering), each socket is
told so, once per change.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from collections import defaultdict
from typing import Any, Protocol

import redis
from channels.db import database_sync_to_async
from django.conf import settings

from flowsite.cluster.redis import unreachable_message
from flowsite.cluster.status import NO_NODE, ask_nodes, group_live

__all__ = ["relay"]

log = logging.getLogger(__name__)


# Off the thread Django's synchronous views share under ASGI: the relay's work each second must
# not hold up the page and API requests of the same process.
@partial(database_sync_to_async, thread_sensitive=False)
def _ask(group_ids: list[str]) -> tuple[dict[str, Any], dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]]:
    """(the cluster's state, each group's figures and bulletins); the nodes asked once. Redis not
    answering is a state with no node and nothing of any group."""
    try:
        answers = ask_nodes()
        figures = {group_id: group_live(group_id, answers) for group_id in group_ids}
    except redis.RedisError:  # the same message each time: the state is sent once, not every second
        return {"reachable": False, "nodes": [], "message": unreachable_message()}, {}
    nodes = sorted(node for node, reply in answers.replies.items() if reply.ok)
    message = f"{len(nodes)} of {len(answers.replies)} connected nodes answer" if answers.replies else NO_NODE
    return {"reachable": bool(nodes), "nodes": nodes, "message": message}, figures


class Subscriber(Protocol):
    """A socket of this process on a group (``ProcessGroupConsumer``)."""

    async def stats_delta(self, event: dict[str, Any]) -> None: ...

    async def cluster_state(self, event: dict[str, Any]) -> None: ...

    async def bulletins_posted(self, event: dict[str, Any]) -> None: ...


class Relay:
    """This process's sockets per group, what was sent last, and the task that sends the changes."""

    def __init__(self) -> None:
        self.subscribers: defaultdict[str, set[Subscriber]] = defaultdict(set)
        self.sent: dict[str, dict[str, dict[str, Any]]] = {}
        self.bulletins: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}
        self.cluster: dict[str, Any] | None = None
        self.task: asyncio.Task | None = None

    def subscribe(self, group_id: str, subscriber: Subscriber) -> None:
        """Add a socket on ``group_id``; start the task if it is the first of the process."""
        self.subscribers[group_id].add(subscriber)
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())

    def unsubscribe(self, group_id: str, subscriber: Subscriber) -> None:
        """Remove a socket; the task ends when no socket of this process subscribes."""
        self.subscribers[group_id].discard(subscriber)
        if not self.subscribers[group_id]:
            del self.subscribers[group_id]
            self.sent.pop(group_id, None)
            self.bulletins.pop(group_id, None)
        if not self.subscribers and self.task is not None:
            self.task.cancel()
            self.task = None
            self.cluster = None

    def known(self, group_id: str) -> dict[str, dict[str, Any]]:
        """The figures last sent for ``group_id`` (what a new subscriber starts from)."""
        return self.sent.get(group_id, {})

    def known_bulletins(self, group_id: str) -> list[dict[str, Any]]:
        """The nodes' recent bulletins of ``group_id`` last seen (what a new subscriber starts from)."""
        return list(self.bulletins.get(group_id, {}).values())

    async def _run(self) -> None:
        while self.subscribers:
            try:
                await self.step()
            except Exception:  # the relay outlives any one failure
                log.exception("the live relay failed to send the nodes' figures")
            await asyncio.sleep(settings.LIVE_INTERVAL_SECONDS)

    async def step(self) -> None:
        """Ask the nodes once and hand each subscribed socket what changed in its group."""
        group_ids = list(self.subscribers)
        cluster, current = await _ask(group_ids)
        if cluster != self.cluster:
            self.cluster = cluster
            await self._hand(group_ids, "cluster_state", cluster)
        for group_id, (figures, bulletins) in current.items():
            if group_id not in self.subscribers:  # the last socket left meanwhile
                continue
            previous = self.sent.get(group_id, {})
            changed = {pk: values for pk, values in figures.items() if previous.get(pk) != values}
            self.sent[group_id] = figures
            if changed:
                await self._hand([group_id], "stats_delta", {"components": changed})
            seen = self.bulletins.get(group_id, {})
            recent = {(b["node"], b["id"]): b for b in bulletins}
            self.bulletins[group_id] = recent
            posted = [b for key, b in recent.items() if key not in seen]
            if posted:
                await self._hand([group_id], "bulletins_posted", {"bulletins": posted})

    async def _hand(self, group_ids: list[str], handler: str, event: dict[str, Any]) -> None:
        sockets = [s for group_id in group_ids for s in list(self.subscribers.get(group_id, ()))]
        results = await asyncio.gather(*(getattr(s, handler)(event) for s in sockets), return_exceptions=True)
        for failure in (r for r in results if isinstance(r, Exception)):  # a socket closing meanwhile
            log.debug("a live socket did not take %s: %s", handler, failure)


#: This web process's relay.
relay = Relay()
