from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from engine.provenance import (
    ProvenanceConfig,
    ProvenanceEvent,
    ProvenanceEventType,
    ProvenanceQuery,
    ProvenanceRepository,
)
from engine.provenance.journal import MAGIC
from tests.engine.provenance.conftest import T0, claim, make_event


def full_event(event_type: ProvenanceEventType, n: int) -> ProvenanceEvent:
    return ProvenanceEvent(
        event_type,
        T0 + n,
        f"uuid-{n}",
        f"comp-{n}",
        "UpdateAttribute",
        entry_date=T0 - 10,
        lineage_start_date=T0 - 20,
        parent_uuids=(f"parent-{n}-a", f"parent-{n}-b"),
        child_uuids=(f"child-{n}",),
        previous_attributes={"filename": f"f{n}.txt", "path": "./", "ünïcode": "välue"},
        updated_attributes={"new": "yes", "path": None},
        previous_content_claim=claim("prev", 5, 7),
        content_claim=claim("cur", 12, 99),
        relationship="success",
        details="some details",
        transit_uri="http://example/x",
        source_system_flowfile_id="src-1",
        alternate_identifier="alt-1",
        source_queue_id="queue-1",
        duration=42,
    )


def test_every_event_type_round_trips_every_field(repo: ProvenanceRepository) -> None:
    events = [full_event(t, n) for n, t in enumerate(ProvenanceEventType)]
    registered = repo.register_events(events)
    assert [e.event_id for e in registered] == list(range(1, len(events) + 1))
    assert [e._replace(event_id=-1) for e in registered] == events
    repo.rollover()
    stored = repo.get_events([e.event_id for e in registered])
    assert stored == registered
    assert stored[0].attributes == {"filename": "f0.txt", "ünïcode": "välue", "new": "yes"}


def test_events_are_searchable_after_rollover_and_journals_removed(repo: ProvenanceRepository) -> None:
    [event] = repo.register_events([make_event(uuid="abc")])
    assert repo.query(ProvenanceQuery(flowfile_uuid="abc")).events == []
    assert repo.stats().pending_journal_events == 1
    assert repo.rollover() == 1
    assert repo.query(ProvenanceQuery(flowfile_uuid="abc")).events == [event]
    assert list((repo.directory / "journals").glob("*.journal.*")) == [
        p for p in (repo.directory / "journals").glob("*.journal.*") if p.name.startswith(f"{event.event_id + 1}.")
    ]
    stats = repo.stats()
    assert (stats.pending_journal_events, stats.event_count, stats.shard_count, stats.max_event_id) == (0, 1, 1, 1)


def test_an_event_is_found_by_its_id_before_rollover(repo: ProvenanceRepository) -> None:
    first, second = repo.register_events([make_event(uuid="one"), full_event(ProvenanceEventType.REPLAY, 1)])
    assert repo.get_events([second.event_id, 999, first.event_id]) == [second, first]
    assert repo.query(ProvenanceQuery(flowfile_uuid="one")).events == [], "searches wait for the rollover"
    repo.rollover()
    assert repo.get_events([first.event_id, second.event_id]) == [first, second]


def test_size_triggered_rollover(tmp_path: Path) -> None:
    config = ProvenanceConfig(journal_count=2, rollover_size=4096)
    with ProvenanceRepository(tmp_path, config) as repo:
        for _ in range(50):
            repo.register_events([make_event() for _ in range(5)])
        assert repo.stats().event_count > 0


def test_ids_are_monotonic_across_restarts(tmp_path: Path, config: ProvenanceConfig) -> None:
    with ProvenanceRepository(tmp_path, config) as repo:
        first = repo.register_events([make_event() for _ in range(3)])
    with ProvenanceRepository(tmp_path, config) as repo:
        second = repo.register_events([make_event()])
        assert second[0].event_id == first[-1].event_id + 1
        # Retention deleting every shard must not reset the sequence.
        repo.rollover()
        repo.run_maintenance(now=T0 + int(config.max_storage_time * 1000) + 10_000)
        assert repo.stats().shard_count == 0
    with ProvenanceRepository(tmp_path, config) as repo:
        assert repo.register_events([make_event()])[0].event_id == second[0].event_id + 1


def test_append_events_gives_the_batch_the_ids_register_events_would(tmp_path: Path, config: ProvenanceConfig) -> None:
    with ProvenanceRepository(tmp_path, config) as repo:
        assert repo.append_events([make_event(uuid="a"), make_event(uuid="b")]) == 1
        assert repo.register_events([make_event(uuid="c")])[0].event_id == 3
        repo.rollover()
        assert [repo.get_event(i).flowfile_uuid for i in (1, 2, 3)] == ["a", "b", "c"]


