"""A node's provenance events as a user reaches them: one event, its content, its lineage.

Every lookup takes a ``scope``, the components whose events may be shown: an event of any other
component is answered exactly as an event that does not exist (``UnknownEventError``, same
message), and lineage leaves such events out and does not follow FlowFiles through them.
One event is found by its id at once; lineage follows the events rolled over into the
repository's shards (see ``engine.provenance``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection, Literal

from engine.content.ranges import read_range
from engine.provenance.event import ProvenanceEvent
from engine.provenance.event_data import event_full
from engine.provenance.lineage import compute_lineage, expand
from engine.provenance.repository import ProvenanceRepository
from engine.runtime.replay import replay_refusal

if TYPE_CHECKING:
    from engine.runtime.controller import FlowController

__all__ = ["NoContentError", "UnknownEventError", "describe_event", "event_content", "event_lineage", "find_event"]

Direction = Literal["both", "parents", "children"]


class UnknownEventError(LookupError):
    """No provenance event of that id may be shown (it never existed, aged off, or is out of scope)."""

    code = "not_found"


class NoContentError(LookupError):
    """The event's FlowFile had no content before (or after) the event."""

    code = "no_content"


def find_event(provenance: ProvenanceRepository, event_id: int, scope: Collection[str]) -> ProvenanceEvent:
    """The event ``event_id`` if its component is in ``scope``; else UnknownEventError."""
    event = provenance.get_event(event_id)
    if event is None or event.component_id not in scope:
        raise UnknownEventError(f"provenance event {event_id} is not known on this node (it may have aged off)")
    return event


def describe_event(controller: FlowController, event: ProvenanceEvent) -> dict:
    """Every field of ``event`` with the availability of its content and of its replay."""
    content = controller.storage.content
    before, after = event.previous_content_claim, event.content_claim
    return event_full(event, input_available=before is not None and content.exists(before),
                      output_available=after is not None and content.exists(after),
                      replay_explanation=replay_refusal(controller, event))


def event_content(controller: FlowController, event: ProvenanceEvent, direction: str, offset: int,
                  length: int) -> tuple[int, bytes]:
    """The size of ``event``'s input (``direction`` "input", the content before the event) or
    output content, and its bytes ``[offset, offset + length)`` (see ``read_range``).

    Raises NoContentError when the event has no such content, and what ``read_range`` raises.
    """
    if direction not in ("input", "output"):
        raise ValueError(f"the content of an event is its 'input' or its 'output', not {direction!r}")
    claim = event.previous_content_claim if direction == "input" else event.content_claim
    if claim is None:
        had = "before" if direction == "input" else "after"
        raise NoContentError(f"provenance event {event.event_id} has no {direction} content: its FlowFile had no "
                          f"content {had} the event")
    data = read_range(controller.storage.content, claim, offset, length,
                      f"the {direction} content of provenance event {event.event_id}")
    return claim.length, data


def event_lineage(provenance: ProvenanceRepository, scope: Collection[str], *, uuid: str | None = None,
                  event: ProvenanceEvent | None = None, direction: Direction = "both",
                  max_events: int = 1000) -> tuple[list[ProvenanceEvent], bool]:
    """The events of a lineage on this node, by id, and whether it was cut at ``max_events``.

    ``direction`` "both": the lineage of FlowFile ``uuid`` (or of ``event``'s FlowFile), its
    ancestors and descendants (``compute_lineage``); "parents"/"children": NiFi's expansion of
    ``event`` (``expand``).
    """
    def mentioning(flowfile_uuid: str) -> list[ProvenanceEvent]:
        return [e for e in provenance.events_mentioning(flowfile_uuid) if e.component_id in scope]

    if direction == "both":
        root = uuid if uuid is not None else event.flowfile_uuid if event is not None else None
        if root is None:
            raise ValueError("a lineage needs a FlowFile uuid or an event")
        graph = compute_lineage(root, mentioning, max_events)
        return graph.events, graph.truncated
    if direction not in ("parents", "children"):
        raise ValueError(f"a lineage's direction is 'both', 'parents' or 'children', not {direction!r}")
    if event is None:
        raise ValueError(f"expanding the {direction} of a lineage needs the event to expand")
    return expand(event, direction, mentioning, max_events)
