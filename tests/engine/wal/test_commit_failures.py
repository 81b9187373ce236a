"""A commit is acknowledged only when it is durable, and applied only then: write and sync
failures fail exactly the commits they carried, and the log goes on on a healthy journal."""

from __future__ import annotations

import errno
import threading
from pathlib import Path

import pytest

from engine.testing.faults import FaultPlan
from engine.wal import CommitFailedError, SyncPolicy, UpdateType, WriteAheadLog
from engine.wal.journal import list_journals
from tests.engine.wal.conftest import Rec, RecSerde


def open_log(path: Path, policy: SyncPolicy = SyncPolicy.GROUPED) -> WriteAheadLog:
    wal = WriteAheadLog(path, RecSerde(), sync_policy=policy)
    wal.recover()
    return wal


def values(wal: WriteAheadLog) -> dict[int, str]:
    return {key: record.value for key, record in wal.records.items()}


def recovered(path: Path) -> dict[int, str]:
    wal = WriteAheadLog(path, RecSerde())
    wal.recover(read_only=True)
    return values(wal)


@pytest.mark.parametrize("policy", list(SyncPolicy))
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_a_failed_write_fails_the_commit_applies_nothing_and_the_next_commit_succeeds(tmp_path, policy, code):
    wal = open_log(tmp_path, policy)
    wal.update([Rec(UpdateType.CREATE, 1, "a")])
    with FaultPlan(fail_at=1, errno=code, operations={"write"}, partial=True).installed():
        with pytest.raises(CommitFailedError) as raised:
            wal.update([Rec(UpdateType.CREATE, 2, "b"), Rec(UpdateType.DELETE, 1)])
    assert raised.value.errno == code and "nothing of it was applied" in str(raised.value)
    assert values(wal) == {1: "a"}
    wal.update([Rec(UpdateType.CREATE, 3, "c")])
    wal.checkpoint()  # a failed commit is never written by a later checkpoint either
    assert values(wal) == recovered(tmp_path) == {1: "a", 3: "c"}


def test_grouped_commits_sharing_a_failed_write_all_fail_and_none_is_acknowledged(tmp_path):
    wal = open_log(tmp_path, SyncPolicy.GROUPED)
    acknowledged: dict[int, str] = {}
    failed: set[int] = set()
    lock = threading.Lock()
    start = threading.Barrier(12)

    def committer(worker: int) -> None:
        start.wait()
        for i in range(40):
            key = worker * 1000 + i
            try:
                wal.update([Rec(UpdateType.CREATE, key, str(key))])
            except CommitFailedError:
                with lock:
                    failed.add(key)
            else:
                with lock:
                    acknowledged[key] = str(key)

    plan = FaultPlan(fail_at=15, errno=errno.ENOSPC, operations={"write"}, partial=True)
    with plan.installed():
        threads = [threading.Thread(target=committer, args=(w,)) for w in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert plan.triggered and failed, "the failing write carried no commit"
    assert values(wal) == acknowledged
    assert recovered(tmp_path) == acknowledged
    assert not failed & set(recovered(tmp_path))


def test_a_journal_that_cannot_be_cut_back_is_left_for_a_new_one(tmp_path):
    wal = open_log(tmp_path, SyncPolicy.OS)
    wal.update([Rec(UpdateType.CREATE, 1, "a")])
    plan = FaultPlan(fail_at=1, errno=errno.EIO, operations={"write", "truncate"}, partial=False, persistent=True)
    with plan.installed(), pytest.raises(CommitFailedError):
        wal.update([Rec(UpdateType.CREATE, 2, "b")])
    first = list_journals(tmp_path / "journals")[-1][1]
    with open(first, "ab") as handle:  # what a failed write may leave past the committed bytes
        handle.write(b"\x40partial frame")
    wal.update([Rec(UpdateType.CREATE, 3, "c")])
    names = [path.name for _, path in list_journals(tmp_path / "journals")]
    assert len(names) == 2, names
    assert recovered(tmp_path) == values(wal) == {1: "a", 3: "c"}
    again = open_log(tmp_path)
    assert values(again) == {1: "a", 3: "c"}


def test_a_checkpoint_that_cannot_open_the_next_journal_leaves_the_log_working(tmp_path):
    wal = open_log(tmp_path, SyncPolicy.GROUPED)
    wal.update([Rec(UpdateType.CREATE, 1, "a")])
    with FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"open"}).installed(), pytest.raises(OSError):
        wal.checkpoint()
    for key in range(2, 6):  # later commits go to the journal that stayed open
        wal.update([Rec(UpdateType.CREATE, key, "b")])
    wal.checkpoint()
    wal.update([Rec(UpdateType.CREATE, 9, "c")])
    wal.checkpoint()
    expected = {1: "a", 2: "b", 3: "b", 4: "b", 5: "b", 9: "c"}
    assert values(wal) == recovered(tmp_path) == expected
    wal.close()
    assert values(open_log(tmp_path)) == expected


