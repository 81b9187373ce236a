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

A claim is ``[container, section, identifier, offset, length]`` or nil, followed by the
content's CRC32 when the claim has one (readers of the five first elements ignore it).

Beside its bytes, each event gets an index fragment (``index_fragments``): the fields a shard
indexes, with uuids, filenames, components and attribute values reduced to 64-bit keys
(``index_key``) of their lower-case text, as NiFi's searches ignore case (``term_key``).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from hashlib import blake2b
from typing import Any, Iterable, Sequence

import msgpack

from engine.flowfile import ContentClaim, ResourceClaim
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType

__all__ = [
    "FORMAT_VERSION",
    "encode_events",
    "decode_wire",
    "event_from_wire",
    "index_fragments",
    "FRAGMENT_HEADER",
    "index_key",
    "term_key",
    "attribute_key",
    "component_key",
    "UUID_KEY",
    "FILENAME_KEY",
    "COMPONENT_KEY",
]

FORMAT_VERSION = 1

_EVENT_TYPES = {t.value: t for t in ProvenanceEventType}


_TYPE_NAMES = {t: t.value for t in ProvenanceEventType}
_TYPE_FIELDS = {t: f"{t.value:20}" for t in ProvenanceEventType}
_local = threading.local()


def _packer() -> msgpack.Packer:
    # One per thread: making a Packer for every event costs about as much as packing it.
    packer = getattr(_local, "packer", None)
    if packer is None:
        packer = _local.packer = msgpack.Packer(use_bin_type=True)
    return packer


def _claim(claim: ContentClaim | None) -> list[Any] | None:
    if claim is None:
        return None
    resource = claim.resource_claim
    if claim.checksum is None:
        return [resource.container, resource.section, resource.identifier, claim.offset, claim.length]
    return [resource.container, resource.section, resource.identifier, claim.offset, claim.length, claim.checksum]


def _mapping(values: Any) -> dict[str, Any]:
    return values if type(values) is dict else dict(values)


def _array(values: Sequence[Any]) -> Sequence[Any]:
    return values if type(values) is tuple or type(values) is list else list(values)


def encode_events(events: Iterable[ProvenanceEvent]) -> list[bytes]:
    """The stored bytes of each event (its id is not part of them)."""
    pack = _packer().pack
    names = _TYPE_NAMES
    return [
        pack(
            [
                names[event.event_type],
                event.event_time,
                event.flowfile_uuid,
                event.component_id,
                event.component_type,
                event.entry_date,
                event.lineage_start_date,
                _array(event.parent_uuids),
                _array(event.child_uuids),
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
            ]
        )
        for event in events
    ]


UUID_KEY, FILENAME_KEY, COMPONENT_KEY, ATTRIBUTE_KEY = b"uuid", b"filename", b"component", b"attribute"


def index_key(domain: bytes, text: str) -> int:
    """The signed 64-bit key under which a shard indexes ``text`` (a uuid, a filename, ...).

    Integer keys make index rows small and cheap to insert; two texts may share a key, so
    whatever an index lookup finds is checked against the events read.
    """
    return int.from_bytes(blake2b(text.encode(), digest_size=8, person=domain).digest(), "little", signed=True)


def term_key(domain: bytes, text: str) -> int:
    """The key a shard indexes ``text`` under: that of its lower-case form (searches ignore case)."""
    return index_key(domain, text.lower())


def attribute_key(name: str, value: str) -> int:
    """The index key of an indexed attribute's value (the name is matched exactly, the value ignoring case)."""
    return index_key(ATTRIBUTE_KEY, f"{name}\0{value.lower()}")


@lru_cache(maxsize=4096)
def component_key(component_id: str) -> int:
    """The index key of a component id."""
    # A flow has few components and each writes many events.
    return term_key(COMPONENT_KEY, component_id)


FRAGMENT_HEADER = 68  # the fixed-width fields before the term keys


def index_fragments(events: Iterable[ProvenanceEvent], indexed_attributes: Iterable[str]) -> list[str]:
    """What a shard indexes about each event, made while the events are at hand.

    Fixed-width ASCII fields, numbers right-aligned: time (20), type name (20, left-aligned),
    component key (20), the number of terms (8), then each term's key (20). The terms are the
    keys of every uuid the event names (FlowFile first, then parents and children), of its
    filename and of its indexed attributes.
    """
    term = _term
    types = _TYPE_FIELDS
    fragments = []
    for event in events:
        updated = event.updated_attributes
        previous = event.previous_attributes
        terms = [term(UUID_KEY, event.flowfile_uuid)]
        if event.parent_uuids or event.child_uuids:
            terms += [term(UUID_KEY, uuid) for uuid in (*event.parent_uuids, *event.child_uuids)]
        filename = updated["filename"] if "filename" in updated else previous.get("filename")
        if filename is not None:
            terms.append(term(FILENAME_KEY, filename))
        for name in indexed_attributes:
            value = updated[name] if name in updated else previous.get(name)
            if value is not None:
                terms.append(f"{attribute_key(name, value):20d}")
        fragments.append(f"{event.event_time:20d}{types[event.event_type]}{_component_field(event.component_id)}"
                         f"{len(terms):8d}{''.join(terms)}")
    return fragments


@lru_cache(maxsize=1 << 16)
def _term(domain: bytes, text: str) -> str:
    # The formatted key, cached: a FlowFile's uuid and filename come back in each of its events.
    return f"{term_key(domain, text):20d}"


@lru_cache(maxsize=4096)
def _component_field(component_id: str) -> str:
    return f"{component_key(component_id):20d}"


def decode_wire(data: bytes) -> Sequence[Any]:
    """The field array of stored event bytes, for indexing without building the event."""
    return msgpack.unpackb(data, use_list=False, raw=False)


def _claim_from(wire: Sequence[Any] | None) -> ContentClaim | None:
    if wire is None:
        return None
    container, section, identifier, offset, length = wire[:5]
    checksum = wire[5] if len(wire) > 5 else None
    return ContentClaim(ResourceClaim(container, section, identifier), offset, length, checksum)


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
