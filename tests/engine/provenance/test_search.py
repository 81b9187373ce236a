"""Every search criterion of a provenance query, with ``inverse``, wildcards, sizes and ``scope``,
on a real repository of several shards; and random queries checked against reading every event."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from engine.flowfile import ContentClaim, ResourceClaim
from engine.provenance import (
    ProvenanceConfig, ProvenanceEvent, ProvenanceEventType as T, ProvenanceQuery, ProvenanceRepository,
)
from engine.provenance.query import matches
from engine.provenance.search import allowed_component_keys, plan_shard
from tests.engine.provenance.conftest import T0, make_event

TYPES = [T.RECEIVE, T.ROUTE, T.SEND, T.CONTENT_MODIFIED, T.DROP]
RELATIONSHIPS = ["success", "failure", None]


def _event(n: int):
    size = (n * 37) % 500
    return ProvenanceEvent(
        TYPES[n % len(TYPES)], T0 + n * 1000, f"UU-{n:04d}", f"Comp-{n % 6}",
        "PutFile" if n % 4 == 0 else "UpdateAttribute",
        parent_uuids=(f"UU-{n - 1:04d}",) if n % 10 == 0 else (),
        previous_attributes={"filename": f"Report-{n % 9}.CSV", "tenant": f"t{n % 4}", "uuid": f"UU-{n:04d}"},
        updated_attributes={"color": f"k{n % 5}"} if n % 3 else {"color": None},
        content_claim=ContentClaim(ResourceClaim("default", 1, "1-1"), 0, size) if n % 7 else None,
        relationship=RELATIONSHIPS[n % 3], details=f"Detail number {n}" if n % 2 else None,
        transit_uri=f"https://host-{n % 3}.example/path/{n}" if n % 5 == 1 else None,
        alternate_identifier=f"urn:alt:{n}" if n % 8 == 0 else None,
        source_queue_id=f"queue-{n % 4}",
    )


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    config = ProvenanceConfig(journal_count=2, indexed_attributes=("tenant",), shard_duration=150,
                              max_storage_time=1e10)
    with ProvenanceRepository(tmp_path_factory.mktemp("prov"), config) as repo:
        events = []
        for start in range(0, 600, 20):
            events += repo.register_events([_event(n) for n in range(start, start + 20)])
            if start % 100 == 80:
                repo.rollover()
        repo.rollover()
        assert repo.stats().shard_count >= 3
        yield repo, events


def expect(events, predicate):
    return sorted((e for e in events if predicate(e)), key=lambda e: -e.event_id)


def every_page(repo, query):
    seen, cursor = [], None
    while True:
        result = repo.query(replace(query, before_event_id=cursor))
        seen += result.events
        if result.next_cursor is None:
            return seen
        cursor = result.next_cursor


def size(event) -> int:
    return event.content_claim.length if event.content_claim else 0


CASES = {
    "uuid ignores case": (dict(flowfile_uuid="uu-0042"), lambda e: "UU-0042" in (e.flowfile_uuid, *e.parent_uuids)),
    "uuid wildcard": (dict(flowfile_uuid="uu-00?2"), lambda e: any(
        u.startswith("UU-00") and u.endswith("2") for u in (e.flowfile_uuid, *e.parent_uuids))),
    "uuid inverse": (dict(flowfile_uuid="UU-0042", inverse={"flowfile_uuid"}),
                     lambda e: "UU-0042" not in (e.flowfile_uuid, *e.parent_uuids)),
    "filename": (dict(filename="report-3.csv"), lambda e: e.attributes["filename"] == "Report-3.CSV"),
    "filename wildcard": (dict(filename="*-[3]*"), lambda e: False),
    "filename star": (dict(filename="Report-*.csv"), lambda e: True),
    "filename inverse wildcard": (dict(filename="*-1.*", inverse={"filename"}),
                                  lambda e: e.attributes["filename"] != "Report-1.CSV"),
    "components": (dict(component_ids={"Comp-1", "comp-4"}), lambda e: e.component_id in ("Comp-1", "Comp-4")),
    "components inverse": (dict(component_ids={"Comp-1"}, inverse={"component_ids"}),
                           lambda e: e.component_id != "Comp-1"),
    "component wildcard": (dict(component_ids={"*-[0-2]", "COMP-?"}), lambda e: True),
    "component types": (dict(component_types={"putfile"}), lambda e: e.component_type == "PutFile"),
    "component types inverse": (dict(component_types={"Put*"}, inverse={"component_types"}),
                                lambda e: e.component_type == "UpdateAttribute"),
    "event types": (dict(event_types={"SEND", "drop"}), lambda e: e.event_type in (T.SEND, T.DROP)),
    "event types wildcard": (dict(event_types={"*_MODIFIED"}), lambda e: e.event_type == T.CONTENT_MODIFIED),
    "event types inverse": (dict(event_types={"SEND"}, inverse={"event_types"}), lambda e: e.event_type != T.SEND),
    "relationship": (dict(relationship="SUCCESS"), lambda e: e.relationship == "success"),
    "relationship inverse": (dict(relationship="success", inverse={"relationship"}),
                             lambda e: e.relationship != "success"),
    "transit uri wildcard": (dict(transit_uri="https://host-1.*"), lambda e: (e.transit_uri or "").startswith(
        "https://host-1.")),
    "alternate identifier": (dict(alternate_identifier="urn:alt:80"), lambda e: e.alternate_identifier == "urn:alt:80"),
    "details wildcard": (dict(details="*number 1?"), lambda e: e.details is not None and len(e.details) == 16
                         and e.details.startswith("Detail number 1")),
    "details inverse": (dict(details="*", inverse={"details"}), lambda e: e.details is None),
    "source queue": (dict(source_queue_id="queue-2"), lambda e: e.source_queue_id == "queue-2"),
    "indexed attribute": (dict(attributes={"tenant": "T1"}), lambda e: e.attributes["tenant"] == "t1"),
    "indexed attribute inverse": (dict(attributes={"tenant": "t1"}, inverse={"attributes.tenant"}),
                                  lambda e: e.attributes["tenant"] != "t1"),
    "attribute wildcard": (dict(attributes={"color": "k[1]"}), lambda e: False),
    "removed attribute is absent": (dict(attributes={"color": "*"}), lambda e: "color" in e.attributes),
    "attribute inverse keeps events without it": (
        dict(attributes={"color": "k1"}, inverse={"attributes.color"}), lambda e: e.attributes.get("color") != "k1"),
    "time range": (dict(start_time=T0 + 100_000, end_time=T0 + 250_000),
                   lambda e: T0 + 100_000 <= e.event_time <= T0 + 250_000),
    "size range": (dict(min_size=100, max_size=200), lambda e: 100 <= size(e) <= 200),
    "no content is size 0": (dict(max_size=0), lambda e: size(e) == 0),
    "scope": (dict(scope={"Comp-2", "Comp-5", "elsewhere"}), lambda e: e.component_id in ("Comp-2", "Comp-5")),
    "scope is exact": (dict(scope={"comp-2"}), lambda e: False),
    "scope and components": (dict(scope={"Comp-2", "Comp-5"}, component_ids={"comp-5", "Comp-1"}),
                             lambda e: e.component_id == "Comp-5"),
    "scope and components inverse": (dict(scope={"Comp-2", "Comp-5"}, component_ids={"comp-5"},
                                          inverse={"component_ids"}), lambda e: e.component_id == "Comp-2"),
    "empty scope": (dict(scope=set()), lambda e: False),
    "combination": (dict(scope={f"Comp-{i}" for i in range(6)}, event_types={"ROUTE", "SEND"},
                         start_time=T0 + 50_000, min_size=50, attributes={"tenant": "t2"},
                         inverse={"details"}, details="*7*"),
                    lambda e: e.event_type in (T.ROUTE, T.SEND) and e.event_time >= T0 + 50_000 and size(e) >= 50
                    and e.attributes["tenant"] == "t2" and "7" not in (e.details or "")),
}


@pytest.mark.parametrize("case", CASES)
def test_each_criterion(loaded, case: str) -> None:
    repo, events = loaded
    criteria, predicate = CASES[case]
    query = ProvenanceQuery(**criteria, limit=25)
    wanted = expect(events, predicate)
    assert repo.query(query).events == wanted[:25]
    assert every_page(repo, query) == wanted


def test_wildcards_match_the_whole_value_and_escape_everything_else(loaded) -> None:
    repo, events = loaded
    assert repo.query(ProvenanceQuery(filename="report-1", limit=1000)).events == []
    assert every_page(repo, ProvenanceQuery(filename="report-1*", limit=50)) == expect(
        events, lambda e: e.attributes["filename"] == "Report-1.CSV")
    assert every_page(repo, ProvenanceQuery(details="detail number 1.", limit=50)) == []


@pytest.mark.parametrize("criteria, message", [
    (dict(inverse={"start_time"}), "'inverse' names 'start_time'"),
    (dict(inverse={"attributes.color"}), "'inverse' names 'attributes.color'"),
    (dict(event_types={"SENT"}), "unknown event type 'SENT'"),
    (dict(min_size="10"), "'min_size' must be a whole number"),
])
def test_bad_criteria_are_refused_with_the_reason(criteria, message) -> None:
    with pytest.raises(ValueError, match=message):
        ProvenanceQuery(**criteria)


def test_from_mapping_reads_the_node_commands_query() -> None:
    query = ProvenanceQuery.from_mapping(
        {"component_ids": ["a", "b"], "event_types": ["SEND"], "attributes": {"tenant": "t1"},
         "inverse": ["attributes.tenant"], "start_time": 5, "details": None}, scope=["a"], limit=7)
    assert query.component_ids == {"a", "b"} and query.event_types == {"SEND"} and query.scope == {"a"}
    assert query.limit == 7 and query.inverse == {"attributes.tenant"} and query.details is None
    with pytest.raises(ValueError, match="unknown query criteria 'colour'"):
        ProvenanceQuery.from_mapping({"colour": "red"})
    with pytest.raises(ValueError, match="'component_ids' must be a list"):
        ProvenanceQuery.from_mapping({"component_ids": "a"})


def test_a_shard_without_the_allowed_components_or_types_is_not_read(loaded) -> None:
    repo, _ = loaded
    shard = repo.shards()[0]
    query = ProvenanceQuery(scope={"nobody"})
    assert plan_shard(query, shard, allowed_component_keys(query.criteria), 10) is None
    query = ProvenanceQuery(event_types={"FORK"})
    assert plan_shard(query, shard, None, 10) is None
    query = ProvenanceQuery(scope={"Comp-1", "nobody"})
    plan = plan_shard(query, shard, allowed_component_keys(query.criteria), 10)
    assert plan is not None and plan.where[0].count(",") == 0, "the key of 'nobody' is left out of the IN list"


def test_random_queries_agree_with_reading_every_event(loaded) -> None:
    repo, events = loaded
    rng = random.Random(15)
    texts = {
        "flowfile_uuid": ["UU-0100", "uu-01*", "*9"], "filename": ["Report-2.CSV", "*-5.csv"],
        "relationship": ["success", "fail*"], "details": ["*1", "Detail number 3?"],
        "source_queue_id": ["queue-1", "QUEUE-?"], "transit_uri": ["*host-2*"],
    }
    for _ in range(150):
        criteria: dict = {}
        inverse = set()
        for name, values in texts.items():
            if rng.random() < 0.15:
                criteria[name] = rng.choice(values)
                if rng.random() < 0.3:
                    inverse.add(name)
        if rng.random() < 0.4:
            criteria["scope"] = {f"Comp-{i}" for i in rng.sample(range(6), rng.randint(1, 5))}
        if rng.random() < 0.3:
            criteria["component_ids"] = {rng.choice(["Comp-0", "comp-3", "*-4", "Comp-?"])}
            if rng.random() < 0.3:
                inverse.add("component_ids")
        if rng.random() < 0.3:
            criteria["event_types"] = set(rng.sample(["SEND", "ROUTE", "DROP", "RECEIVE", "*MODIFIED"], 2))
            if rng.random() < 0.3:
                inverse.add("event_types")
        if rng.random() < 0.3:
            criteria["attributes"] = {rng.choice(["tenant", "color"]): rng.choice(["t1", "k2", "*1"])}
        if rng.random() < 0.3:
            criteria["start_time"] = T0 + rng.randrange(600) * 1000
        if rng.random() < 0.3:
            criteria["end_time"] = T0 + rng.randrange(600) * 1000
        if rng.random() < 0.2:
            criteria["min_size"] = rng.randrange(400)
        query = ProvenanceQuery(**criteria, inverse=inverse, limit=rng.choice([1, 10, 40]))
        wanted = expect(events, lambda e: matches(e, query))
        assert repo.query(query).events == wanted[: query.limit], query
        if rng.random() < 0.2:
            assert every_page(repo, query) == wanted, query


def test_a_wide_scope_on_many_events_reads_few_rows(tmp_path: Path) -> None:
    """A scope of 1,000 components without a component criterion: a shard holding none of them
    is skipped, and in the others the walk stops at the first page."""
    config = ProvenanceConfig(journal_count=2, max_storage_time=1e10, shard_duration=60)
    with ProvenanceRepository(tmp_path, config) as repo:
        for shard in range(3):
            tenant = "b" if shard == 1 else "a"
            repo.register_events([make_event(T.ROUTE, uuid=f"u{shard}-{n}", time=T0 + shard * 100_000 + n,
                                             component=f"{tenant}-{n % 1500}") for n in range(3000)])
            repo.rollover()
        assert repo.stats().shard_count == 3
        scope = {f"a-{n}" for n in range(1000)}
        query = ProvenanceQuery(scope=scope, limit=100)
        keys = allowed_component_keys(query.criteria)
        newest, middle, _ = repo.shards()[::-1]
        assert plan_shard(query, middle, keys, 101) is None
        assert plan_shard(query, newest, keys, 101).hint == "NOT INDEXED"
        result = repo.query(query)
        assert [e.component_id for e in result.events] == [
            f"a-{n % 1500}" for n in range(2999, -1, -1) if n % 1500 < 1000][:100]


def test_events_without_the_text_a_pattern_needs_are_not_decoded(tmp_path: Path, monkeypatch) -> None:
    from engine.provenance import shard as shard_module

    config = ProvenanceConfig(journal_count=2, max_storage_time=1e10)
    with ProvenanceRepository(tmp_path, config) as repo:
        repo.register_events([make_event(T.ROUTE, uuid=f"u{n}", filename=f"file-{n}.txt", time=T0 + n)
                              for n in range(2000)])
        repo.register_events([make_event(T.ROUTE, uuid="kelvin", filename="\u212aELVIN-1.txt", time=T0 + 5000)])
        repo.rollover()
        decoded = []
        decode = shard_module.codec.event_from_wire
        monkeypatch.setattr(shard_module.codec, "event_from_wire",
                            lambda wire, event_id: decoded.append(event_id) or decode(wire, event_id))
        found = repo.query(ProvenanceQuery(filename="*-123?.TXT", limit=100)).events
        assert sorted(e.attributes["filename"] for e in found) == [f"file-{n}.txt" for n in range(1230, 1240)]
        assert len(decoded) < 100, "only events holding '-123' were decoded"
        assert [e.flowfile_uuid for e in repo.query(ProvenanceQuery(filename="kelvin-1*")).events] == ["kelvin"], \
            "the KELVIN SIGN lower-cases to k: the text needed is cut there"
