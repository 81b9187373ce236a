"""The storage's one I/O seam, and the fault plans that plug into it."""

from __future__ import annotations

import errno
import os

import pytest

from engine import fileops
from engine.testing.faults import FaultPlan, InjectedFault


def test_atomic_file_puts_the_new_file_in_place_whole(tmp_path):
    target = tmp_path / "state"
    target.write_bytes(b"old")
    with fileops.AtomicFile(target, buffer_size=4) as handle:
        handle.write(b"new ")
        handle.write(b"contents")
    assert target.read_bytes() == b"new contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state"]


def test_an_atomic_file_that_need_not_be_durable_is_put_in_place_whole_without_a_sync(tmp_path):
    target = tmp_path / "state"
    target.write_bytes(b"old")
    with FaultPlan(operations={"sync"}).installed() as syncs:
        fileops.write_atomically(target, b"new", durable=False)
    assert syncs.count == 0 and target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state"]
    with FaultPlan(operations={"sync"}).installed() as syncs:
        fileops.write_atomically(target, b"newer")
    assert syncs.count == 2, "the durable kind syncs the file and its directory"
    with FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write"}).installed(), pytest.raises(OSError):
        fileops.write_atomically(target, b"lost", durable=False)
    assert target.read_bytes() == b"newer" and sorted(p.name for p in tmp_path.iterdir()) == ["state"]


@pytest.mark.parametrize("operation", ["write", "sync", "rename"])
def test_atomic_file_that_fails_leaves_the_old_file_and_no_temporary(tmp_path, operation):
    target = tmp_path / "state"
    target.write_bytes(b"old")
    plan = FaultPlan(fail_at=1, errno=errno.EIO, operations={operation})
    with plan.installed(), pytest.raises(OSError) as raised:
        fileops.write_atomically(target, b"new")
    assert raised.value.errno == errno.EIO
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state"]


def test_a_write_cut_short_by_a_full_disk_says_how_much_reached_the_file(tmp_path):
    path = tmp_path / "journal"
    fd = fileops.open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        with FaultPlan(fail_at=1, operations={"write"}, partial=True).installed(), pytest.raises(OSError) as raised:
            fileops.write_all(fd, b"0123456789", path)
    finally:
        fileops.close(fd)
    assert raised.value.errno == errno.ENOSPC
    assert raised.value.written == 5
    assert path.read_bytes() == b"01234"


def test_a_plan_counts_matching_operations_and_fails_the_nth(tmp_path):
    plan = FaultPlan(fail_at=5, operations={"open", "write"}, matches="b-")
    with plan.installed():
        for name in ("a-1", "b-1", "b-2"):
            fileops.write_atomically(tmp_path / name, b"x")
        with pytest.raises(InjectedFault):
            fileops.write_atomically(tmp_path / "b-3", b"x")
    assert plan.count == 5  # open and write of b-1 and b-2, then the open of b-3 fails
    assert plan.failures == [("open", str(tmp_path / "b-3.tmp"))]
    assert not (tmp_path / "b-3").exists()


def test_a_persistent_plan_fails_until_healed(tmp_path):
    plan = FaultPlan(fail_at=1, operations={"write"}, persistent=True)
    with plan.installed():
        for _ in range(3):
            with pytest.raises(OSError):
                fileops.write_atomically(tmp_path / "f", b"x")
        plan.heal()
        fileops.write_atomically(tmp_path / "f", b"x")
    assert (tmp_path / "f").read_bytes() == b"x"
    assert len(plan.failures) == 3


def test_the_hook_is_removed_after_the_block(tmp_path):
    with FaultPlan(fail_at=1).installed():
        pass
    fileops.write_atomically(tmp_path / "f", b"x")
    assert fileops.set_fault_hook(None) is None


def test_a_private_file_is_private_from_its_creation_even_over_a_stale_temporary_file(tmp_path):
    target = tmp_path / "node.key"
    stale = tmp_path / "node.key.tmp"
    stale.write_bytes(b"left by a crash")
    stale.chmod(0o644)
    seen = []

    def hook(operation, path, size):
        if operation == "write":
            seen.append(os.stat(path).st_mode & 0o777)

    previous = fileops.set_fault_hook(hook)
    try:
        fileops.write_atomically(target, b"secret", mode=0o600)
    finally:
        fileops.set_fault_hook(previous)
    assert seen == [0o600]
    assert target.stat().st_mode & 0o777 == 0o600 and target.read_bytes() == b"secret"
    assert not stale.exists()
