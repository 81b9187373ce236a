"""The msgpack encoding of provenance events, shared by journals and shard segments.

An event is stored as the msgpack array of its fields as ``ProvenanceEvent`` orders them, which
is what msgpack makes of the named tuple itself: a batch is encoded by one C-level call, with
no per-event work in Python. The id travels beside the stored bytes (a journal frame carries
the first id of its batch, a segment block the list of its ids), so the bytes made when the
event is registered are copied, never re-encoded, into long-term storage.

Array layout, format version 2 (append new fields at the end only)::

    0 type name        5 entry_date          10 updated_attributes (None = removed)
    1 event_time       6 lineage_start_date  11 previous_content_claim
    2 flowfile_uuid    7 parent_uuids        12 content_claim
    3 component_id     8 child_uuids         13 relationship   16 source_system_flowfile_id
    4 component_type   9 previous_attributes 14 details        17 alternate_identifier
                                             15 transit_uri    18 source_queue_id
                                                               19 duration
                                                               20 ignored (the id as passed in)

A claim is ``[[container, section, identifier], offset, length, checksum]`` (checksum nil when
unknown) or nil. Format 1 (stored before format 2) has 20 fields and flat claims
``[container, section, identifier, offset, length]``, followed by the CRC32 when there is one;
both are read.

A registered batch is journaled as one *record* (``encode_record``): ``[min_time, max_time,
[event, ...]]``, from which each event's stored bytes are sliced (``split_record``) at rollover.

What a shard indexes about each event is its index fragment (``index_fragments``), made at
rollover: the fields a shard indexes, with uuids, filenames, components and attribute values
reduced to 64-bit keys (``index_key``) of their lower-case text, as NiFi's searches ignore case
(``term_key``).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from hashlib import blake2b
from typing import Any, Iterable, Mapping, Sequence

import msgpack

from engine.flowfile import ContentClaim, ResourceClaim
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType

__all__ = [
    "FORMAT_VERSION",
    "encode_events",
    "encode_record",
    "split_record",
    "decode_wire",
    "event_from_wire",
    "claim_length",
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

FORMAT_VERSION = 2

_EVENT_TYPES = {t.value: t for t in ProvenanceEventType}


_TYPE_FIELDS = {t: f"{t.value:20}" for t in ProvenanceEventType}
_local = threading.local()


def _stored_form(value: Any) -> Any:
    # Called by msgpack for what it cannot pack as it is: mappings other than dicts, and uuid
    # collections other than lists and tuples.
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"a provenance event field cannot hold {type(value).__name__}")
    return list(value)


def _packer() -> msgpack.Packer:
    # One per thread: making a Packer for every batch costs about as much as packing it.
    packer = getattr(_local, "packer", None)
    if packer is None:
        packer = _local.packer = msgpack.Packer(use_bin_type=True, default=_stored_form)
    return packer


def encode_events(events: Iterable[ProvenanceEvent]) -> list[bytes]:
    """The stored bytes of each event (its id is not part of them)."""
    pack = _packer().pack
    return [pack(event) for event in events]


def encode_record(events: Sequence[ProvenanceEvent], min_time: int, max_time: int) -> bytes:
    """One registered batch as a journal record: ``[min_time, max_time, [event, ...]]``."""
    return _packer().pack((min_time, max_time, events))


def split_record(record: bytes) -> tuple[int, int, list[bytes]]:
    """The times and the stored bytes of each event of a record made by ``encode_record``;
    raises ValueError when it is not one."""
    unpacker = msgpack.Unpacker(max_buffer_size=len(record))
    unpacker.feed(record)
    if unpacker.read_array_header() != 3:
        raise ValueError("not a provenance record")
    min_time, max_time = unpacker.unpack(), unpacker.unpack()
    count = unpacker.read_array_header()
    skip, tell = unpacker.skip, unpacker.tell
    start = tell()
    ends = []
    for _ in range(count):
        skip()
        ends.append(tell())
    if ends and ends[-1] != len(record) or type(min_time) is not int or type(max_time) is not int:
        raise ValueError("not a provenance record")
    blobs = []
    for end in ends:
        blobs.append(record[start:end])
        start = end
    return min_time, max_time, blobs


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
    if type(wire[0]) is tuple or type(wire[0]) is list:  # format 2
        container, section, identifier = wire[0]
        return ContentClaim(ResourceClaim(container, section, identifier), wire[1], wire[2], wire[3])
    container, section, identifier, offset, length = wire[:5]
    checksum = wire[5] if len(wire) > 5 else None
    return ContentClaim(ResourceClaim(container, section, identifier), offset, length, checksum)


def claim_length(wire: Sequence[Any] | None) -> int:
    """The content length of a stored claim (0 for none)."""
    if wire is None:
        return 0
    return wire[2] if type(wire[0]) is tuple or type(wire[0]) is list else wire[4]


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
