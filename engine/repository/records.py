"""Repository records: what one session commit (or swap) tells the FlowFile repository."""

from __future__ import annotations

from typing import Any, NamedTuple

from engine.flowfile import ContentClaim, FlowFile, ResourceClaim
from engine.wal.serde import UpdateType

__all__ = ["RepositoryRecord", "FlowFileRecordSerde"]


class RepositoryRecord(NamedTuple):
    """One change to the FlowFile repository.

    ``flowfile`` is the FlowFile's full new state (None for swap-file records);
    ``queue_id`` the queue it sits in. ``original_claim`` is the content claim the FlowFile had
    before the change: it is not written to the log, only used to count claimants.
    """

    update_type: UpdateType
    flowfile: FlowFile | None
    queue_id: str | None = None
    swap_location: str | None = None
    original_swap_location: str | None = None
    original_claim: ContentClaim | None = None

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


def _claim_to_wire(claim: ContentClaim | None) -> Any:
    if claim is None:
        return None
    resource = claim.resource_claim
    return (resource.container, resource.section, resource.identifier, claim.offset, claim.length)


def _claim_from_wire(wire: Any) -> ContentClaim | None:
    if wire is None:
        return None
    container, section, identifier, offset, length = wire
    return ContentClaim(ResourceClaim(container, section, identifier), offset, length)


class FlowFileRecordSerde:
    """Encodes repository records as compact msgpack arrays (serde ``flowfile``, version 1)."""

    name = "flowfile"
    version = 1

    def to_wire(self, record: RepositoryRecord) -> Any:
        kind = record.update_type
        flowfile = record.flowfile
        if kind == UpdateType.DELETE:
            return (kind, flowfile.id)
        if kind in (UpdateType.SWAP_FILE_DELETED, UpdateType.SWAP_FILE_RENAMED):
            return (kind, record.swap_location, record.original_swap_location)
        if kind == UpdateType.SWAP_OUT:
            return (kind, flowfile.id, record.queue_id, record.swap_location)
        return (
            kind,
            flowfile.id,
            record.queue_id,
            record.swap_location,
            flowfile.uuid,
            flowfile.attributes,
            _claim_to_wire(flowfile.content_claim),
            flowfile.entry_date,
            flowfile.lineage_start_date,
            flowfile.lineage_start_index,
            flowfile.last_queue_date,
            flowfile.queue_date_index,
            flowfile.penalty_expiration,
        )

    def from_wire(self, wire: Any, version: int) -> RepositoryRecord:
        kind = UpdateType(wire[0])
        if kind == UpdateType.DELETE:
            return RepositoryRecord(kind, _Deleted(wire[1]))
        if kind in (UpdateType.SWAP_FILE_DELETED, UpdateType.SWAP_FILE_RENAMED):
            return RepositoryRecord(kind, None, swap_location=wire[1], original_swap_location=wire[2])
        if kind == UpdateType.SWAP_OUT:
            return RepositoryRecord(kind, _Deleted(wire[1]), wire[2], wire[3])
        (_, ff_id, queue_id, swap_location, uuid, attributes, claim, entry, lineage, lineage_index,
         queued, queue_index, penalty) = wire
        flowfile = FlowFile(
            ff_id, uuid, attributes, _claim_from_wire(claim), entry, lineage, lineage_index, queued, queue_index, penalty
        )
        return RepositoryRecord(kind, flowfile, queue_id, swap_location)

    def record_id(self, record: RepositoryRecord) -> int | None:
        flowfile = record.flowfile
        return flowfile.id if flowfile is not None else None

    def update_type(self, record: RepositoryRecord) -> UpdateType:
        return record.update_type

    def swap_location(self, record: RepositoryRecord) -> str | None:
        return record.swap_location

    def original_swap_location(self, record: RepositoryRecord) -> str | None:
        return record.original_swap_location


class _Deleted(NamedTuple):
    """Stands in for a FlowFile of which a DELETE or SWAP_OUT record only keeps the id."""

    id: int
