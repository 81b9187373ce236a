"""Provenance searches: the query, its result page, and how a query maps onto a shard's index.

Every query form except non-indexed attributes is answered by a shard's SQLite indexes: uuid
(``terms``, which matches an event naming the uuid as its FlowFile, a parent or a child, as
NiFi's index does), filename, component + time, event type + time, time range, and the
attributes named in ``indexed_attributes``. Uuids, filenames, components and attribute values
are indexed by 64-bit keys (``codec.index_key``), so every event found is checked against the
query once read (``matches``); a key shared by two texts costs a read, never a wrong result.
An attribute that was not indexed when the shard was written is checked on the events
themselves: candidates matching the rest of the query are read and decompressed, newest first,
until a page is full, so its cost grows with the number of candidates scanned, not with the
number of matches. Combine it with an indexed condition to keep that number small.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from engine.provenance.codec import COMPONENT_KEY, FILENAME_KEY, UUID_KEY, attribute_key, index_key
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType

__all__ = ["ProvenanceQuery", "QueryResult", "shard_conditions", "matches", "mentions", "overlaps", "page"]


@dataclass(frozen=True)
class ProvenanceQuery:
    """A search; every given criterion must hold. Times are ms since the epoch, both inclusive.

    Results come newest first (descending event id), at most ``limit`` per page; pass a
    result's ``next_cursor`` as ``before_event_id`` to get the following page.
    """

    flowfile_uuid: str | None = None
    filename: str | None = None
    component_id: str | None = None
    event_type: ProvenanceEventType | None = None
    start_time: int | None = None
    end_time: int | None = None
    attributes: Mapping[str, str] = field(default_factory=dict)
    limit: int = 100
    before_event_id: int | None = None

    def __post_init__(self) -> None:
        if self.limit <= 0:
            raise ValueError(f"query limit must be positive, got {self.limit}")


@dataclass(frozen=True)
class QueryResult:
    """One page of matching events, newest first; ``next_cursor`` is None on the last page."""

    events: list[ProvenanceEvent]
    next_cursor: int | None


def shard_conditions(
    query: ProvenanceQuery, indexed_attributes: frozenset[str]
) -> tuple[list[str], list[Any], dict[str, str]]:
    """SQL conditions on ``events`` for ``query``, their parameters, and the attributes left to check by reading."""
    where: list[str] = []
    params: list[Any] = []
    term = "id IN (SELECT event_id FROM terms WHERE key = ?)"
    if query.flowfile_uuid is not None:
        where.append(term)
        params.append(index_key(UUID_KEY, query.flowfile_uuid))
    if query.filename is not None:
        where.append(term)
        params.append(index_key(FILENAME_KEY, query.filename))
    if query.component_id is not None:
        where.append("component = ?")
        params.append(index_key(COMPONENT_KEY, query.component_id))
    if query.event_type is not None:
        where.append("type = ?")
        params.append(ProvenanceEventType(query.event_type).value)
    if query.start_time is not None:
        where.append("time >= ?")
        params.append(query.start_time)
    if query.end_time is not None:
        where.append("time <= ?")
        params.append(query.end_time)
    residual: dict[str, str] = {}
    for name, value in query.attributes.items():
        if name in indexed_attributes:
            where.append(term)
            params.append(attribute_key(name, value))
        else:
            residual[name] = value
    return where, params, residual


def matches(event: ProvenanceEvent, query: ProvenanceQuery) -> bool:
    """Whether ``event`` meets the criteria an index can only narrow down: uuid, filename, component, attributes."""
    if query.flowfile_uuid is not None and not mentions(event, query.flowfile_uuid):
        return False
    if query.component_id is not None and event.component_id != query.component_id:
        return False
    if query.filename is None and not query.attributes:
        return True
    attributes = event.attributes
    if query.filename is not None and attributes.get("filename") != query.filename:
        return False
    return all(attributes.get(name) == value for name, value in query.attributes.items())


def mentions(event: ProvenanceEvent, uuid: str) -> bool:
    """Whether ``event`` names ``uuid`` as its FlowFile, a parent or a child."""
    return event.flowfile_uuid == uuid or uuid in event.parent_uuids or uuid in event.child_uuids


def overlaps(query: ProvenanceQuery, min_time: int, max_time: int) -> bool:
    """Whether a shard whose events span ``[min_time, max_time]`` can match the query's time range."""
    if query.start_time is not None and max_time < query.start_time:
        return False
    return not (query.end_time is not None and min_time > query.end_time)


def page(events: Sequence[ProvenanceEvent], limit: int) -> QueryResult:
    """The first ``limit`` of ``events`` (sorted newest first), with a cursor if more remain."""
    if len(events) > limit:
        kept = list(events[:limit])
        return QueryResult(kept, kept[-1].event_id)
    return QueryResult(list(events), None)
