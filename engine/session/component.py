"""What a session needs to know of the component it works for."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from engine.queue import FlowFileQueue, Polled

if TYPE_CHECKING:
    from engine.session.damaged import DamagedContentPolicy
    from engine.session.session import SessionCounts

__all__ = ["SessionComponent"]


@dataclass
class SessionComponent:
    """A processor (or funnel) as its sessions see it: its queues and relationships.

    ``outgoing`` maps each relationship to the queues of its connections; a relationship in
    ``auto_terminated`` with no connection drops what is sent to it. ``on_session_end`` receives
    the counts of every session that ends (committed or rolled back), for statistics.
    ``damaged_content`` says what becomes of a FlowFile whose content a session finds damaged
    (the node's setting; without one such FlowFiles are dropped, as NiFi does).
    """

    identifier: str
    component_type: str
    incoming: Sequence[FlowFileQueue] = ()
    outgoing: Mapping[str, Sequence[FlowFileQueue]] = field(default_factory=dict)
    auto_terminated: frozenset[str] = frozenset()
    penalty_duration: float = 30.0
    next_incoming: int = 0
    on_session_end: Callable[[SessionCounts], None] | None = None
    #: The wall clock (seconds) for entry dates, queue dates and penalties.
    clock: Callable[[], float] = time.time
    damaged_content: DamagedContentPolicy | None = None

    def poll_incoming(self, max_count: int) -> list[tuple[FlowFileQueue, Polled]]:
        """Take up to ``max_count`` FlowFiles from the incoming queues, round robin."""
        taken = []
        queues = self.incoming
        remaining = max_count
        for _ in range(len(queues)):
            if remaining <= 0:
                break
            queue = queues[self.next_incoming % len(queues)]
            self.next_incoming = (self.next_incoming + 1) % len(queues)
            polled = queue.poll(remaining)
            if polled.flowfiles or polled.expired:
                taken.append((queue, polled))
                remaining -= len(polled.flowfiles)
        return taken
