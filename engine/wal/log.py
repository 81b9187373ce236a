"""The write-ahead log: one journal transaction per update, periodic snapshots, recovery."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Generic, Iterable, TypeVar

import msgpack

from engine import fileops
from engine.memory import gc_paused
from engine.wal import snapshot as snapshots
from engine.wal.journal import JournalReadResult, JournalWriter, encode_transaction, journal_path, list_journals, read_journal
from engine.wal.serde import SerDe, UpdateType

__all__ = ["SyncPolicy", "WriteAheadLog", "RecoveryReport", "CheckpointReport"]

log = logging.getLogger(__name__)

R = TypeVar("R")
T = TypeVar("T")

# Plain ints: comparing IntEnum members costs more than the rest of applying a record.
_UPDATE, _DELETE, _SWAP_OUT, _SWAP_IN, _SWAP_FILE_DELETED, _SWAP_FILE_RENAMED = (
    int(UpdateType.UPDATE), int(UpdateType.DELETE), int(UpdateType.SWAP_OUT), int(UpdateType.SWAP_IN),
    int(UpdateType.SWAP_FILE_DELETED), int(UpdateType.SWAP_FILE_RENAMED),
)


_thread_state = threading.local()


def _packer() -> msgpack.Packer:
    """This thread's packer (creating one per call costs more than the packing)."""
    packer = getattr(_thread_state, "packer", None)
    if packer is None:
        packer = _thread_state.packer = msgpack.Packer()
    return packer


class SyncPolicy(str, Enum):
    """When a committed transaction is forced to stable storage.

    * ``always``: each update is synced before it returns; survives a power loss, one sync per
      commit.
    * ``grouped``: each update is synced before it returns, but commits that arrive while a sync
      is running share the next one; the same guarantee as ``always`` at a fraction of the syncs.
    * ``os``: each update is handed to the kernel before it returns and synced only at
      checkpoints; survives a kill of the process, not a power loss or kernel crash.
    """

    ALWAYS = "always"
    GROUPED = "grouped"
    OS = "os"


@dataclass
class RecoveryReport:
    """What recovery found."""

    snapshot_records: int = 0
    snapshot_max_txn_id: int = -1
    journals: list[JournalReadResult] = field(default_factory=list)
    transactions_replayed: int = 0
    records: int = 0
    swap_locations: int = 0
    seconds: float = 0.0

    @property
    def torn_tails(self) -> list[JournalReadResult]:
        """Journals whose tail was torn by a crash."""
        return [journal for journal in self.journals if journal.torn_at is not None]


@dataclass
class CheckpointReport:
    """What a checkpoint wrote."""

    max_txn_id: int
    records: int
    swap_locations: int
    journals_removed: int
    seconds: float


