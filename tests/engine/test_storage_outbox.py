"""``NodeStorage.commit``: the provenance events of a commit ride in its WAL transaction, so a
node killed between the commit and their registration registers them, once, when it starts again."""

from __future__ import annotations

import errno
import logging
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.provenance.event import ProvenanceEventType
from engine.storage import NodeStorage
from engine.testing.faults import FaultPlan
from engine.wal import snapshot as snapshots
from engine.wal.log import CommitFailedError
from tests.engine.session.conftest import Node

REPO_ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from engine.storage import NodeStorage
    from tests.engine.session.conftest import Node
    from tests.engine.test_storage_outbox import refusing_writes

    data_dir, crash = Path(sys.argv[1]), sys.argv[2]

    def die(*args):
        os.kill(os.getpid(), signal.SIGKILL)

    storage = NodeStorage(data_dir)
    storage.open(background=False)
    if crash == "after-start":
        die()
    if crash == "before-registering":
        storage.provenance.append_encoded = die
    elif crash == "before-settling":
        storage.flowfiles.wal.settle_outbox = die
    elif crash == "provenance-disk-full":
        with refusing_writes("provenance_repository/journals").installed():
            for _ in range(4):
                Node(storage).seed("q", b"a", b"b", b"c")
            assert storage.provenance.backlog.events == 12
            die()
    Node(storage).seed("q", b"a", b"b", b"c")
    die()
    """
)


def refusing_writes(under: str, operations: frozenset[str] = frozenset({"write"})) -> FaultPlan:
    """A plan under which every one of ``operations`` on a path holding ``under`` fails with
    ENOSPC, as on a full disk (install it)."""
    return FaultPlan(fail_at=1, errno=errno.ENOSPC, operations=operations, matches=under, persistent=True)


def run_child(data_dir: Path, crash: str) -> None:
    result = subprocess.run([sys.executable, "-c", CHILD, str(data_dir), crash], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == -signal.SIGKILL, result.stderr


def events_per_flowfile(data_dir: Path) -> dict[str, list[ProvenanceEventType]]:
    """The event types of each recovered FlowFile of queue ``q``, from a fresh start."""
    storage = NodeStorage(data_dir)
    try:
        recovered = storage.open(background=False)
        storage.provenance.rollover()
        return {f.uuid: [e.event_type for e in storage.provenance.events_mentioning(f.uuid)]
                for f in recovered.queues.get("q", [])}
    finally:
        storage.close()


@pytest.mark.parametrize("crash", ["before-registering", "before-settling"])
def test_a_node_killed_after_a_commit_has_its_events_once_when_it_starts_again(tmp_path, crash):
    data_dir = tmp_path / "node"
    run_child(data_dir, crash)
    events = events_per_flowfile(data_dir)
    assert len(events) == 3
    assert all(types == [ProvenanceEventType.CREATE] for types in events.values()), events


def test_events_registered_at_start_are_not_registered_again_after_another_kill(tmp_path):
    data_dir = tmp_path / "node"
    run_child(data_dir, "before-registering")
    run_child(data_dir, "after-start")  # registers them, then dies before any checkpoint
    events = events_per_flowfile(data_dir)
    assert len(events) == 3
    assert all(types == [ProvenanceEventType.CREATE] for types in events.values()), events


def test_events_that_could_not_be_registered_wait_in_the_snapshot_for_the_next_start(tmp_path, caplog):
    data_dir = tmp_path / "node"
    storage = NodeStorage(data_dir)
    storage.open(background=False)

    def refuse(encoded, settle=None):
        raise RuntimeError("the provenance repository is not open")

    storage.provenance.append_encoded = refuse
    with caplog.at_level(logging.ERROR):
        queued = Node(storage).seed("q", b"a", b"b")
    assert len(queued) == 2, "the commit stands"
    assert any("registered when the node starts again" in r.getMessage() for r in caplog.records)
    assert len(storage.flowfiles.wal.outbox) == 1
    del storage.provenance.append_encoded
    storage.close()  # checkpoints: the journals holding the entry are removed
    assert len(snapshot_outbox(data_dir)) == 1

    with caplog.at_level(logging.WARNING):
        events = events_per_flowfile(data_dir)
    assert sorted(f.uuid for f in queued) == sorted(events)
    assert all(types == [ProvenanceEventType.CREATE] for types in events.values()), events
    assert any("registered 2 provenance event(s)" in r.getMessage() for r in caplog.records)
    # Registered and settled: the snapshot of that start no longer holds it.
    assert snapshot_outbox(data_dir) == {}


def test_a_commit_without_events_writes_no_outbox_entry(tmp_path):
    storage = NodeStorage(tmp_path / "node")
    storage.open(background=False)
    try:
        before = storage.flowfiles.wal.next_txn_id
        storage.commit([], [])
        assert storage.flowfiles.wal.next_txn_id == before, "nothing to commit writes nothing"
        Node(storage).seed("q", b"a")
        assert storage.flowfiles.wal.outbox == {}, "settled once registered"
    finally:
        storage.close()


def test_a_failed_commit_leaves_no_open_key_behind(tmp_path):
    storage = NodeStorage(tmp_path / "node")
    storage.open(background=False)
    try:
        plan = FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write"}, matches="flowfile_repository")
        with plan.installed(), pytest.raises(CommitFailedError):
            Node(storage).seed("q", b"a")
        assert plan.triggered
        _, still_open = storage.flowfiles.wal.open_outbox_entry()
        assert still_open == []
        assert storage.flowfiles.wal.outbox == {}
    finally:
        storage.close()


def snapshot_outbox(data_dir: Path) -> dict:
    return snapshots.read_snapshot(data_dir / "flowfile_repository" / snapshots.SNAPSHOT_NAME).outbox


def test_events_held_while_the_provenance_journals_refuse_writes_survive_a_kill(tmp_path):
    data_dir = tmp_path / "node"
    run_child(data_dir, "provenance-disk-full")  # four commits, their events held in memory only
    events = events_per_flowfile(data_dir)
    assert len(events) == 12
    assert all(types == [ProvenanceEventType.CREATE] for types in events.values()), events


def test_held_events_settle_their_outbox_entries_once_a_journal_or_a_shard_takes_them(tmp_path):
    storage = NodeStorage(tmp_path / "node")
    storage.open(background=False)
    try:
        wal = storage.flowfiles.wal
        with refusing_writes("provenance_repository/journals").installed():
            Node(storage).seed("q", b"a")
            Node(storage).seed("q", b"b")
            assert len(wal.outbox) == 2, "held in memory only: the entries stay open"
            storage.provenance.rollover()  # the shards still take them
            assert wal.outbox == {}
            Node(storage).seed("q", b"c")
            assert len(wal.outbox) == 1
        Node(storage).seed("q", b"d")  # the disk accepts again: the held batch is written first
        assert wal.outbox == {}
        assert storage.provenance.backlog.events == 0
        storage.provenance.rollover()
        events = storage.provenance.get_events(range(10))
        assert [e.event_type for e in events] == [ProvenanceEventType.CREATE] * 4, "each once"
    finally:
        storage.close()


def test_events_held_when_the_node_stops_are_reported_and_registered_at_the_next_start(tmp_path):
    data_dir = tmp_path / "node"
    storage = NodeStorage(data_dir)
    storage.open(background=False)
    with refusing_writes("provenance_repository").installed():
        queued = Node(storage).seed("q", b"a", b"b")
        storage.close()  # the journals and the shards refuse: the held batch never reaches the disk
    damage = [entry for entry in storage.damage.entries() if entry.kind == "provenance journal"]
    assert damage and "2 of them stay in the FlowFile repository's outbox" in damage[-1].effect, damage
    assert len(snapshot_outbox(data_dir)) == 1

    events = events_per_flowfile(data_dir)
    assert sorted(f.uuid for f in queued) == sorted(events)
    assert all(types == [ProvenanceEventType.CREATE] for types in events.values()), events


def test_events_still_waiting_for_rollover_at_start_are_found_by_their_bytes(tmp_path):
    data_dir = tmp_path / "node"
    run_child(data_dir, "before-settling")  # the events are in a journal, their entry still open
    refusing_shards = refusing_writes("provenance_repository/shards", frozenset({"write", "mkdir", "open"}))
    storage = NodeStorage(data_dir)
    try:
        with refusing_shards.installed():
            recovered = storage.open(background=False)  # the journals cannot be rolled over: they wait
            assert refusing_shards.triggered
            assert storage.flowfiles.wal.outbox == {}, "found waiting, so settled and not registered again"
        storage.provenance.rollover()
        for flowfile in recovered.queues["q"]:
            assert [e.event_type for e in storage.provenance.events_mentioning(flowfile.uuid)] == \
                [ProvenanceEventType.CREATE]
    finally:
        storage.close()
