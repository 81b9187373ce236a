"""Provenance events as JSON-ready data: the summary of result lists and lineage, and the full event.

A summary holds what anyone who may see the event's provenance may see: no attribute and no
content claim (those need the right to view the data). The full event adds every field, the
attributes NiFi's way (each name with its value and previous value), both content claims, and
what the node can do with it: whether the input and output content can still be read, and
whether the event can be replayed (or why not). Times are ms since the epoch, sizes bytes.
"""

from __future__ import annotations

from typing import Any

from engine.flowfile import ContentClaim
from engine.provenance.event import ProvenanceEvent

__all__ = ["claim_data", "event_attributes", "event_full", "event_summary"]


def event_summary(event: ProvenanceEvent) -> dict[str, Any]:
    """The event as a result list or a lineage graph shows it."""
    return {
        "id": event.event_id,
        "type": event.event_type.value,
        "time": event.event_time,
        "flowfile_uuid": event.flowfile_uuid,
        "component_id": event.component_id,
        "component_type": event.component_type,
        "file_size": event.file_size,
        "previous_file_size": event.previous_file_size,
        "parent_uuids": list(event.parent_uuids),
        "child_uuids": list(event.child_uuids),
        "relationship": event.relationship,
        "details": event.details,
        "duration": event.duration,
        "lineage_start_date": event.lineage_start_date,
        "entry_date": event.entry_date,
        "source_queue_id": event.source_queue_id,
    }


def claim_data(claim: ContentClaim | None) -> dict[str, Any] | None:
    """A content claim as ``{container, section, identifier, offset, length}`` (None without one)."""
    if claim is None:
        return None
    resource = claim.resource_claim
    return {"container": resource.container, "section": resource.section, "identifier": resource.identifier,
            "offset": claim.offset, "length": claim.length}


def event_attributes(event: ProvenanceEvent) -> list[dict[str, str | None]]:
    """Every attribute the FlowFile had before or after the event, by name: ``{name, value,
    previous_value}`` (``value`` None for one the event removed, ``previous_value`` None for one
    it added)."""
    previous = event.previous_attributes
    current = event.attributes
    return [{"name": name, "value": current.get(name), "previous_value": previous.get(name)}
            for name in sorted(set(previous) | set(current))]


def event_full(event: ProvenanceEvent, *, input_available: bool, output_available: bool,
               replay_explanation: str | None) -> dict[str, Any]:
    """Every field of the event, with what the node found about its content and its replay
    (``replay_explanation`` None: it can be replayed)."""
    return {
        **event_summary(event),
        "transit_uri": event.transit_uri,
        "source_system_flowfile_id": event.source_system_flowfile_id,
        "alternate_identifier": event.alternate_identifier,
        "previous_attributes": dict(event.previous_attributes),
        "updated_attributes": dict(event.updated_attributes),
        "attributes": event_attributes(event),
        "input_claim": claim_data(event.previous_content_claim),
        "output_claim": claim_data(event.content_claim),
        "content_equal": _same_content(event.previous_content_claim, event.content_claim),
        "input_content_available": input_available,
        "output_content_available": output_available,
        "replay_available": replay_explanation is None,
        "replay_explanation": replay_explanation,
    }


def _same_content(before: ContentClaim | None, after: ContentClaim | None) -> bool:
    # NiFi compares the claims' places, not their checksums.
    if before is None or after is None:
        return before is after
    return before[:3] == after[:3]
