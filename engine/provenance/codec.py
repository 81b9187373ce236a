"""The msgpack encoding of provenance events, shared by journals and shard segments.

An event is stored as the msgpack array of its fields as ``ProvenanceEvent`` orders them, which
is what msgpack makes of the named tuple itself: encoding one is a single C-level call, with
no field handled in Python. The id travels beside the stored bytes (a journal frame carries
the first id of its batch, a segment block the list of its ids; the last field holds whatever
id the event had when registered, -1 as a rule), so the bytes made when the event is registered
are copied, never re-encoded, into long-term storage.

Array layout, format version 2 (append new fields at the end only)::

    0 type name        5 entry_date          10 updated_attributes (None = removed)
    1 event_time       6 lineage_start_date  11 previous_content_claim
    2 flowfile_uuid    7 parent_uuids        12 content_claim
    3 component_id     8 child_uuids         13 relationship   16 source_system_flowfile_id
    4 component_type   9 previous_attributes 14 details        17 alternate_identifier
                                             15 transit_uri    18 source_queue_id
                                                               19 duration
                                                               20 ignored (the id passed in)

A claim is ``[[container, section, identifier], offset, length, checksum]`` (checksum nil when
unknown) or nil. Format 1 (stored before format 2) has 20 fields and flat claims
``[container, section, identifier, offset, length]``, followed by the CRC32 when there is one;
both are read.

A registered batch is journaled as one *record* (``encode_record``): ``[min_time, max_time,
[event bytes, ...]]``.

Beside its bytes, each event gets an index fragment (``index_fragments``), kept in memory until
the rollover indexes it (recovery makes it again from the event): the fields a shard indexes,
with uuids, filenames, components and attribute values reduced to 64-bit keys (``index_key``)
of their lower-case text, as NiFi's searches ignore case (``term_key``).
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
    "decode_record",
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
_TYPE_FIELDS_BY_ID = {id(t): f"{t.value:20}" for t in ProvenanceEventType}
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
    """The stored bytes of each event (format 2)."""
    pack = _packer().pack
    return [pack(event) for event in events]


def encode_record(blobs: Sequence[bytes], min_time: int, max_time: int) -> bytes:
    """One registered batch as a journal record: ``[min_time, max_time, [event bytes, ...]]``."""
    return _packer().pack((min_time, max_time, blobs))


def decode_record(record: bytes) -> tuple[int, int, Sequence[bytes]]:
    """The times and the stored bytes of each event of a record made by ``encode_record``;
    raises ValueError (or msgpack's errors) when it is not one."""
    min_time, max_time, blobs = msgpack.unpackb(record, use_list=False)
    if type(min_time) is not int or type(max_time) is not int or not all(type(b) is bytes for b in blobs):
        raise ValueError("not a provenance record")
    return min_time, max_time, blobs


UUID_KEY, FILENAME_KEY, COMPONENT_KEY, ATTRIBUTE_KEY = b"uuid", b"filename", b"component", b"attribute"


def index_key(domain: bytes, text: str) -> int:
    """The signed 64-bit key under which a shard indexes ``text`` (a uuid, a filename, ...).

    Integer keys make index rows small and cheap to insert; two texts may share a key, so
    whatever an index lookup finds is checked against the events read.
    """
    state = _KEY_STATES.get(domain)
    if state is None:
        state = _KEY_STATES[domain] = blake2b(digest_size=8, person=domain)
    # Copying the personalised state costs less than making it anew for every text.
    digest = state.copy()
    digest.update(text.encode())
    return int.from_bytes(digest.digest(), "little", signed=True)


_KEY_STATES: dict[bytes, Any] = {}


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
    uuids, filenames, term = _term.fields[UUID_KEY], _term.fields[FILENAME_KEY], _term
    component = _component_field
    type_fields = _TYPE_FIELDS_BY_ID
    indexed = tuple(indexed_attributes)
    fragments: list[str] = []
    append = fragments.append
    for event in events:
        uuid, updated, previous = event.flowfile_uuid, event.updated_attributes, event.previous_attributes
        # By identity: hashing an Enum member runs Python code.
        event_type = event.event_type
        kind = type_fields.get(id(event_type)) or f"{getattr(event_type, 'value', event_type):20}"
        filename = updated["filename"] if "filename" in updated else previous.get("filename")
        head = f"{event.event_time:20d}{kind}{component(event.component_id)}"
        parents, children = event.parent_uuids, event.child_uuids
        if filename is not None and not (parents or children or indexed):
            # The usual event: its FlowFile's uuid and its filename.
            append(f"{head}       2{uuids.get(uuid) or term(UUID_KEY, uuid)}"
                   f"{filenames.get(filename) or term(FILENAME_KEY, filename)}")
            continue
        terms = [term(UUID_KEY, uuid)]
        if parents or children:
            terms += [term(UUID_KEY, other) for other in (*parents, *children)]
        if filename is not None:
            terms.append(term(FILENAME_KEY, filename))
        for name in indexed:
            value = updated[name] if name in updated else previous.get(name)
            if value is not None:
                terms.append(f"{attribute_key(name, value):20d}")
        append(f"{head}{len(terms):8d}{''.join(terms)}")
    return fragments


class _TermFields:
    """The formatted keys of uuids and filenames, remembered: a FlowFile's uuid and filename
    come back in each of its events. Plain dicts of strings: an ``lru_cache`` allocates objects
    the garbage collector tracks for every miss, and most uuids miss once."""

    _LIMIT = 1 << 16

    def __init__(self) -> None:
        self.fields: dict[bytes, dict[str, str]] = {UUID_KEY: {}, FILENAME_KEY: {}}

    def __call__(self, domain: bytes, text: str) -> str:
        known = self.fields[domain]
        field = known.get(text)
        if field is None:
            if len(known) >= self._LIMIT:
                known.clear()
            field = known[text] = f"{index_key(domain, text.lower()):20d}"
        return field

    def cache_clear(self) -> None:
        """Forget every key (needed only when ``index_key`` changes)."""
        for known in self.fields.values():
            known.clear()


_term = _TermFields()


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