def test_a_checkpoint_whose_snapshot_fails_keeps_the_old_snapshot_and_the_journals(tmp_path):
    wal = open_log(tmp_path, SyncPolicy.OS)
    for key in range(5):
        wal.update([Rec(UpdateType.CREATE, key, "x")])
    wal.checkpoint()
    wal.update([Rec(UpdateType.CREATE, 10, "y")])
    with FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write"}, matches=".partial").installed():
        with pytest.raises(OSError):
            wal.checkpoint()
    assert not (tmp_path / ".partial").exists()
    wal.update([Rec(UpdateType.CREATE, 11, "z")])
    assert recovered(tmp_path) == values(wal)


def test_closing_on_a_full_disk_does_not_raise_and_loses_nothing(tmp_path):
    wal = open_log(tmp_path, SyncPolicy.GROUPED)
    for key in range(5):
        wal.update([Rec(UpdateType.CREATE, key, "x")])
    with FaultPlan(fail_at=1, errno=errno.ENOSPC, persistent=True).installed():
        wal.close()
    assert values(open_log(tmp_path)) == {key: "x" for key in range(5)}


def workload(wal: WriteAheadLog, model: dict[int, str], swaps: set[str]) -> None:
    """Commits, swap records and checkpoints; the model keeps what was acknowledged."""
    for step in range(24):
        key = step % 9
        try:
            if step % 8 == 7:
                wal.checkpoint()
            elif step % 5 == 4 and model:
                victim = min(model)
                wal.update([Rec(UpdateType.SWAP_OUT, victim, location=f"s{step}.swap")], force_sync=True)
                del model[victim]
                swaps.add(f"s{step}.swap")
            elif step % 6 == 5 and swaps:
                location = min(swaps)
                wal.update([Rec(UpdateType.SWAP_IN, 100 + step, "in", location=location)], force_sync=True)
                swaps.discard(location)
                model[100 + step] = "in"
            else:
                records = [Rec(UpdateType.CREATE, key, f"{step}"), Rec(UpdateType.CREATE, key + 50, f"{step}")]
                wal.update(records)
                model[key] = model[key + 50] = f"{step}"
        except OSError:
            pass


@pytest.mark.parametrize("policy", list(SyncPolicy))
def test_fault_campaign_every_failure_point_keeps_exactly_the_acknowledged_commits(tmp_path, policy):
    counting = FaultPlan()
    fresh = open_log(tmp_path / "count", policy)
    with counting.installed():
        workload(fresh, {}, set())
    assert counting.count > 50
    for point in range(1, counting.count + 1):
        for code in (errno.ENOSPC, errno.EIO):
            directory = tmp_path / f"{code}-{point}"
            wal = open_log(directory, policy)
            model: dict[int, str] = {}
            swaps: set[str] = set()
            plan = FaultPlan(fail_at=point, errno=code, partial=code == errno.ENOSPC)
            with plan.installed():
                workload(wal, model, swaps)
            assert plan.triggered
            assert values(wal) == model and wal.swap_locations == swaps, (point, code, plan.failures)
            wal.update([Rec(UpdateType.CREATE, 999, "after")])  # the log goes on
            model[999] = "after"
            assert recovered(directory) == model, (point, code, plan.failures)
            wal.close()
            again = open_log(directory)
            assert values(again) == model and again.swap_locations == swaps, (point, code, plan.failures)
