"""Many committing threads and checkpoints at once: every acknowledged commit is in the state
and on disk, and checkpoints are not starved by a steady stream of commits."""

from __future__ import annotations

import threading
import time

import pytest

from engine.wal import SyncPolicy, UpdateType, WriteAheadLog
from tests.engine.wal.conftest import Rec, RecSerde

CHECKPOINTS = 15


@pytest.mark.parametrize("policy", list(SyncPolicy))
def test_commits_from_many_threads_while_checkpoints_run(tmp_path, policy):
    wal = WriteAheadLog(tmp_path, RecSerde(), sync_policy=policy)
    wal.recover()
    done = threading.Event()
    counts = [0] * 8

    def committer(worker: int) -> None:
        while not done.is_set():
            n = counts[worker]
            wal.update([Rec(UpdateType.CREATE, worker * 10**6 + n, str(n))])
            counts[worker] = n + 1

    threads = [threading.Thread(target=committer, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    def checkpoints() -> None:
        while min(counts) == 0:  # every committer is under way
            time.sleep(0.01)
        for _ in range(CHECKPOINTS):
            time.sleep(0.01)  # commits flow between checkpoints
            wal.checkpoint()

    checkpointer = threading.Thread(target=checkpoints)
    checkpointer.start()
    checkpointer.join(timeout=60)
    starved = checkpointer.is_alive()
    done.set()
    for thread in threads:
        thread.join()
    checkpointer.join()
    assert not starved, "the checkpoints could not get between the commits"
    expected = {w * 10**6 + n for w in range(8) for n in range(counts[w])}
    assert set(wal.records) == expected
    wal.close()
    again = WriteAheadLog(tmp_path, RecSerde())
    again.recover()
    assert set(again.records) == expected
