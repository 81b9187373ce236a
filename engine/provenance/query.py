"""Provenance searches: the query, its result page, and how a query maps onto a shard's index.

Every query form except non-indexed attributes is answered by a shard's SQLite indexes: uuid
(``links``, which matches an event naming the uuid as its FlowFile, a parent or a child, as
NiFi's index does), filename, component + time, event type + time, time range, and the
attributes named in ``indexed_attributes``. An attribute that was not indexed when the shard
was written is checked on the events themselves: candidates matching the rest of the query are
read and decompressed, newest first, until a page is full, so its cost grows with the number
of candidates scanned, not with the number of matches. Combine it with an indexed condition to
keep that number small.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from engine.provenance.event import ProvenanceEvent, ProvenanceEventType

__all__ = ["ProvenanceQuery", "QueryResult", "shard_conditions", "matches_attributes", "overlaps", "page"]


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
    if query.flowfile_uuid is not None:
        where.append("id IN (SELECT event_id FROM links WHERE uuid = ?)")
        params.append(query.flowfile_uuid)
    if query.filename is not None:
        where.append("filename = ?")
        params.append(query.filename)
    if query.component_id is not None:
        where.append("component = ?")
        params.append(query.component_id)
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
            where.append("id IN (SELECT event_id FROM attrs WHERE name = ? AND value = ?)")
            params.extend((name, value))
        else:
            residual[name] = value
    return where, params, residual


def matches_attributes(event: ProvenanceEvent, wanted: Mapping[str, str]) -> bool:
    """True when the event's attributes hold every ``wanted`` value."""
    attributes = event.attributes
    return all(attributes.get(name) == value for name, value in wanted.items())


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
