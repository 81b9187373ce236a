from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from engine.content.claims import ResourceClaimManager
from engine.content.repository import ContentRepository
from engine.flowfile import ContentClaim, ResourceClaim
from tests.engine.content.conftest import DiskUsage, RepoFactory, Usage

HOUR = 3600.0


def dereference(claims: ResourceClaimManager, *contents: ContentClaim) -> list[ResourceClaim]:
    """Drop the FlowFiles' references, as a checkpoint would, and return the destructible claims."""
    for content in contents:
        claims.decrement(content.resource_claim)
    return claims.drain_destructible()


def archived_names(repo: ContentRepository, container: str = "c0") -> set[str]:
    root = repo.containers[container]
    return {p.name for p in root.glob("*/archive/*")}


def test_release_archives_unused_claims(make_repo: RepoFactory, claims: ResourceClaimManager) -> None:
    repo = make_repo(max_appendable_size=1)
    content = repo.write_bytes(b"payload")
    rc = content.resource_claim
    before = time.time()

    assert repo.release(dereference(claims, content)) == 1

    assert not repo.path(rc).exists()
    assert repo.archive_path(rc).read_bytes() == b"payload"
    assert repo.archive_path(rc).stat().st_mtime >= before - 1
    assert repo.read_bytes(content) == b"payload"
    stats = repo.stats().containers["c0"]
    assert (stats.live_count, stats.archived_count, stats.archived_bytes) == (0, 1, 7)
    assert repo.release([rc]) == 0


def test_release_deletes_when_archiving_is_off(make_repo: RepoFactory, claims: ResourceClaimManager) -> None:
    repo = make_repo(max_appendable_size=1, archive_enabled=False)
    content = repo.write_bytes(b"payload")
    assert repo.release(dereference(claims, content)) == 1
    assert not repo.path(content.resource_claim).exists()
    assert not repo.archive_path(content.resource_claim).exists()
    assert not repo.exists(content)


def test_release_never_removes_a_claim_in_use(make_repo: RepoFactory, claims: ResourceClaimManager) -> None:
    repo = make_repo(max_appendable_size=100)
    frozen = repo.write_bytes(b"f" * 200)
    shared = repo.write_bytes(b"s" * 10)
    appending = repo.open_writer()
    fresh = repo.open_writer()
    fresh.write(b"in progress")
    assert appending.resource_claim == shared.resource_claim != fresh.resource_claim
    assert claims.count(frozen.resource_claim) == 1 and frozen.resource_claim not in claims.writable()
    assert claims.count(shared.resource_claim) == 1 and shared.resource_claim in claims.writable()
    assert claims.count(fresh.resource_claim) == 0 and fresh.resource_claim in claims.writable()
    in_use = [frozen.resource_claim, shared.resource_claim, fresh.resource_claim]

    deleting = make_repo(manager=claims, max_appendable_size=100, archive_enabled=False)
    assert repo.release(in_use) == 0
    assert deleting.release(in_use) == 0
    assert repo.collect_orphans(set()) == 0

    for rc in in_use:
        assert repo.path(rc).exists() and not repo.archive_path(rc).exists()
    fresh.write(b" and done")
    assert repo.read_bytes(fresh.close()) == b"in progress and done"
    assert repo.read_bytes(frozen) == b"f" * 200
    assert repo.read_bytes(shared) == b"s" * 10
    appending.abort()


def test_a_claim_referenced_again_before_release_is_kept(
    make_repo: RepoFactory, claims: ResourceClaimManager
) -> None:
    repo = make_repo(max_appendable_size=1)
    content = repo.write_bytes(b"payload")
    destructible = dereference(claims, content)
    claims.increment(content.resource_claim)
    assert repo.release(destructible) == 0
    assert repo.read_bytes(content) == b"payload"
    assert repo.path(content.resource_claim).exists()


