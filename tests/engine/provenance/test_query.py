from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from engine.provenance import ProvenanceConfig, ProvenanceEventType, ProvenanceQuery, ProvenanceRepository
from tests.engine.provenance.conftest import T0, make_event

TYPES = [ProvenanceEventType.RECEIVE, ProvenanceEventType.ROUTE, ProvenanceEventType.SEND]


def populate(repo: ProvenanceRepository, count: int, *, batch: int = 10, step: int = 1000, roll_every: int = 0):
    """``count`` events: uuid u<n>, component c<n%5>, type by n%3, filename f<n%7>, tenant t<n%4>, color k<n%6>."""
    events = []
    for start in range(0, count, batch):
        chunk = []
        for n in range(start, min(start + batch, count)):
            chunk.append(
                make_event(
                    TYPES[n % 3],
                    uuid=f"u{n}",
                    time=T0 + n * step,
                    component=f"c{n % 5}",
                    previous_attributes={"filename": f"f{n % 7}", "tenant": f"t{n % 4}"},
                    updated_attributes={"color": f"k{n % 6}"},
                )
            )
        events.extend(repo.register_events(chunk))
        if roll_every and len(events) % roll_every == 0:
            repo.rollover()
    return events


@pytest.fixture
def loaded(tmp_path: Path):
    config = ProvenanceConfig(journal_count=3, indexed_attributes=("tenant",), shard_duration=200)
    with ProvenanceRepository(tmp_path, config) as repo:
        events = populate(repo, 300, roll_every=50)
        repo.rollover()
        assert repo.stats().shard_count > 1
        yield repo, events


def expect(events, predicate):
    return sorted((e for e in events if predicate(e)), key=lambda e: -e.event_id)


def all_pages(repo: ProvenanceRepository, query: ProvenanceQuery):
    seen = []
    cursor = None
    while True:
        result = repo.query(replace(query, before_event_id=cursor))
        seen.extend(result.events)
        if result.next_cursor is None:
            return seen
        assert len(result.events) == query.limit
        cursor = result.next_cursor


CASES = {
    "uuid": (ProvenanceQuery(flowfile_uuid="u17"), lambda e: e.flowfile_uuid == "u17"),
    "filename": (ProvenanceQuery(filename="f3"), lambda e: e.attributes["filename"] == "f3"),
    "component": (ProvenanceQuery(component_id="c2"), lambda e: e.component_id == "c2"),
    "event type": (ProvenanceQuery(event_type=ProvenanceEventType.SEND), lambda e: e.event_type == "SEND"),
    "time range": (
        ProvenanceQuery(start_time=T0 + 50_000, end_time=T0 + 250_000),
        lambda e: T0 + 50_000 <= e.event_time <= T0 + 250_000,
    ),
    "indexed attribute": (ProvenanceQuery(attributes={"tenant": "t1"}), lambda e: e.attributes["tenant"] == "t1"),
    "other attribute": (ProvenanceQuery(attributes={"color": "k5"}), lambda e: e.attributes["color"] == "k5"),
    "combination": (
        ProvenanceQuery(
            component_id="c1", event_type=ProvenanceEventType.RECEIVE, start_time=T0 + 10_000,
            end_time=T0 + 280_000, attributes={"tenant": "t0", "color": "k0"},
        ),
        lambda e: e.component_id == "c1" and e.event_type == "RECEIVE" and T0 + 10_000 <= e.event_time <= T0 + 280_000
        and e.attributes["tenant"] == "t0" and e.attributes["color"] == "k0",
    ),
    "everything": (ProvenanceQuery(), lambda e: True),
}


@pytest.mark.parametrize("case", CASES)
def test_query_forms_newest_first(loaded, case: str) -> None:
    repo, events = loaded
    query, predicate = CASES[case]
    wanted = expect(events, predicate)
    assert wanted
    result = repo.query(query)
    assert result.events == wanted[: query.limit]
    assert (result.next_cursor is None) == (len(wanted) <= query.limit)


@pytest.mark.parametrize("case", ["component", "other attribute", "everything", "time range"])
def test_paging_covers_every_result_once(loaded, case: str) -> None:
    repo, events = loaded
    query, predicate = CASES[case]
    query = replace(query, limit=7)
    assert all_pages(repo, query) == expect(events, predicate)


def test_uuid_query_matches_parents_and_children(repo: ProvenanceRepository) -> None:
    fork = repo.register_events(
        [make_event(ProvenanceEventType.FORK, uuid="p", parent_uuids=("p",), child_uuids=("c1", "c2"))]
    )
    other = repo.register_events([make_event(uuid="c1")])
    repo.rollover()
    assert repo.query(ProvenanceQuery(flowfile_uuid="c1")).events == other + fork
    assert repo.query(ProvenanceQuery(flowfile_uuid="nope")).events == []


def test_get_event(loaded) -> None:
    repo, events = loaded
    assert repo.get_event(events[123].event_id) == events[123]
    assert repo.get_event(10_000) is None
    assert repo.get_events([events[5].event_id, 99_999, events[1].event_id]) == [events[5], events[1]]


@pytest.mark.slow
def test_hundred_thousand_events_over_several_shards(tmp_path: Path) -> None:
    count = 100_000
    config = ProvenanceConfig(
        indexed_attributes=("tenant",), shard_duration=3600, rollover_size=8 << 20, max_storage_time=1e10
    )
    with ProvenanceRepository(tmp_path, config) as repo:
        repo.start()
        events = populate(repo, count, step=200, roll_every=10_000)
        repo.rollover()
        stats = repo.stats()
        assert stats.event_count == count and stats.shard_count >= 5
        for case, (query, predicate) in CASES.items():
            if case == "uuid":
                query, predicate = ProvenanceQuery(flowfile_uuid="u54321"), lambda e: e.flowfile_uuid == "u54321"
            start = time.perf_counter()
            result = repo.query(query)
            elapsed = time.perf_counter() - start
            assert result.events == expect(events, predicate)[: query.limit], case
            assert elapsed < 2.0, (case, elapsed)
        # A later page deep in the past, across shard boundaries.
        query = ProvenanceQuery(component_id="c3", before_event_id=20_000, limit=500)
        wanted = expect(events, lambda e: e.component_id == "c3" and e.event_id < 20_000)[:500]
        assert repo.query(query).events == wanted


@pytest.fixture
def colliding_keys(monkeypatch):
    """Every text gets one of two index keys, so lookups find many events that do not match."""
    from engine.provenance import codec

    def index_key(domain: bytes, text: str) -> int:
        return len(text) % 2

    caches = (codec.component_key, codec._component_field, codec._term)
    for cache in caches:
        cache.cache_clear()
    monkeypatch.setattr(codec, "index_key", index_key)
    yield
    for cache in caches:
        cache.cache_clear()


@pytest.mark.parametrize("case", ["uuid", "filename", "component", "indexed attribute", "combination"])
def test_index_key_collisions_are_filtered_out(tmp_path: Path, colliding_keys, case: str) -> None:
    config = ProvenanceConfig(journal_count=2, indexed_attributes=("tenant",))
    with ProvenanceRepository(tmp_path, config) as repo:
        events = populate(repo, 120, roll_every=40)
        repo.rollover()
        query, predicate = CASES[case]
        assert all_pages(repo, replace(query, limit=5)) == expect(events, predicate)
