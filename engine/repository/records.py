"""Repository records: what one session commit (or swap) tells the FlowFile repository."""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from engine.flowfile import ContentClaim, FlowFile, ResourceClaim
from engine.wal.serde import UpdateType

__all__ = ["RepositoryRecord", "FlowFileRecordSerde"]

_UPDATE, _DELETE, _SWAP_OUT, _SWAP_IN, _TRANSFER_RECEIVED, _OUTBOX = (
    int(UpdateType.UPDATE), int(UpdateType.DELETE), int(UpdateType.SWAP_OUT), int(UpdateType.SWAP_IN),
    int(UpdateType.TRANSFER_RECEIVED), int(UpdateType.OUTBOX),
)


class RepositoryRecord(NamedTuple):
    """One change to the FlowFile repository.

    ``flowfile`` is the FlowFile's full new state (None for swap-file records);
    ``queue_id`` the queue it sits in. ``original_claim`` is the content claim the FlowFile had
    before the change: it is not written to the log, only used to count claimants. ``mark`` is
    the (key, received-at ms) of a TRANSFER_RECEIVED record, or the (key, stored event bytes,
    runs of lower keys still open) of an OUTBOX record.
    """

    update_type: UpdateType
    flowfile: FlowFile | None
    queue_id: str | None = None
    swap_location: str | None = None
    original_swap_location: str | None = None
    original_claim: ContentClaim | None = None
    mark: tuple[str, int] | None = None

    @classmethod
    def create(cls, flowfile: FlowFile, queue_id: str) -> RepositoryRecord:
        """A FlowFile new to the repository, queued in ``queue_id``."""
        return cls(UpdateType.CREATE, flowfile, queue_id)

    @classmethod
    def update(cls, flowfile: FlowFile, queue_id: str, original_claim: ContentClaim | None) -> RepositoryRecord:
        """A new state of a known FlowFile (``original_claim`` is what it pointed at before)."""
        return cls(UpdateType.UPDATE, flowfile, queue_id, original_claim=original_claim)

    @classmethod
    def delete(cls, flowfile: FlowFile) -> RepositoryRecord:
        """A FlowFile that leaves the repository (dropped, expired, sent away)."""
        return cls(UpdateType.DELETE, flowfile, original_claim=flowfile.content_claim)

    @classmethod
    def transfer_mark(cls, key: str, received_at: int) -> RepositoryRecord:
        """A mark that the FlowFile a peer knows as ``key`` was received (at ``received_at`` ms)."""
        return cls(UpdateType.TRANSFER_RECEIVED, None, mark=(key, received_at))

    @classmethod
    def outbox(cls, key: int, events: list[bytes], still_open: list[int]) -> RepositoryRecord:
        """The provenance events of the transaction (their stored bytes), to be registered once
        it is durable; ``still_open`` is the runs of lower keys still open (see
        ``NodeStorage.commit`` and ``WriteAheadLog.open_outbox_entry``)."""
        return cls(UpdateType.OUTBOX, None, mark=(key, events, still_open))


class _ClaimDecoder:
    """Turns wire claims into claims, sharing one ResourceClaim object per file.

    Thousands of FlowFiles point into the same resource claim; sharing the object saves
    memory and allocation time when a million of them are recovered.
    """

    def __init__(self) -> None:
        self._resources: dict[str, ResourceClaim] = {}

    def __call__(self, wire: Any) -> ContentClaim | None:
        if wire is None:
            return None
        (container, section, identifier), offset, length = wire[0], wire[1], wire[2]
        resource = self._resources.get(identifier)
        if resource is None or resource[0] != container or resource[1] != section:
            if len(self._resources) > 100_000:
                self._resources.clear()
            resource = self._resources[identifier] = _new(ResourceClaim, (container, section, identifier))
        # Version 1 claims have no checksum; the shape, not the header, tells (swap files
        # are read with the current version whatever wrote them).
        return _new(ContentClaim, (resource, offset, length, wire[3] if len(wire) > 3 else None))


# ``tuple.__new__`` builds a NamedTuple without the Python-level checks of ``_make``: a
# million recovered FlowFiles make that difference count.
_new = tuple.__new__


class FlowFileRecordSerde:
    """Encodes repository records as msgpack arrays (serde ``flowfile``, version 2).

    A FlowFile and its claims are tuples, which msgpack writes as arrays as they are:
    ``[kind, [id, uuid, attributes, [[container, section, identifier], offset, length, checksum] | nil,
    entry date, lineage start date, lineage start index, queue date, queue date index,
    penalty expiration], queue, swap location]``; a DELETE is ``[kind, id]``, a SWAP_OUT
    ``[kind, id, queue, swap location]``, a transfer mark ``[kind, key, received-at ms]``, an
    outbox entry ``[kind, key, [event bytes, ...], [first, last, ...]]`` (the runs of lower keys
    still open) and a swap-file record ``[kind, location, former]``.
    The checksum (CRC32 of the content, or nil) came with version 2; version 1 claims have
    three elements and are read with no checksum.
    """

    name = "flowfile"
    version = 2

    def to_wire(self, record: RepositoryRecord) -> Any:
        kind = record[0]
        if kind <= _UPDATE or kind == _SWAP_IN:
            return (kind, record[1], record[2], record[3])
        if kind == _DELETE:
            return (kind, record[1].id)
        if kind == _SWAP_OUT:
            return (kind, record[1].id, record[2], record[3])
        if kind == _TRANSFER_RECEIVED or kind == _OUTBOX:
            return (kind, *record.mark)
        return (kind, record.swap_location, record.original_swap_location)

    def __init__(self) -> None:
        self._decode_claim = _ClaimDecoder()

    def from_wire(self, wire: Any, version: int) -> RepositoryRecord:
        kind = wire[0]
        if kind <= _UPDATE or kind == _SWAP_IN:
            fields = wire[1]
            fields[3] = self._decode_claim(fields[3])
            return _new(RepositoryRecord, (kind, _new(FlowFile, fields), wire[2], wire[3], None, None, None))
        if kind == _DELETE:
            return RepositoryRecord(kind, _Deleted(wire[1]))
        if kind == _SWAP_OUT:
            return RepositoryRecord(kind, _Deleted(wire[1]), wire[2], wire[3])
        if kind == _TRANSFER_RECEIVED:
            return RepositoryRecord(kind, None, mark=(wire[1], wire[2]))
        if kind == _OUTBOX:
            return RepositoryRecord(kind, None, mark=(wire[1], wire[2], wire[3]))
        return RepositoryRecord(kind, None, swap_location=wire[1], original_swap_location=wire[2])

    def record_id(self, record: RepositoryRecord) -> int | None:
        flowfile = record.flowfile
        return flowfile.id if flowfile is not None else None

    def update_type(self, record: RepositoryRecord) -> UpdateType:
        return record.update_type

    def swap_location(self, record: RepositoryRecord) -> str | None:
        return record.swap_location

    def original_swap_location(self, record: RepositoryRecord) -> str | None:
        return record.original_swap_location

    def transfer_mark(self, record: RepositoryRecord) -> tuple[str, int]:
        return record.mark

    def outbox_entry(self, record: RepositoryRecord) -> tuple[int, list[bytes], Sequence[int]]:
        return record.mark


class _Deleted(NamedTuple):
    """Stands in for a FlowFile of which a DELETE or SWAP_OUT record only keeps the id."""

    id: int