def test_archive_ages_off_by_time(make_repo: RepoFactory, claims: ResourceClaimManager) -> None:
    repo = make_repo(max_appendable_size=1, archive_max_retention=HOUR)
    contents = [repo.write_bytes(b"%d" % i) for i in range(5)]
    repo.release(dereference(claims, *contents))
    assert len(archived_names(repo)) == 5

    result = repo.run_cleanup(now=time.time() + HOUR / 2)
    assert (result.expired, result.evicted) == (0, 0)
    assert len(archived_names(repo)) == 5

    result = repo.run_cleanup(now=time.time() + HOUR + 5)
    assert (result.expired, result.evicted, result.bytes_freed) == (5, 0, 5)
    assert archived_names(repo) == set()
    assert not any(repo.exists(c) for c in contents)


def test_age_off_keeps_younger_files_after_restart(
    tmp_path: Path, make_repo: RepoFactory, claims: ResourceClaimManager
) -> None:
    repo = make_repo(max_appendable_size=1, archive_max_retention=HOUR)
    contents = [repo.write_bytes(b"%d" % i) for i in range(6)]
    repo.release(dereference(claims, *contents))
    now = time.time()
    for age, content in zip((5, 4, 3, 2, 0.5, 0.25), contents):
        stamp = now - age * HOUR
        os.utime(repo.archive_path(content.resource_claim), (stamp, stamp))

    restarted = make_repo(manager=ResourceClaimManager(), max_appendable_size=1, archive_max_retention=HOUR)
    result = restarted.run_cleanup(now=now)
    assert result.expired == 4
    assert archived_names(restarted) == {c.resource_claim.identifier for c in contents[4:]}


def test_unlimited_retention_keeps_everything(make_repo: RepoFactory, claims: ResourceClaimManager) -> None:
    repo = make_repo(max_appendable_size=1, archive_max_retention=None)
    content = repo.write_bytes(b"kept")
    repo.release(dereference(claims, content))
    assert repo.run_cleanup(now=time.time() + 1000 * HOUR).expired == 0
    assert repo.read_bytes(content) == b"kept"


def test_archive_evicts_oldest_by_disk_usage(make_repo: RepoFactory, claims: ResourceClaimManager) -> None:
    usage = DiskUsage(total=10_000, base=8_000)
    repo = make_repo(max_appendable_size=1, archive_max_usage_percentage=90.0, disk_usage=usage)
    contents = [repo.write_bytes(bytes(100)) for _ in range(10)]
    live = repo.write_bytes(bytes(500))
    repo.release(dereference(claims, *contents))
    now = time.time()
    for age, content in enumerate(contents):
        stamp = now - 100 + age  # contents[0] is the oldest
        os.utime(repo.archive_path(content.resource_claim), (stamp, stamp))
    restarted = make_repo(
        manager=ResourceClaimManager(), max_appendable_size=1, disk_usage=usage, archive_max_usage_percentage=90.0
    )

    # 8,000 other + 500 live + 1,000 archived = 95%: five 100-byte files must go to reach 90%.
    result = restarted.run_cleanup(now=now)
    assert (result.expired, result.evicted, result.bytes_freed) == (0, 5, 500)
    assert archived_names(restarted) == {c.resource_claim.identifier for c in contents[5:]}
    assert restarted.read_bytes(live) == bytes(500)

    assert restarted.run_cleanup(now=now).evicted == 0
    usage.base = 9_900
    result = restarted.run_cleanup(now=now)
    assert result.evicted == 5 and archived_names(restarted) == set()
    assert restarted.read_bytes(live) == bytes(500)


def test_newly_archived_files_join_a_complete_oldest_list(
    make_repo: RepoFactory, claims: ResourceClaimManager
) -> None:
    usage = DiskUsage(total=1_000)
    repo = make_repo(max_appendable_size=1, disk_usage=usage, archive_max_usage_percentage=50.0)
    first = [repo.write_bytes(bytes(10)) for _ in range(3)]
    repo.release(dereference(claims, *first))
    assert repo.run_cleanup().evicted == 0
    assert repo.archive_scans("c0") == 1

    later = [repo.write_bytes(bytes(10)) for _ in range(3)]
    repo.release(dereference(claims, *later))
    usage.base = 1_000
    result = repo.run_cleanup()
    assert result.evicted == 6
    assert repo.archive_scans("c0") == 1


