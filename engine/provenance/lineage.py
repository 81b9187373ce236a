"""Lineage: the graph of a FlowFile's ancestors and descendants and the events that link them.

An event's *parents* are its parent uuids plus its FlowFile uuid, less its child uuids; its
*children* are its child uuids. (NiFi records FORK and CLONE under the parent's uuid, JOIN under
the child's and REPLAY with the original as parent, and this rule reads all of them.) Ancestors
are found by following, from each FlowFile, the events that name it as a child to their
parents; descendants by following the events that name it as a parent to their children.
Siblings and co-parents are not part of the graph unless related in one of those directions.

``expand`` is NiFi's expansion of one event of a graph: the events of its parents (up to the
event) or of its children (from the event on), for the events that have them (FORK, JOIN,
CLONE, REPLAY).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, Literal

from engine.provenance.event import ProvenanceEvent, ProvenanceEventType

__all__ = ["EXPANDABLE", "LineageNode", "LineageEdge", "LineageGraph", "compute_lineage", "expand"]

#: The event types whose parents and children can be expanded (NiFi's).
EXPANDABLE = frozenset({ProvenanceEventType.FORK, ProvenanceEventType.JOIN, ProvenanceEventType.CLONE,
                        ProvenanceEventType.REPLAY})


@dataclass(frozen=True)
class LineageNode:
    """A FlowFile (``ff:<uuid>``) or an event (``ev:<id>``) of the graph."""

    id: str
    kind: Literal["flowfile", "event"]
    flowfile_uuid: str
    event_id: int | None = None
    event_type: ProvenanceEventType | None = None
    event_time: int | None = None


@dataclass(frozen=True)
class LineageEdge:
    """``source`` leads to ``target`` in the life of FlowFile ``flowfile_uuid``."""

    source: str
    target: str
    flowfile_uuid: str


@dataclass
class LineageGraph:
    """FlowFile and event nodes with their edges, plus the events; ``truncated`` when capped."""

    root_uuid: str
    nodes: list[LineageNode] = field(default_factory=list)
    edges: list[LineageEdge] = field(default_factory=list)
    events: list[ProvenanceEvent] = field(default_factory=list)
    truncated: bool = False

    @property
    def flowfile_uuids(self) -> set[str]:
        """The uuids of the FlowFile nodes."""
        return {node.flowfile_uuid for node in self.nodes if node.kind == "flowfile"}


def event_parents(event: ProvenanceEvent) -> set[str]:
    """The FlowFiles an event consumes or acts on."""
    return ({event.flowfile_uuid, *event.parent_uuids}) - set(event.child_uuids)


def compute_lineage(
    root_uuid: str, events_mentioning: Callable[[str], Iterable[ProvenanceEvent]], max_nodes: int
) -> LineageGraph:
    """Build the lineage of ``root_uuid``; ``events_mentioning(uuid)`` returns every event naming it."""
    cache: dict[str, list[ProvenanceEvent]] = {}

    def events_of(uuid: str) -> list[ProvenanceEvent]:
        if uuid not in cache:
            cache[uuid] = sorted(events_mentioning(uuid), key=lambda event: event.event_id)
        return cache[uuid]

    order = [root_uuid]
    seen = {root_uuid}
    truncated = False
    for upward in (True, False):
        pending = deque([root_uuid])
        while pending and not truncated:
            uuid = pending.popleft()
            for event in events_of(uuid):
                parents = event_parents(event)
                if upward:
                    related = parents if uuid in event.child_uuids else set()
                else:
                    related = set(event.child_uuids) - parents if uuid in parents else set()
                for other in sorted(related - seen):
                    if len(order) >= max_nodes:
                        truncated = True
                        break
                    seen.add(other)
                    order.append(other)
                    pending.append(other)

    graph = LineageGraph(root_uuid, truncated=truncated)
    events: dict[int, ProvenanceEvent] = {}
    for uuid in order:
        for event in events_of(uuid):
            events.setdefault(event.event_id, event)
    budget = max_nodes - len(order)
    kept = sorted(events.values(), key=lambda event: event.event_id)
    if len(kept) > budget:
        graph.truncated = True
        kept = kept[: max(budget, 0)]
    kept_ids = {event.event_id for event in kept}
    graph.events = kept
    graph.nodes = [LineageNode(f"ff:{uuid}", "flowfile", uuid) for uuid in order]
    graph.nodes += [
        LineageNode(f"ev:{e.event_id}", "event", e.flowfile_uuid, e.event_id, e.event_type, e.event_time)
        for e in kept
    ]
    for uuid in order:
        previous = f"ff:{uuid}"
        for event in events_of(uuid):
            if event.event_id not in kept_ids:
                continue
            node = f"ev:{event.event_id}"
            if uuid in event.child_uuids:
                graph.edges.append(LineageEdge(node, f"ff:{uuid}", uuid))
            else:
                graph.edges.append(LineageEdge(previous, node, uuid))
                previous = node
    return graph


def expand(event: ProvenanceEvent, direction: Literal["parents", "children"],
           events_mentioning: Callable[[str], Iterable[ProvenanceEvent]], max_events: int,
           ) -> tuple[list[ProvenanceEvent], bool]:
    """The events of ``event``'s parents from their lineage start to the event, or of its
    children from the event on, by id; at most ``max_events`` (and True when more were left out).

    Raises ValueError for an event of a type that has no parents or children to expand.
    """
    if event.event_type not in EXPANDABLE:
        raise ValueError(f"provenance event {event.event_id} is a {event.event_type.value} event, so its "
                         f"{direction} cannot be expanded (only FORK, JOIN, CLONE and REPLAY events have them)")
    if direction == "parents":
        uuids, low, high = event.parent_uuids, event.lineage_start_date, event.event_time
    else:
        uuids, low, high = event.child_uuids, event.event_time, None
    found: dict[int, ProvenanceEvent] = {}
    for uuid in dict.fromkeys(uuids):
        for other in events_mentioning(uuid):
            if other.event_time >= low and (high is None or other.event_time <= high):
                found[other.event_id] = other
    events = [found[event_id] for event_id in sorted(found)]
    return events[:max_events], len(events) > max_events
