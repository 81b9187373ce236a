"""Commit marks: a mark is in the log exactly when the commit carrying it is, and survives a restart."""

from __future__ import annotations

import time

import pytest

from engine.config import StorageConfig
from engine.storage import NodeStorage
from engine.testing.faults import FaultPlan


def test_a_mark_is_committed_with_its_session_and_recovered_after_a_restart(node, tmp_path) -> None:
    now = int(time.time() * 1000)  # marks older than the window (24 hours) are dropped at checkpoints
    session = node.session(outgoing={"success": ["out"]})
    session.transfer(session.create(), "success")
    session.commit_mark("reader:1", now + 1000)
    assert session.committed_mark("reader:1") is None, "nothing before the commit"
    session.commit()
    assert session.committed_mark("reader:1") == now + 1000

    failing = node.session(outgoing={"success": ["out"]})
    failing.transfer(failing.create(), "success")
    failing.commit_mark("reader:1", now + 2000)
    with FaultPlan(fail_at=1, matches="flowfile_repository").installed():
        with pytest.raises(OSError):
            failing.commit()
    assert failing.committed_mark("reader:1") == now + 1000, "a failed commit leaves the former mark"

    rolled_back = node.session()
    rolled_back.commit_mark("reader:1", now + 3000)
    rolled_back.rollback()
    rolled_back.commit()
    node.storage.close()
    reopened = NodeStorage(tmp_path / "node", StorageConfig())
    reopened.open(background=False)
    try:
        assert reopened.flowfiles.wal.transfer_marks["reader:1"] == now + 1000
    finally:
        reopened.close()