class _GroupSync:
    """Lets concurrent committers share one write and one sync.

    Under the ``grouped`` policy a committer only queues its framed transaction; whoever finds
    no sync running becomes the leader, writes every queued frame with one call, syncs, and
    releases the committers the sync covered. Each waiting committer sleeps on a lock of its
    own, so a sync wakes exactly the threads it finished and none of them has to fight for a
    shared lock on the way out: thread hand-overs, not the disk, bound a Python process that
    commits from many threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.synced_txn = -1
        self._busy = False
        self._waiters: list[tuple[int, Any]] = []

    def wait_durable(self, txn_id: int, wal: WriteAheadLog[Any]) -> None:
        """Return once transaction ``txn_id`` is durable, syncing it if nobody else is."""
        while self.synced_txn < txn_id:
            with self._lock:
                if self.synced_txn >= txn_id:
                    return
                if self._busy:
                    gate = _new_locked_gate()
                    self._waiters.append((txn_id, gate))
                else:
                    gate = None
                    self._busy = True
            if gate is not None:
                gate.acquire()  # released once our transaction is durable, or to let us lead
                continue
            self._lead(wal)

    def _lead(self, wal: WriteAheadLog[Any]) -> None:
        # A leader keeps syncing, for a few rounds, whatever was queued during its last sync:
        # the next sync then starts at once instead of after another thread has been woken.
        for _ in range(_LEADER_ROUNDS):
            # Journals are swapped only while this object is busy (see ``pause``), and every
            # frame up to ``target`` was queued before ``target`` was published.
            target = wal._last_written_txn
            journal = wal._journal
            try:
                with wal._flush_lock:
                    wal._write_pending(journal)
                journal.sync()
            except BaseException:
                self._finish(None, keep_leading=False)
                raise
            if not self._finish(target, keep_leading=True):
                return
        self._finish(None, keep_leading=False)

    def pause(self) -> None:
        """Wait for a running sync to end and keep others from starting (until ``resume``)."""
        while True:
            with self._lock:
                if not self._busy:
                    self._busy = True
                    return
                gate = _new_locked_gate()
                self._waiters.append((-1, gate))
            gate.acquire()

    def resume(self, synced_txn: int | None) -> None:
        """End a pause; everything up to ``synced_txn`` (if given) is durable."""
        self._finish(synced_txn, keep_leading=False)

    def _finish(self, synced_txn: int | None, *, keep_leading: bool) -> bool:
        """Release the committers ``synced_txn`` covers; True if the caller should sync again."""
        with self._lock:
            if synced_txn is not None and synced_txn > self.synced_txn:
                self.synced_txn = synced_txn
            done = self.synced_txn
            released = [gate for txn, gate in self._waiters if txn <= done]
            waiting = [(txn, gate) for txn, gate in self._waiters if txn > done]
            again = keep_leading and bool(waiting)
            if not again:
                self._busy = False
                if waiting:
                    released.append(waiting.pop(0)[1])  # the next leader
            self._waiters = waiting
        for gate in released:
            gate.release()
        return again


_LEADER_ROUNDS = 8


def _new_locked_gate():
    gate = threading.Lock()
    gate.acquire()
    return gate


class WriteAheadLog(Generic[R]):
    """A write-ahead log of records keyed by id, plus a set of swap-file locations.

    ``update`` appends one transaction and applies it to the in-memory state; ``checkpoint``
    writes that state as a snapshot and drops the journals it covers; ``recover`` rebuilds the
    state from the snapshot and the journals. Create it, call ``recover`` once, then update.
    """

    def __init__(
        self,
        directory: Path,
        serde: SerDe[R],
        *,
        sync_policy: SyncPolicy = SyncPolicy.GROUPED,
        skip_corruption: bool = False,
    ) -> None:
        self.directory = Path(directory)
        self.journal_directory = self.directory / "journals"
        self.serde = serde
        self.sync_policy = SyncPolicy(sync_policy)
        self._always = self.sync_policy is SyncPolicy.ALWAYS
        self._grouped = self.sync_policy is SyncPolicy.GROUPED
        self.skip_corruption = skip_corruption
        self.records: dict[int, R] = {}
        self.swap_locations: set[str] = set()
        self._write_lock = threading.Lock()
        self._checkpoint_lock = threading.Lock()
        self._group_sync = _GroupSync()
        self._pending: deque[bytes] = deque()
        self._flush_lock = threading.Lock()
        self._flushed_txn = -1
        self._journal: JournalWriter | None = None
        self._next_txn_id = 0
        self._last_written_txn = -1
        self._closed = False

    # -- recovery -------------------------------------------------------------------------

    def recover(self, *, read_only: bool = False) -> RecoveryReport:
        """Rebuild the state from disk and open a new journal; call once, before any update.

        ``read_only`` rebuilds the state without changing any file and opens no journal (for
        inspection); such a log accepts no update.
        """
        with gc_paused():
            return self._recover(read_only)

    def _recover(self, read_only: bool) -> RecoveryReport:
        started = time.monotonic()
        if not read_only:
            fileops.make_directory(self.journal_directory)
        report = RecoveryReport()
        serde = self.serde
        contents = snapshots.load_snapshot(self.directory, read_only=read_only)
        if contents is not None:
            report.snapshot_max_txn_id = contents.max_txn_id
            report.snapshot_records = len(contents.records)
            # A snapshot holds only current states: no need to dispatch on the update type.
            version = contents.serde_version
            from_wire, record_id = serde.from_wire, serde.record_id
            self.records = {record_id(record): record for record in (from_wire(w, version) for w in contents.records)}
            self.swap_locations.update(contents.swap_locations)
        max_txn = report.snapshot_max_txn_id
        for first_txn, path in list_journals(self.journal_directory):
            if first_txn <= report.snapshot_max_txn_id:
                continue  # everything in it is already in the snapshot
            result = JournalReadResult(path)
            for txn_id, wire_records in read_journal(path, result, skip_corruption=self.skip_corruption):
                if txn_id <= max_txn:
                    continue
                version = result.serde_version
                for record in [serde.from_wire(wire, version) for wire in wire_records]:
                    self._apply(record)
                report.transactions_replayed += 1
                max_txn = txn_id
            report.journals.append(result)
        self._next_txn_id = max_txn + 1
        self._last_written_txn = max_txn
        self._flushed_txn = max_txn
        self._group_sync.synced_txn = max_txn
        report.records = len(self.records)
        report.swap_locations = len(self.swap_locations)
        report.seconds = time.monotonic() - started
        if read_only:
            self._closed = True
            return report
        self._open_journal()
        if report.torn_tails or any(j.skipped_corruption_at is not None for j in report.journals):
            # Fold the damaged journals into a fresh snapshot so that the next start does not
            # meet them again (and does not need the skip option a second time).
            self.checkpoint()
        return report

    def _open_journal(self) -> None:
        # A journal is named after its first transaction id, so that replaying journals in name
        # order replays transactions in id order; ids are skipped rather than a name reused.
        txn = self._next_txn_id
        while journal_path(self.journal_directory, txn).exists():
            txn += 1
        self._next_txn_id = txn
        self._journal = JournalWriter(
            journal_path(self.journal_directory, txn), self.serde.name, self.serde.version,
            dsync=self.sync_policy is not SyncPolicy.OS,
        )
        fileops.sync_directory(self.journal_directory)

    # -- updates --------------------------------------------------------------------------

    def _apply(self, record: R) -> None:
        serde = self.serde
        kind = serde.update_type(record)
        if kind <= _UPDATE:
            self.records[serde.record_id(record)] = record
        elif kind == _DELETE:
            self.records.pop(serde.record_id(record), None)
        elif kind == _SWAP_OUT:
            self.records.pop(serde.record_id(record), None)
            self.swap_locations.add(serde.swap_location(record))
        elif kind == _SWAP_IN:
            self.records[serde.record_id(record)] = record
            self.swap_locations.discard(serde.swap_location(record))
        elif kind == _SWAP_FILE_DELETED:
            self.swap_locations.discard(serde.swap_location(record))
        elif kind == _SWAP_FILE_RENAMED:
            self.swap_locations.discard(serde.original_swap_location(record))
            self.swap_locations.add(serde.swap_location(record))

    def update(self, records: Iterable[R], *, force_sync: bool = False) -> int:
        """Append ``records`` as one transaction, apply them, and return its id.

        The transaction is durable as the sync policy promises when this returns;
        ``force_sync`` makes it durable against power loss whatever the policy (swapping uses it).
        """
        if type(records) is not list:
            records = list(records)
        to_wire = self.serde.to_wire
        payload = _packer().pack([to_wire(record) for record in records])
        with self._write_lock:
            if self._closed:
                raise RuntimeError("the write-ahead log is closed")
            txn_id = self._next_txn_id
            frame = encode_transaction(txn_id, payload)
            if self._always:
                self._journal.append(frame)
            else:
                self._pending.append(frame)
            self._next_txn_id = txn_id + 1
            self._last_written_txn = txn_id
            apply = self._apply
            for record in records:
                apply(record)
            if self._always:
                self._journal.sync()
                self._group_sync.synced_txn = txn_id
                return txn_id
        if self._grouped or force_sync:
            self._group_sync.wait_durable(txn_id, self)
        elif self._flushed_txn < txn_id:
            self._flush(txn_id)
        return txn_id

    def _flush(self, txn_id: int) -> None:
        """Hand every queued frame up to ``txn_id`` to the kernel (``os`` policy).

        Frames are queued under the write lock and written outside it, so that a thread blocked
        in ``write`` never holds up the others' commits; one write serves every frame queued.
        """
        with self._flush_lock:
            if self._flushed_txn < txn_id:
                target = self._last_written_txn
                self._write_pending(self._journal)
                self._flushed_txn = target

    def _write_pending(self, journal: JournalWriter) -> None:
        """Write the queued frames, oldest first; callers hold ``_flush_lock``."""
        pending = self._pending
        if len(pending) == 1:
            journal.append(pending.popleft())
            return
        frames = []
        while pending:
            frames.append(pending.popleft())
        if frames:
            journal.append_frames(frames)

    # -- checkpoints ----------------------------------------------------------------------

    def checkpoint(self, on_cut: Callable[[], T] | None = None) -> tuple[CheckpointReport, T | None]:
        """Write a snapshot of the current state and remove the journals it covers.

        ``on_cut`` runs while updates are held, at the exact point the snapshot describes; what
        it returns is handed back once the snapshot is durable (the FlowFile repository uses it
        to release content claims only then).
        """
        started = time.monotonic()
        with self._checkpoint_lock:
            with self._write_lock:
                if self._closed:
                    raise RuntimeError("the write-ahead log is closed")
                max_txn_id = self._next_txn_id - 1
                self._group_sync.pause()
                try:
                    with self._flush_lock:
                        self._write_pending(self._journal)
                        self._flushed_txn = max_txn_id
                        self._journal.close()
                        self._open_journal()
                except BaseException:
                    self._group_sync.resume(None)
                    raise
                self._group_sync.resume(max_txn_id)
                records = list(self.records.values())
                swap_locations = set(self.swap_locations)
                token = on_cut() if on_cut is not None else None
                current_journal = self._journal.path
            to_wire = self.serde.to_wire
            snapshots.write_snapshot(
                self.directory,
                (to_wire(record) for record in records),
                swap_locations,
                max_txn_id=max_txn_id,
                record_count=len(records),
                serde_name=self.serde.name,
                serde_version=self.serde.version,
            )
            removed = remove_covered_journals(self.journal_directory, keep=current_journal)
        report = CheckpointReport(max_txn_id, len(records), len(swap_locations), removed, time.monotonic() - started)
        log.debug("checkpoint: %s", report)
        return report, token

    def close(self, *, checkpoint: bool = True) -> None:
        """Checkpoint (by default) and close the journal; no update is accepted afterwards."""
        if self._closed:
            return
        if checkpoint:
            self.checkpoint()
        with self._write_lock, self._flush_lock:
            self._closed = True
            self._write_pending(self._journal)
            self._journal.close()

    @property
    def closed(self) -> bool:
        """True once closed (or recovered read-only): no update is accepted."""
        return self._closed

    @property
    def next_txn_id(self) -> int:
        """The id the next transaction will get."""
        return self._next_txn_id


def remove_covered_journals(journal_directory: Path, keep: Path) -> int:
    """Delete every journal but ``keep`` (all of them are covered by the new snapshot)."""
    removed = 0
    for _, path in list_journals(journal_directory):
        if path != keep:
            fileops.unlink(path)
            removed += 1
    if removed:
        fileops.sync_directory(journal_directory)
    return removed
