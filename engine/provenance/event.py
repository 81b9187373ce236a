"""Provenance event types and the event record."""

from __future__ import annotations

from enum import Enum
from typing import Mapping, NamedTuple, Sequence

from engine.flowfile import ContentClaim

__all__ = ["ProvenanceEventType", "ProvenanceEvent", "CREATION_TYPES"]


class ProvenanceEventType(str, Enum):
    """What happened to a FlowFile (NiFi's ``ProvenanceEventType``)."""

    CREATE = "CREATE"
    RECEIVE = "RECEIVE"
    FETCH = "FETCH"
    SEND = "SEND"
    UPLOAD = "UPLOAD"
    DOWNLOAD = "DOWNLOAD"
    DROP = "DROP"
    EXPIRE = "EXPIRE"
    CLONE = "CLONE"
    FORK = "FORK"
    JOIN = "JOIN"
    ROUTE = "ROUTE"
    CONTENT_MODIFIED = "CONTENT_MODIFIED"
    ATTRIBUTES_MODIFIED = "ATTRIBUTES_MODIFIED"
    ASSOCIATE = "ASSOCIATE"
    ADDINFO = "ADDINFO"
    REMOTE_INVOCATION = "REMOTE_INVOCATION"
    REPLAY = "REPLAY"
    UNKNOWN = "UNKNOWN"


#: Event types that bring a FlowFile into existence; a FlowFile created in a session without
#: one of these gets a CREATE event at commit.
CREATION_TYPES = frozenset(
    {
        ProvenanceEventType.CREATE,
        ProvenanceEventType.RECEIVE,
        ProvenanceEventType.FETCH,
        ProvenanceEventType.FORK,
        ProvenanceEventType.CLONE,
        ProvenanceEventType.JOIN,
        ProvenanceEventType.REPLAY,
    }
)


class ProvenanceEvent(NamedTuple):
    """One provenance event, a snapshot of a FlowFile at a moment of its life.

    ``event_id`` is -1 until the repository registers the event and gives it the next id of the
    node's monotonic sequence. Times are milliseconds since the epoch; ``duration`` is in
    milliseconds (-1 when unknown). ``previous_attributes`` holds every attribute before the
    event; ``updated_attributes`` holds those the event set, with ``None`` for removed ones.
    """

    event_type: ProvenanceEventType
    event_time: int
    flowfile_uuid: str
    component_id: str
    component_type: str
    entry_date: int = 0
    lineage_start_date: int = 0
    parent_uuids: Sequence[str] = ()
    child_uuids: Sequence[str] = ()
    previous_attributes: Mapping[str, str] = {}
    updated_attributes: Mapping[str, str | None] = {}
    previous_content_claim: ContentClaim | None = None
    content_claim: ContentClaim | None = None
    relationship: str | None = None
    details: str | None = None
    transit_uri: str | None = None
    source_system_flowfile_id: str | None = None
    alternate_identifier: str | None = None
    source_queue_id: str | None = None
    duration: int = -1
    event_id: int = -1

    @property
    def attributes(self) -> dict[str, str]:
        """The FlowFile's attributes as of this event (previous ones with the updates applied)."""
        merged = dict(self.previous_attributes)
        for key, value in self.updated_attributes.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return merged

    @property
    def file_size(self) -> int:
        """Size of the FlowFile's content as of this event."""
        return self.content_claim.length if self.content_claim is not None else 0

    @property
    def previous_file_size(self) -> int:
        """Size of the content before the event (0 when there was none)."""
        claim = self.previous_content_claim
        return claim.length if claim is not None else 0
