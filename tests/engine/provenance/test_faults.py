"""The provenance repository on a failing disk: ENOSPC and EIO at every file operation of
registration, rollover and reopening, the in-memory backlog, and its bound."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from engine.damage import DamageLog
from engine.provenance import ProvenanceConfig, ProvenanceEvent, ProvenanceQuery, ProvenanceRepository
from engine.testing.faults import FaultPlan
from tests.engine.provenance.conftest import T0, make_event
from tests.engine.provenance.test_repository import simulate_crash

CONFIG = ProvenanceConfig(journal_count=2, max_storage_time=10 * 365 * 86400.0)


def stored(directory: Path, config: ProvenanceConfig = CONFIG) -> list[ProvenanceEvent]:
    """Every event of the repository at ``directory``, oldest first (reopened outside any plan)."""
    with ProvenanceRepository(directory, config) as repo:
        return list(reversed(repo.query(ProvenanceQuery(limit=100_000)).events))


def batch(tag: str, size: int = 5) -> list[ProvenanceEvent]:
    return [make_event(uuid=f"{tag}-{i}", time=T0 + i) for i in range(size)]


def test_a_refused_append_is_held_and_written_by_the_next_registration(tmp_path: Path) -> None:
    repo = ProvenanceRepository(tmp_path, CONFIG).open()
    plan = FaultPlan(fail_at=1, operations={"write"}, matches="journals", persistent=True)
    with plan.installed():
        held = repo.register_events(batch("a")) + repo.register_events(batch("b"))
        assert repo.stats().backlog_events == 10
        plan.heal()
        later = repo.register_events(batch("c"))
    assert repo.stats().backlog_events == 0
    # Written to the journal: a crash now loses nothing.
    simulate_crash(repo)
    events = stored(tmp_path)
    assert events == held + later
    assert [e.event_id for e in events] == list(range(1, 16))


def test_the_rollover_stores_held_events_when_the_journals_stay_refused(tmp_path: Path) -> None:
    plan = FaultPlan(fail_at=1, operations={"open", "write"}, matches=".journal.", persistent=True, errno=errno.EIO)
    with ProvenanceRepository(tmp_path, CONFIG) as repo, plan.installed():
        registered = repo.register_events(batch("a")) + repo.register_events(batch("b"))
        assert repo.rollover() == 10
        assert repo.stats().backlog_events == 0
        assert repo.get_events(range(1, 11)) == registered


def test_past_the_bound_batches_are_dropped_and_reported(tmp_path: Path) -> None:
    damage = DamageLog()
    config = ProvenanceConfig(journal_count=2, max_backlog_events=10, max_storage_time=10 * 365 * 86400.0)
    repo = ProvenanceRepository(tmp_path, config, damage=damage).open()
    plan = FaultPlan(fail_at=1, matches="journals", persistent=True)
    with plan.installed():
        kept = repo.register_events(batch("a", 4)) + repo.register_events(batch("b", 4))
        repo.register_events(batch("c", 4))
        [first] = damage.entries()
        assert "4 event(s) dropped: ids 9–12" in first.effect and "No space left" in first.found
        repo.register_events(batch("d", 4))
        assert len(damage.entries()) == 1  # one report a minute while it lasts...
        plan.heal()
        repo.close()
    second = damage.entries()[-1]  # ...and the rest at close
    assert "4 event(s) dropped: ids 13–16" in second.effect
    assert "event times 2023-11-14 22:13:20.000 UTC to 2023-11-14 22:13:20.003 UTC" in second.effect
    assert stored(tmp_path, config) == kept


def test_held_events_the_closing_repository_cannot_store_are_reported(tmp_path: Path) -> None:
    damage = DamageLog()
    repo = ProvenanceRepository(tmp_path, CONFIG, damage=damage).open()
    with FaultPlan(fail_at=1, persistent=True).installed():
        repo.register_events(batch("a"))
        with pytest.raises(OSError):
            repo.close()
    [entry] = damage.entries()
    assert "5 event(s) dropped: ids 1–5" in entry.effect and "closed before the disk accepted them" in entry.found


def test_rollover_retries_cleanly_after_a_half_made_shard(tmp_path: Path) -> None:
    repo = ProvenanceRepository(tmp_path, CONFIG).open()
    registered = repo.register_events(batch("a"))
    for failing in ("sync", "write", "open"):
        with FaultPlan(fail_at=1, operations={failing}, matches="shards", persistent=True).installed():
            with pytest.raises(OSError):
                repo.rollover()
        assert list((tmp_path / "journals").glob("*.journal.*"))  # kept until the shard is durable
    assert repo.rollover() == 5
    assert repo.get_events(range(1, 6)) == registered
    assert not list((tmp_path / "journals").glob("1.journal.*"))
    repo.close()


def test_the_id_floor_write_is_retried_and_nothing_is_deleted_before_it(tmp_path: Path) -> None:
    config = ProvenanceConfig(journal_count=2, shard_duration=1, max_storage_time=3600)
    with ProvenanceRepository(tmp_path, config) as repo:
        repo.register_events(batch("a"))
        repo.rollover()
        later = T0 + 7200 * 1000
        with FaultPlan(fail_at=1, matches="id-floor").installed():
            with pytest.raises(OSError):
                repo.run_maintenance(now=later)
        assert repo.stats().shard_count == 1
        assert repo.run_maintenance(now=later) == 1
    with ProvenanceRepository(tmp_path, config) as repo:
        assert repo.register_events(batch("b", 1))[0].event_id == 6


def workload(directory: Path, plan: FaultPlan) -> list[ProvenanceEvent]:
    """Register, roll over, reopen and register again under ``plan``; returns what
    ``register_events`` returned. Only rollovers may raise, and only an OSError."""
    registered: list[ProvenanceEvent] = []

    def rollover(repo: ProvenanceRepository) -> None:
        try:
            repo.rollover()
        except OSError:
            pass

    ProvenanceRepository(directory, CONFIG).open().close()  # a repository that exists already
    with plan.installed():
        repo = ProvenanceRepository(directory, CONFIG).open()
        registered += repo.register_events(batch("a"))
        rollover(repo)
        registered += repo.register_events(batch("b"))
        registered += repo.register_events(batch("c", 300))
        rollover(repo)
        registered += repo.register_events(batch("d"))
        if plan.persistent:
            plan.heal()  # a disk that stays full until here
        close(repo)
        repo = ProvenanceRepository(directory, CONFIG).open()
        registered += repo.register_events(batch("e"))
        close(repo)
    return registered


def close(repo: ProvenanceRepository) -> None:
    try:
        repo.close()
    except OSError:
        pass  # a final rollover that failed: its journals are rolled over at the next open


def test_every_failure_point_of_register_rollover_and_reopen(tmp_path: Path) -> None:
    counting = FaultPlan(matches=str(tmp_path))
    workload(tmp_path / "count", counting)
    assert counting.count > 30
    runs = 0
    for point in range(1, counting.count + 1):
        for variant in ("ENOSPC", "EIO", "ENOSPC partial", "ENOSPC persistent"):
            plan = FaultPlan(
                fail_at=point, errno=errno.EIO if variant == "EIO" else errno.ENOSPC, matches=str(tmp_path),
                partial="partial" in variant, persistent="persistent" in variant,
            )
            directory = tmp_path / f"{point}-{variant}"
            registered = workload(directory, plan)
            if not plan.triggered:
                assert plan.persistent, (point, variant)  # the point lies after the heal
                continue
            events = stored(directory)
            ids = [e.event_id for e in events]
            assert ids == sorted(set(ids)), (point, variant)
            assert events == registered, (point, variant, plan.failures)
            runs += 1
    assert runs > 3 * counting.count
