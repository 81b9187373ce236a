"""A process killed at each step of a checkpoint recovers every committed record."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.wal import WriteAheadLog
from tests.engine.wal.conftest import RecSerde

REPO_ROOT = Path(__file__).resolve().parents[3]

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from engine import fileops
    from engine.wal import SyncPolicy, UpdateType, WriteAheadLog
    from tests.engine.wal.conftest import Rec, RecSerde

    directory, step, first, count, earlier_checkpoint = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    def crash_at_step(operation, path, size):
        name = os.path.basename(path)
        if step == "mid-partial" and operation == "sync" and name == ".partial":
            with open(path, "r+b") as handle:
                handle.truncate(os.path.getsize(path) // 2)
            die()
        if step == "after-partial" and operation == "rename" and name == "snapshot":
            die()
        if operation == "unlink" and name.endswith(".journal"):
            if step == "mid-journal-removal":
                os.unlink(path)
            if step in ("after-rename", "mid-journal-removal"):
                die()
        return None

    wal = WriteAheadLog(directory, RecSerde(), sync_policy=SyncPolicy.OS)
    wal.recover()
    for i in range(first, first + count):
        wal.update([Rec(UpdateType.CREATE, i, "v%d" % i)])
        if earlier_checkpoint and i == first + count // 2:
            wal.checkpoint()
    fileops.set_fault_hook(crash_at_step)
    wal.checkpoint()
    """
)

STEPS = ["mid-partial", "after-partial", "after-rename", "mid-journal-removal"]


def run_child(directory: Path, step: str, first: int, count: int, earlier_checkpoint: bool) -> None:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(directory), step, str(first), str(count), "1" if earlier_checkpoint else "0"],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == -signal.SIGKILL, result.stderr


@pytest.mark.parametrize("earlier_checkpoint", [False, True], ids=["first-checkpoint", "later-checkpoint"])
@pytest.mark.parametrize("step", STEPS)
def test_crash_during_checkpoint_loses_nothing(tmp_path, step, earlier_checkpoint):
    run_child(tmp_path, step, 0, 40, earlier_checkpoint)
    wal = WriteAheadLog(tmp_path, RecSerde())
    wal.recover()
    assert sorted(wal.records) == list(range(40))
    assert wal.records[39].value == "v39"
    assert not (tmp_path / ".partial").exists()
    # and the log keeps working across a second crash at the same step
    wal.close(checkpoint=False)
    run_child(tmp_path, step, 40, 10, earlier_checkpoint)
    again = WriteAheadLog(tmp_path, RecSerde())
    again.recover()
    assert sorted(again.records) == list(range(50))