def simulate_crash(repo: ProvenanceRepository) -> None:
    """Drop the repository without rolling over, as a killed process would."""
    for journal in repo._generation.journals:
        journal.close()
    for shard in repo._shards:
        shard.close()


def test_leftover_journals_rolled_over_on_reopen(tmp_path: Path, config: ProvenanceConfig) -> None:
    repo = ProvenanceRepository(tmp_path, config).open()
    registered = repo.register_events([make_event(uuid=f"u{i}") for i in range(40)])
    simulate_crash(repo)
    with ProvenanceRepository(tmp_path, config) as reopened:
        assert reopened.stats().event_count == 40
        assert reopened.get_events([e.event_id for e in registered]) == registered
        assert reopened.register_events([make_event()])[0].event_id == 41


def test_rollover_repeated_after_crash_does_not_duplicate(tmp_path: Path, config: ProvenanceConfig) -> None:
    repo = ProvenanceRepository(tmp_path, config).open()
    registered = repo.register_events([make_event(uuid=f"u{i}") for i in range(30)])
    journals = sorted((tmp_path / "journals").glob("*.journal.*"))
    saved = {path: path.read_bytes() for path in journals}
    repo.rollover()
    # Crash after the shard committed but before the journals were deleted.
    for path, data in saved.items():
        path.write_bytes(data)
    simulate_crash(repo)
    with ProvenanceRepository(tmp_path, config) as reopened:
        assert reopened.stats().event_count == 30
        result = reopened.query(ProvenanceQuery(limit=1000))
        assert [e.event_id for e in result.events] == list(range(30, 0, -1))
        assert sorted(result.events, key=lambda e: e.event_id) == registered
        assert not list((tmp_path / "journals").glob("1.journal.*"))


@pytest.mark.parametrize("tail", [b"\x00" * 64, b"torn"])
def test_torn_journal_tail_dropped_with_warning(
    tmp_path: Path, config: ProvenanceConfig, caplog: pytest.LogCaptureFixture, tail: bytes
) -> None:
    repo = ProvenanceRepository(tmp_path, config).open()
    kept = repo.register_events([make_event(uuid="kept")])
    simulate_crash(repo)
    journal = next(p for p in (tmp_path / "journals").glob("*.journal.*") if p.stat().st_size > len(MAGIC))
    offset = journal.stat().st_size
    if tail == b"torn":
        # A frame header that promises more payload than was written.
        other = make_event(uuid="lost")
        repo2 = ProvenanceRepository(tmp_path / "scratch", config).open()
        repo2.register_events([other])
        simulate_crash(repo2)
        donor = next(p for p in (tmp_path / "scratch/journals").glob("*.journal.*") if p.stat().st_size > len(MAGIC))
        tail = donor.read_bytes()[len(MAGIC):-5]
    with open(journal, "ab") as handle:
        handle.write(tail)
    caplog.set_level(logging.WARNING)
    with ProvenanceRepository(tmp_path, config) as reopened:
        assert reopened.get_events([kept[0].event_id]) == kept
        assert reopened.stats().event_count == 1
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(str(journal) in w and f"offset {offset}" in w for w in warnings), warnings


def test_retention_by_age_deletes_whole_shards(tmp_path: Path) -> None:
    config = ProvenanceConfig(journal_count=2, shard_duration=3600, max_storage_time=86400)
    hour = 3_600_000
    with ProvenanceRepository(tmp_path, config) as repo:
        old = repo.register_events([make_event(time=T0 + i) for i in range(5)])
        repo.rollover()
        new = repo.register_events([make_event(time=T0 + 30 * hour + i) for i in range(5)])
        repo.rollover()
        assert repo.stats().shard_count == 2
        assert repo.run_maintenance(now=T0 + 24 * hour) == 0
        assert repo.run_maintenance(now=T0 + 25 * hour) == 1
        assert repo.get_events([e.event_id for e in old + new]) == new
        assert repo.stats().shard_count == 1
        assert len(list((tmp_path / "shards").iterdir())) == 1


