"""The msgpack encoding of one provenance event, shared by journals and shard segments.

An event is stored as a msgpack array *without* its id (the id travels beside it: a journal
frame carries the first id of its batch, a segment block the list of its ids), so the bytes
made when the event is registered are copied, never re-encoded, into long-term storage.

Array layout, format version 1 (append new fields at the end only)::

    0 type name        5 entry_date          10 updated_attributes (None = removed)
    1 event_time       6 lineage_start_date  11 previous_content_claim
    2 flowfile_uuid    7 parent_uuids        12 content_claim
    3 component_id     8 child_uuids         13 relationship   16 source_system_flowfile_id
    4 component_type   9 previous_attributes 14 details        17 alternate_identifier
                                             15 transit_uri    18 source_queue_id
                                                               19 duration

A claim is ``[container, section, identifier, offset, length]`` or nil.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

import msgpack

from engine.flowfile import ContentClaim, ResourceClaim
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType

__all__ = [
    "FORMAT_VERSION",
    "encode_event",
    "decode_wire",
    "event_from_wire",
    "index_fragment",
]

FORMAT_VERSION = 1

_EVENT_TYPES = {t.value: t for t in ProvenanceEventType}


def _claim(claim: ContentClaim | None) -> list[Any] | None:
    if claim is None:
        return None
    resource = claim.resource_claim
    return [resource.container, resource.section, resource.identifier, claim.offset, claim.length]


def _mapping(values: Any) -> dict[str, Any]:
    return values if type(values) is dict else dict(values)


def encode_event(event: ProvenanceEvent) -> bytes:
    """The stored bytes of ``event`` (its id is not part of them)."""
    return msgpack.packb(
        [
            event.event_type.value,
            event.event_time,
            event.flowfile_uuid,
            event.component_id,
            event.component_type,
            event.entry_date,
            event.lineage_start_date,
            list(event.parent_uuids),
            list(event.child_uuids),
            _mapping(event.previous_attributes),
            _mapping(event.updated_attributes),
            _claim(event.previous_content_claim),
            _claim(event.content_claim),
            event.relationship,
            event.details,
            event.transit_uri,
            event.source_system_flowfile_id,
            event.alternate_identifier,
            event.source_queue_id,
            event.duration,
        ],
        use_bin_type=True,
    )


_json = json.JSONEncoder(separators=(",", ":")).encode


def index_fragment(event: ProvenanceEvent, indexed_attributes: Iterable[str]) -> str:
    """The JSON array of what a shard indexes about ``event``, made while the event is at hand.

    ``[time, type, component_id, filename, mentions, {indexed name: value}]`` where ``mentions``
    is ``[[uuid, role], ...]`` (role 0 the FlowFile, 1 a parent, 2 a child); a rollover then only
    splices ids in instead of decoding every event again.
    """
    updated = event.updated_attributes
    previous = event.previous_attributes
    filename = updated["filename"] if "filename" in updated else previous.get("filename")
    indexed = {}
    for name in indexed_attributes:
        value = updated[name] if name in updated else previous.get(name)
        if value is not None:
            indexed[name] = value
    mentions = [(event.flowfile_uuid, 0)]
    if event.parent_uuids:
        mentions += [(uuid, 1) for uuid in event.parent_uuids]
    if event.child_uuids:
        mentions += [(uuid, 2) for uuid in event.child_uuids]
    return _json([event.event_time, event.event_type.value, event.component_id, filename, mentions, indexed])


def decode_wire(data: bytes) -> Sequence[Any]:
    """The field array of stored event bytes, for indexing without building the event."""
    return msgpack.unpackb(data, use_list=False, raw=False)


def _claim_from(wire: Sequence[Any] | None) -> ContentClaim | None:
    if wire is None:
        return None
    container, section, identifier, offset, length = wire[:5]
    return ContentClaim(ResourceClaim(container, section, identifier), offset, length)


def event_from_wire(wire: Sequence[Any], event_id: int) -> ProvenanceEvent:
    """Rebuild the event whose field array is ``wire`` and whose id is ``event_id``."""
    event_type = _EVENT_TYPES.get(wire[0], ProvenanceEventType.UNKNOWN)
    return ProvenanceEvent(
        event_type,
        wire[1],
        wire[2],
        wire[3],
        wire[4],
        wire[5],
        wire[6],
        tuple(wire[7]),
        tuple(wire[8]),
        wire[9],
        wire[10],
        _claim_from(wire[11]),
        _claim_from(wire[12]),
        wire[13],
        wire[14],
        wire[15],
        wire[16],
        wire[17],
        wire[18],
        wire[19],
        event_id,
    )
