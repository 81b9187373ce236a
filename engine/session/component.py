"""What a session needs to know of the component it works for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from engine.queue import FlowFileQueue

__all__ = ["SessionComponent"]


@dataclass
class SessionComponent:
    """A processor (or funnel) as its sessions see it: its queues and relationships.

    ``outgoing`` maps each relationship to the queues of its connections; a relationship in
    ``auto_terminated`` with no connection drops what is sent to it.
    """

    identifier: str
    component_type: str
    incoming: Sequence[FlowFileQueue] = ()
    outgoing: Mapping[str, Sequence[FlowFileQueue]] = field(default_factory=dict)
    auto_terminated: frozenset[str] = frozenset()
    penalty_duration: float = 30.0
    next_incoming: int = 0

    def poll_incoming(self, max_count: int) -> list[tuple[FlowFileQueue, list]]:
        """Take up to ``max_count`` FlowFiles from the incoming queues, round robin."""
        taken = []
        queues = self.incoming
        remaining = max_count
        for _ in range(len(queues)):
            if remaining <= 0:
                break
            queue = queues[self.next_incoming % len(queues)]
            self.next_incoming = (self.next_incoming + 1) % len(queues)
            flowfiles = queue.poll(remaining)
            if flowfiles:
                taken.append((queue, flowfiles))
                remaining -= len(flowfiles)
        return taken