def test_oldest_list_holds_ten_thousand_and_rescans_when_it_runs_out(
    make_repo: RepoFactory, claims: ResourceClaimManager
) -> None:
    class UntilDeleted(DiskUsage):
        """Over the limit while ``sentinel`` exists (deletion goes oldest first)."""

        def __init__(self, sentinel: Path) -> None:
            super().__init__(total=100)
            self.sentinel = sentinel

        def __call__(self, path: Path):  # type: ignore[no-untyped-def]
            used = 51 if self.sentinel.exists() else 50
            return Usage(self.total, used, self.total - used)

    repo = make_repo(max_appendable_size=1, sections=8)
    contents = [repo.write_bytes(b"x") for _ in range(10_030)]
    assert len({c.resource_claim for c in contents}) == 10_030
    repo.release(dereference(claims, *contents))
    now = time.time()
    for age, content in enumerate(contents):
        stamp = now - 20_000 + age
        os.utime(repo.archive_path(content.resource_claim), (stamp, stamp))

    usage = UntilDeleted(repo.archive_path(contents[10_019].resource_claim))
    restarted = make_repo(
        manager=ResourceClaimManager(),
        max_appendable_size=1,
        sections=8,
        disk_usage=usage,
        archive_max_retention=None,
        archive_max_usage_percentage=50.0,
    )
    result = restarted.run_cleanup(now=now)

    assert result.evicted == 10_020
    # One listing filled the 10,000 oldest, a second one found the rest when they ran out.
    assert restarted.archive_scans("c0") == 2
    assert archived_names(restarted) == {c.resource_claim.identifier for c in contents[-10:]}


def test_collect_orphans_archives_unreferenced_files(tmp_path: Path, make_repo: RepoFactory) -> None:
    before_crash = make_repo(manager=ResourceClaimManager(), max_appendable_size=1)
    kept = before_crash.write_bytes(b"committed")
    orphan = before_crash.write_bytes(b"never committed")
    shared = make_repo(manager=ResourceClaimManager(), max_appendable_size=1 << 20)
    in_shared = [shared.write_bytes(b"a"), shared.write_bytes(b"b")]

    recovered = ResourceClaimManager()
    recovered.increment(kept.resource_claim)
    recovered.increment(in_shared[1].resource_claim)
    repo = make_repo(manager=recovered)
    fresh = repo.write_bytes(b"written after start")  # writable: never an orphan

    removed = repo.collect_orphans({kept.resource_claim, in_shared[1].resource_claim})

    assert removed == 1
    assert repo.path(kept.resource_claim).exists()
    assert repo.path(in_shared[0].resource_claim).exists()
    assert repo.path(fresh.resource_claim).exists()
    assert not repo.path(orphan.resource_claim).exists()
    assert repo.archive_path(orphan.resource_claim).read_bytes() == b"never committed"


def test_collect_orphans_deletes_when_archiving_is_off(make_repo: RepoFactory) -> None:
    before_crash = make_repo(manager=ResourceClaimManager(), max_appendable_size=1)
    orphans = [before_crash.write_bytes(b"%d" % i) for i in range(3)]
    repo = make_repo(manager=ResourceClaimManager(), archive_enabled=False)
    assert repo.collect_orphans(set()) == 3
    assert list(repo.iter_resource_claims()) == []
    assert not any(repo.exists(c) for c in orphans)


def test_background_cleaner_runs_until_closed(make_repo: RepoFactory, claims: ResourceClaimManager) -> None:
    usage = DiskUsage(total=100, base=100)
    repo = make_repo(max_appendable_size=1, cleanup_interval=0.02, disk_usage=usage)
    repo.start()
    repo.start()
    content = repo.write_bytes(b"x")
    repo.release(dereference(claims, content))
    deadline = time.monotonic() + 5
    while archived_names(repo) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert archived_names(repo) == set()
    repo.close()
    assert not any(t.name == "content-archive-cleaner" and t.is_alive() for t in threading.enumerate())
