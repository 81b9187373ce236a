"""``NodeStorage.close`` on a failing disk: every repository is closed anyway, each failure is one
log line saying what it means, the data directory is unlocked, and the next start loses nothing."""

from __future__ import annotations

import errno
import logging

import pytest

from engine.storage import NodeStorage
from engine.testing.faults import FaultPlan
from tests.engine.session.conftest import Node


def filled(data_dir) -> tuple[NodeStorage, list[str]]:
    storage = NodeStorage(data_dir)
    storage.open(background=False)
    queued = Node(storage).seed("q", *[b"content %d" % i for i in range(20)])
    return storage, sorted(f.uuid for f in queued)


def recovered_uuids(data_dir) -> list[str]:
    storage = NodeStorage(data_dir)
    try:
        recovered = storage.open(background=False)
        assert storage.verify().ok
        return sorted(f.uuid for f in recovered.queues.get("q", []))
    finally:
        storage.close()


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EIO])
def test_a_checkpoint_failing_at_close_is_one_line_and_nothing_is_lost(tmp_path, caplog, error):
    data_dir = tmp_path / "node"
    storage, uuids = filled(data_dir)
    plan = FaultPlan(fail_at=1, errno=error, operations={"write", "sync"}, persistent=True,
                     matches="flowfile_repository")
    with plan.installed(), caplog.at_level(logging.ERROR):
        failures = storage.close()
    assert plan.triggered
    reason = "No space left on device" if error == errno.ENOSPC else "Input/output error"
    assert failures == [f"could not write the checkpoint of {data_dir / 'flowfile_repository'}: {reason}; every "
                        "committed FlowFile is in the journals and will be recovered at the next start"]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == failures
    assert not caplog.records[-1].exc_info, "a line, not a traceback"
    with pytest.raises(RuntimeError, match="closed"):
        storage.content.open_writer()
    assert storage.close() == [], "closing again does nothing"
    assert recovered_uuids(data_dir) == uuids, "unlocked, and every committed FlowFile is back"


def test_a_repository_failing_to_close_does_not_keep_the_others_open(tmp_path):
    data_dir = tmp_path / "node"
    storage, uuids = filled(data_dir)
    plan = FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write", "sync", "open", "mkdir", "rename"},
                     persistent=True, matches="provenance_repository")
    with plan.installed():
        (failure,) = storage.close()
    assert failure.startswith(f"could not close the provenance repository {data_dir / 'provenance_repository'}: "
                              "No space left on device; events not yet rolled over stay in its journals")
    journals = list((data_dir / "flowfile_repository" / "journals").iterdir())
    assert len(journals) == 1 and journals[0].stat().st_size < 200, "the FlowFile repository was checkpointed"
    with pytest.raises(RuntimeError, match="closed"):
        storage.content.open_writer()
    assert recovered_uuids(data_dir) == uuids
