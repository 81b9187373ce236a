"""How a provenance query is answered from the shards' SQLite indexes.

Shards are read newest first until a page is full. For each shard the query becomes SQL
conditions on what the index holds:

- ``terms``: a FlowFile uuid (its own, a parent's or a child's), a filename and the values of
  the attributes the shard indexes, each when given as a plain value that does not exclude;
- component keys ``IN`` the components the query allows: those of ``scope`` that its
  component criterion lets through, else the plain values of that criterion;
- event types ``IN`` the types it allows (wildcards and ``inverse`` resolve to a set of types);
- the time range.

What SQL cannot decide — wildcards and ``inverse`` on those fields, the other text fields,
component types, sizes, attributes the shard does not index — is checked on the events read
(``query.matches``), in growing batches, so the cost of such a criterion grows with the
candidates read; a candidate whose stored bytes lack a piece of text every match holds
(``Criteria.required``) is not even decoded.

The shard's counts of events per component key and per type (``Shard.components``,
``Shard.types``) let a shard holding none of the allowed components or types be skipped without
a read, trim the component list to the keys the shard has, and choose how SQLite walks the
shard when no term narrows it: backwards through the table, stopping as soon as the page is
full (best when matches are dense), or through the component, type or time index, gathering
every match and sorting it (best when they are rare). The estimate assumes the criteria are
independent and events evenly spread over the shard's time span.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from engine.provenance.codec import FILENAME_KEY, UUID_KEY, attribute_key, component_key, term_key
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType
from engine.provenance.query import Criteria, ProvenanceQuery, QueryResult, matches, overlaps, page
from engine.provenance.shard import Shard

__all__ = ["ShardPlan", "allowed_component_keys", "plan_shard", "run_query"]

_ALL_TYPES = frozenset(t.value for t in ProvenanceEventType)
_SCAN = "NOT INDEXED"
# Gathering through an index costs a sort on top of the reads.
_INDEX_WEIGHT = 1.5
_MAX_BATCH = 65536


@dataclass(frozen=True)
class ShardPlan:
    """The SQL of one query over one shard: conditions, parameters and how to walk the table.

    ``residual`` is True when events found may still fail the query (criteria SQL cannot
    decide), so candidates are read in larger batches.
    """

    where: list[str]
    params: list[Any]
    hint: str
    residual: bool


def allowed_component_keys(criteria: Criteria) -> frozenset[int] | None:
    """The index keys of the components whose events the query may return, or None for any."""
    if criteria.scope is not None:
        return frozenset(component_key(c) for c in criteria.scope if criteria.component_allowed(c))
    components = criteria.components
    if components is None or components[1] or any(pattern.wildcard for pattern in components[0]):
        return None
    return frozenset(component_key(pattern.text) for pattern in components[0])


def _decided_by_sql(criteria: Criteria, keys: frozenset[int] | None, indexed: frozenset[str]) -> bool:
    """Whether every event the SQL finds meets the query (but for index key collisions)."""
    if criteria.fields or criteria.component_types or criteria.min_size is not None or criteria.max_size is not None:
        return False
    if criteria.components is not None and keys is None:
        return False
    for text in (criteria.uuid, criteria.filename):
        if text is not None and (text[1] or text[0].wildcard):
            return False
    return all(name in indexed and not inverse and not pattern.wildcard
               for name, pattern, inverse in criteria.attributes)


def plan_shard(query: ProvenanceQuery, shard: Shard, keys: frozenset[int] | None, wanted: int) -> ShardPlan | None:
    """The plan of ``query`` over ``shard``, or None when the shard can hold no match.

    ``keys`` comes from ``allowed_component_keys``; ``wanted`` is how many matches are still
    needed.
    """
    criteria = query.criteria
    types = criteria.event_types if criteria.event_types != _ALL_TYPES else None
    total = shard.count
    if not total or (types is not None and not types) or (keys is not None and not keys):
        return None
    where: list[str] = []
    params: list[Any] = []
    term = "id IN (SELECT event_id FROM terms WHERE key = ?)"
    for domain, text in ((UUID_KEY, criteria.uuid), (FILENAME_KEY, criteria.filename)):
        if text is not None and not text[1] and not text[0].wildcard:
            where.append(term)
            params.append(term_key(domain, text[0].text))
    for name, pattern, inverse in criteria.attributes:
        if name in shard.indexed_attributes and not inverse and not pattern.wildcard:
            where.append(term)
            params.append(attribute_key(name, pattern.text))
    with_terms = bool(where)
    counts, type_counts = shard.components, shard.types
    component_rows = type_rows = total
    if keys is not None:
        present = keys & counts.keys()
        if not present:
            return None
        # A term finds few events: checking them against the components beats a long IN list.
        if not with_terms:
            present = sorted(present)
            component_rows = sum(counts[key] for key in present)
            # Keys are integers and types a closed set of names: inlined, they need no parameters.
            where.append(f"component IN ({','.join(map(str, present))})")
    if types is not None:
        type_rows = sum(type_counts.get(name, 0) for name in types)
        if not type_rows:
            return None
        where.append(f"type IN ({','.join(repr(name) for name in sorted(types))})")
    if criteria.start_time is not None:
        where.append("time >= ?")
        params.append(criteria.start_time)
    if criteria.end_time is not None:
        where.append("time <= ?")
        params.append(criteria.end_time)
    residual = with_terms and keys is not None or not _decided_by_sql(criteria, keys, shard.indexed_attributes)
    hint = "" if with_terms else _choose_walk(criteria, shard, keys is not None, types is not None,
                                              component_rows, type_rows, wanted * (4 if residual else 1))
    return ShardPlan(where, params, hint, residual)


def _choose_walk(criteria: Criteria, shard: Shard, by_component: bool, by_type: bool, component_rows: int,
                 type_rows: int, wanted: int) -> str:
    """The cheapest way through ``shard`` by the estimated number of rows each one visits."""
    total = shard.count
    span = shard.max_time - shard.min_time + 1
    low = shard.min_time if criteria.start_time is None else max(shard.min_time, criteria.start_time)
    high = shard.max_time if criteria.end_time is None else min(shard.max_time, criteria.end_time)
    in_range = max(0.0, (high - low + 1) / span)
    newer = total * (shard.max_time - high) / span
    density = component_rows / total * type_rows / total
    costs = {_SCAN: newer + min(total * in_range, wanted / max(density, 1e-12))}
    if by_component:
        costs["INDEXED BY events_component"] = _INDEX_WEIGHT * component_rows * in_range
    if by_type:
        costs["INDEXED BY events_type"] = _INDEX_WEIGHT * type_rows * in_range
    if criteria.start_time is not None or criteria.end_time is not None:
        costs["INDEXED BY events_time"] = _INDEX_WEIGHT * total * in_range
    return min(costs, key=costs.__getitem__)


def run_query(shards: Iterable[Shard], query: ProvenanceQuery) -> QueryResult:
    """Events of ``shards`` (newest shard first) matching ``query``, newest first, one page."""
    wanted = query.limit + 1
    found: list[ProvenanceEvent] = []
    keys = allowed_component_keys(query.criteria)
    for shard in shards:
        if len(found) >= wanted:
            break
        if query.before_event_id is not None and shard.min_id >= query.before_event_id:
            continue
        if not overlaps(query, shard.min_time, shard.max_time):
            continue
        plan = plan_shard(query, shard, keys, wanted - len(found))
        if plan is None:
            continue
        _read_shard(shard, plan, query, found, wanted)
    return page(found, query.limit)


def _read_shard(shard: Shard, plan: ShardPlan, query: ProvenanceQuery, found: list[ProvenanceEvent],
                wanted: int) -> None:
    before = query.before_event_id
    # A long search makes few batches (an index walk gathers and sorts every match below the
    # cursor for each one); the work of the last one is at most that of all those before.
    growth = 1
    holding = query.criteria.required if plan.residual else None
    while len(found) < wanted:
        missing = wanted - len(found)
        batch = min(max(missing * 4, 256) * growth, _MAX_BATCH) if plan.residual else missing
        growth *= 4
        ids = shard.select_ids(plan.where, plan.params, before, batch, plan.hint)
        if not ids:
            return
        events = shard.read_events(ids, holding)
        for event_id in sorted(events, reverse=True):
            event = events[event_id]
            if matches(event, query):
                found.append(event)
                if len(found) >= wanted:
                    return
        if len(ids) < batch:
            return
        before = ids[-1]