def test_retention_by_size_deletes_oldest_shards_but_not_the_current(tmp_path: Path) -> None:
    config = ProvenanceConfig(journal_count=2, shard_duration=1, max_storage_size=1 << 30)
    with ProvenanceRepository(tmp_path, config) as repo:
        for shard in range(4):
            repo.register_events([make_event(time=T0 + shard * 10_000 + i) for i in range(20)])
            repo.rollover()
        assert repo.stats().shard_count == 4
    with ProvenanceRepository(tmp_path, config) as repo:
        sizes = [s.size for s in repo._shards]
    limit = sizes[-1] + sizes[-2] + 1
    small = ProvenanceConfig(journal_count=2, shard_duration=1, max_storage_size=limit)
    with ProvenanceRepository(tmp_path, small) as repo:
        assert repo.run_maintenance(now=T0) == 2
        remaining = repo.query(ProvenanceQuery(limit=1000)).events
        assert {e.event_time // 10_000 for e in remaining} == {T0 // 10_000 + 2, T0 // 10_000 + 3}
    tiny = ProvenanceConfig(journal_count=2, shard_duration=1, max_storage_size=1)
    with ProvenanceRepository(tmp_path, tiny) as repo:
        repo.run_maintenance(now=T0)
        assert repo.stats().shard_count == 1  # the shard being written survives


def test_background_thread_rolls_over(tmp_path: Path) -> None:
    config = ProvenanceConfig(journal_count=2, rollover_time=0.05, maintenance_interval=0.05)
    with ProvenanceRepository(tmp_path, config) as repo:
        repo.start()
        import time

        repo.register_events([make_event(uuid="bg", time=int(time.time() * 1000))])
        deadline = time.monotonic() + 5
        while not repo.query(ProvenanceQuery(flowfile_uuid="bg")).events and time.monotonic() < deadline:
            time.sleep(0.02)
        assert repo.query(ProvenanceQuery(flowfile_uuid="bg")).events


def test_concurrent_writers_get_distinct_contiguous_ids(tmp_path: Path) -> None:
    import threading

    config = ProvenanceConfig(journal_count=4, rollover_size=16 << 10)
    results: list[list[ProvenanceEvent]] = []
    with ProvenanceRepository(tmp_path, config) as repo:
        repo.start()

        def work() -> None:
            for _ in range(200):
                results.append(repo.register_events([make_event() for _ in range(3)]))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        repo.rollover()
        ids = sorted(e.event_id for batch in results for e in batch)
        assert ids == list(range(1, 2401))
        for batch in results:
            assert [e.event_id for e in batch] == list(range(batch[0].event_id, batch[0].event_id + 3))
        assert repo.stats().event_count == 2400
        stored = repo.get_events(ids)
        assert len(stored) == 2400


def test_open_content(repo: ProvenanceRepository) -> None:
    import io

    [event] = repo.register_events([make_event(content_claim=claim("here"), previous_content_claim=claim("gone"))])
    [bare] = repo.register_events([make_event()])
    repo.rollover()

    class ContentNotFoundError(Exception):
        pass

    def reader(c):
        if c.resource_claim.identifier == "here":
            return io.BytesIO(b"payload")
        raise ContentNotFoundError(str(c))

    from engine.provenance import ContentNotAvailableError

    assert repo.open_content(event.event_id, reader).read() == b"payload"
    with pytest.raises(ContentNotAvailableError, match="content no longer available.*gone"):
        repo.open_content(event.event_id, reader, previous=True)
    with pytest.raises(ContentNotAvailableError, match="content no longer available"):
        repo.open_content(bare.event_id, reader)
    with pytest.raises(ContentNotAvailableError, match="content no longer available"):
        repo.open_content(12345, reader)
    with pytest.raises(ContentNotAvailableError):
        repo.open_content(event.event_id, lambda c: (_ for _ in ()).throw(FileNotFoundError(c)))
    with pytest.raises(ZeroDivisionError):
        repo.open_content(event.event_id, lambda c: 1 / 0)


def test_engine_does_not_import_django() -> None:
    import subprocess
    import sys

    code = "import sys, engine.provenance; assert 'django' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[3],
                   env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])})


def test_version_1_journal_is_rolled_over_with_fresh_index_fragments(
    tmp_path: Path, config: ProvenanceConfig
) -> None:
    import msgpack

    from engine.provenance.journal import encode_frame, read_journal

    repo = ProvenanceRepository(tmp_path, config).open()
    registered = repo.register_events([make_event(uuid=f"old-{i}", filename=f"f{i}") for i in range(5)])
    simulate_crash(repo)
    [journal] = [p for p in (tmp_path / "journals").glob("*.journal.*") if p.stat().st_size > len(MAGIC)]
    [frame] = read_journal(journal).frames
    payload = msgpack.packb([list(frame.events), ["[]"] * 5, frame.min_time, frame.max_time], use_bin_type=True)
    journal.write_bytes(b"FSPJRN1\n" + encode_frame(frame.first_id, 5, payload))
    with ProvenanceRepository(tmp_path, config) as reopened:
        assert reopened.query(ProvenanceQuery(flowfile_uuid="old-3")).events == [registered[3]]
        assert reopened.query(ProvenanceQuery(filename="f4")).events == [registered[4]]
