"""The write-ahead log: one journal transaction per update, periodic snapshots, recovery.

An update is acknowledged only once it is as durable as the sync policy promises, and applied
to the in-memory state only then: a write or sync that fails fails every commit whose frames
it carried, leaves the state as it was, and leaves the log on a healthy journal — the failed
bytes are cut off, or, when the file cannot be cut, the next commit opens a new journal whose
header records where the old one's committed bytes end. See ``docs/engine-storage.md``.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Generic, Iterable, Sequence, TypeVar

import msgpack

from engine import fileops
from engine.damage import Damage, DamageLog, Quarantine, StorageCorruptionError
from engine.memory import gc_paused
from engine.wal import snapshot as snapshots
from engine.wal.committer import Commit, GroupCommitter
from engine.wal.journal import (
    JournalEnd,
    JournalScan,
    JournalWriter,
    encode_transaction,
    journal_name,
    list_journals,
    parse_journal_name,
)
from engine.wal.outbox_keys import OpenKeys, in_runs
from engine.wal.recovery import REMEDY, RecoveryPlan, plan_recovery
from engine.wal.serde import SerDe, UpdateType
from engine.wal.sync_policy import SyncPolicy

__all__ = ["CheckpointReport", "CommitFailedError", "RecoveryReport", "SyncPolicy", "WriteAheadLog"]

log = logging.getLogger(__name__)

R = TypeVar("R")
T = TypeVar("T")

# Plain ints: comparing IntEnum members costs more than the rest of applying a record.
_UPDATE, _DELETE, _SWAP_OUT, _SWAP_IN, _SWAP_FILE_DELETED, _SWAP_FILE_RENAMED, _TRANSFER_RECEIVED, _OUTBOX = (
    int(UpdateType.UPDATE), int(UpdateType.DELETE), int(UpdateType.SWAP_OUT), int(UpdateType.SWAP_IN),
    int(UpdateType.SWAP_FILE_DELETED), int(UpdateType.SWAP_FILE_RENAMED), int(UpdateType.TRANSFER_RECEIVED),
    int(UpdateType.OUTBOX),
)

#: How long transfer marks are kept by default (ms): a day, far longer than any resend takes.
TRANSFER_MARK_WINDOW_MS = 24 * 3600 * 1000

_thread_state = threading.local()


def _packer() -> msgpack.Packer:
    """This thread's packer (creating one per call costs more than the packing)."""
    packer = getattr(_thread_state, "packer", None)
    if packer is None:
        packer = _thread_state.packer = msgpack.Packer()
    return packer


class CommitFailedError(OSError):
    """An update that was not written: nothing of it was applied, and the log can go on."""


@dataclass
class RecoveryReport:
    """What recovery found: the snapshot, the journals replayed, and any damage.

    ``notes`` are harmless findings (torn tails, bytes of failed commits); ``damages`` the
    damage found; ``given_up`` what an accepted damage cost; ``quarantine`` where the files
    were copied before anything changed.
    """

    snapshot_records: int = 0
    snapshot_max_txn_id: int = -1
    journals: list[JournalScan] = field(default_factory=list)
    transactions_replayed: int = 0
    records: int = 0
    swap_locations: int = 0
    transfer_marks: int = 0
    outbox: int = 0
    seconds: float = 0.0
    damages: list[Damage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    given_up: list[str] = field(default_factory=list)
    quarantine: Path | None = None


@dataclass
class CheckpointReport:
    """What a checkpoint wrote."""

    max_txn_id: int
    records: int
    swap_locations: int
    journals_removed: int
    seconds: float
    transfer_marks: int = 0
    outbox: int = 0


class WriteAheadLog(Generic[R]):
    """A write-ahead log of records keyed by id, a set of swap-file locations and transfer marks.

    Transfer marks (key -> received-at ms, from TRANSFER_RECEIVED records) say which FlowFiles
    sent by peers were taken; a checkpoint drops those older than ``transfer_mark_window_ms``.

    The outbox (key -> value, from OUTBOX records) holds work due once a transaction is
    durable: take a key with ``open_outbox_entry``, commit the record, do the work, then call
    ``settle_outbox`` (also when the commit failed). An OUTBOX record names the lower keys still
    open when its key was taken (as runs of consecutive keys), and keys only grow: after
    replaying the journals, the record of the highest key tells which entries were settled
    before it, so a crash brings back only the entries open at the end, not every one written
    since the last checkpoint. An entry whose work was done but not yet settled comes back too:
    doing the work must be idempotent.

    ``update`` appends one transaction and, once it is durable, applies it to the in-memory
    state; ``checkpoint`` writes that state as a snapshot and drops the journals it covers;
    ``recover`` rebuilds the state from the snapshot and the journals, refusing damage unless
    ``accept_damage``. Create it, call ``recover`` once, then update.
    """

    def __init__(
        self,
        directory: Path,
        serde: SerDe[R],
        *,
        sync_policy: SyncPolicy = SyncPolicy.GROUPED,
        accept_damage: bool = False,
        damage: DamageLog | None = None,
        quarantine: Quarantine | None = None,
        transfer_mark_window_ms: int = TRANSFER_MARK_WINDOW_MS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = Path(directory)
        self.journal_directory = self.directory / "journals"
        self.serde = serde
        self.sync_policy = SyncPolicy(sync_policy)
        self.accept_damage = accept_damage
        self.damage = damage or DamageLog()
        self.quarantine = quarantine or Quarantine(self.directory.parent)
        self.records: dict[int, R] = {}
        self.swap_locations: set[str] = set()
        self.transfer_marks: dict[str, int] = {}
        self.transfer_mark_window_ms = transfer_mark_window_ms
        self.outbox: dict[int, Any] = {}
        self._outbox_lock = threading.Lock()
        self._outbox_keys = itertools.count(time.time_ns())  # unique across restarts
        self._open_outbox = OpenKeys()  # keys taken and not settled, committed or not
        # The highest key applied and the runs its record names (what replay prunes by).
        self._latest_outbox: tuple[int, Sequence[int]] = (-1, ())
        self._clock = clock
        self._committer = GroupCommitter(
            self._write_batch, max_batch=1 if self.sync_policy is SyncPolicy.ALWAYS else None
        )
        self._checkpoint_lock = threading.Lock()
        self._journal: JournalWriter | None = None
        self._tail: JournalEnd | None = None
        self._next_txn_id = 0
        self._closed = False

    # -- recovery -------------------------------------------------------------------------

    def recover(self, *, read_only: bool = False) -> RecoveryReport:
        """Rebuild the state from disk and open a new journal; call once, before any update.

        Damage makes it raise :class:`StorageCorruptionError` without changing any file, unless
        the log was created with ``accept_damage``: then the snapshot and journals are first
        copied to the quarantine folder, everything readable is recovered, and the report says
        what was given up. ``read_only`` changes no file, never raises for damage (the report
        lists it) and opens no journal (for inspection); such a log accepts no update.
        """
        with gc_paused():
            return self._recover(read_only)

    def _recover(self, read_only: bool) -> RecoveryReport:
        started = time.monotonic()
        plan = plan_recovery(self.directory, salvage=read_only or self.accept_damage)
        report = RecoveryReport(damages=plan.damages, notes=plan.notes, given_up=plan.given_up)
        if plan.damages and not read_only:
            if not self.accept_damage:
                raise StorageCorruptionError(plan.damages, REMEDY)
            report.quarantine = self._keep_log_files()
        self._load(plan, report)
        report.seconds = time.monotonic() - started
        if read_only:
            self._closed = True
            return report
        for note in plan.notes:
            log.warning("%s", note)
        for damage in plan.damages:
            self.damage.record(damage)
        if plan.given_up:
            log.error("started despite damage (copies in %s); given up: %s", report.quarantine, "; ".join(plan.given_up))
        self._carry_out(plan)
        if plan.damages or plan.legacy:
            # Fold what was read into a fresh snapshot: the next start meets neither the damage
            # (its files are in the quarantine) nor the older formats.
            self.checkpoint()
        return report

    def _load(self, plan: RecoveryPlan, report: RecoveryReport) -> None:
        serde = self.serde
        if plan.snapshot is not None:
            contents = plan.snapshot
            report.snapshot_max_txn_id = contents.max_txn_id
            report.snapshot_records = len(contents.records)
            # A snapshot holds only current states: no need to dispatch on the update type.
            version = contents.serde_version
            from_wire, record_id = serde.from_wire, serde.record_id
            self.records = {record_id(record): record for record in (from_wire(w, version) for w in contents.records)}
            self.swap_locations.update(contents.swap_locations)
            self.transfer_marks.update(contents.transfer_marks)
            self.outbox.update(contents.outbox)
        for version, wire_records in plan.transactions():
            for record in [serde.from_wire(wire, version) for wire in wire_records]:
                self._apply(record)
            report.transactions_replayed += 1
        report.journals = plan.journals
        self._next_txn_id = plan.next_txn
        self._tail = plan.tail
        report.records = len(self.records)
        report.swap_locations = len(self.swap_locations)
        report.transfer_marks = len(self.transfer_marks)
        latest, still_open = self._latest_outbox
        for key in [key for key in self.outbox if key < latest and not in_runs(still_open, key)]:
            del self.outbox[key]
        report.outbox = len(self.outbox)
        self._open_outbox = OpenKeys(self.outbox)
        self._outbox_keys = itertools.count(max(time.time_ns(), max(self.outbox, default=0) + 1))

    def _keep_log_files(self) -> Path:
        """Copy the snapshot files and the journals to the quarantine folder."""
        for name in (snapshots.SNAPSHOT_NAME, snapshots.PARTIAL_NAME):
            if (self.directory / name).exists():
                self.quarantine.copy(self.directory / name)
        if self.journal_directory.is_dir():
            self.quarantine.copy(self.journal_directory)
        return self.quarantine.folder

    def _carry_out(self, plan: RecoveryPlan) -> None:
        """The changes recovery makes once the plan is accepted."""
        if plan.promote_partial:
            log.info("found only %s: promoting it to %s", snapshots.PARTIAL_NAME, snapshots.SNAPSHOT_NAME)
            snapshots.promote_partial(self.directory)
        elif plan.delete_partial:
            fileops.unlink(self.directory / snapshots.PARTIAL_NAME, missing_ok=True)
            fileops.sync_directory(self.directory)
        fileops.make_directory(self.journal_directory)
        for path in plan.remove:
            fileops.unlink(path, missing_ok=True)
        self._journal = self._create_journal(self._next_txn_id, self._tail)

    def _create_journal(self, first_txn: int, previous: JournalEnd | None) -> JournalWriter:
        # Journals sort by (first transaction, sequence): a journal that follows an empty one
        # starting at the same transaction must sort after it.
        parsed = parse_journal_name(previous.name) if previous is not None else None
        sequence = parsed[1] + 1 if parsed is not None and parsed[0] == first_txn else 0
        while (self.journal_directory / journal_name(first_txn, sequence)).exists():
            sequence += 1
        return JournalWriter(
            self.journal_directory / journal_name(first_txn, sequence), self.serde.name, self.serde.version,
            first_txn, previous, dsync=self.sync_policy is not SyncPolicy.OS,
        )

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
        elif kind == _TRANSFER_RECEIVED:
            key, received_at = serde.transfer_mark(record)
            self.transfer_marks[key] = received_at
        elif kind == _OUTBOX:
            key, value, still_open = serde.outbox_entry(record)
            with self._outbox_lock:
                self.outbox[key] = value
                # Only recovery prunes by it: in a running log every entry applied is still open.
                if key > self._latest_outbox[0]:
                    self._latest_outbox = (key, still_open)

    def open_outbox_entry(self) -> tuple[int, list[int]]:
        """A new outbox key, higher than every key taken before, and the lower keys still open
        as flat runs ``[first, last, ...]`` (what an OUTBOX record of that key holds)."""
        with self._outbox_lock:
            key = next(self._outbox_keys)
            still_open = self._open_outbox.runs()
            self._open_outbox.add(key)
        return key, still_open

    def settle_outbox(self, key: int) -> None:
        """The work of outbox entry ``key`` is done, or its transaction failed: the next
        snapshot leaves it out, and the next OUTBOX record says so."""
        with self._outbox_lock:
            self._open_outbox.discard(key)
            self.outbox.pop(key, None)

    def update(self, records: Iterable[R], *, force_sync: bool = False) -> int:
        """Append ``records`` as one transaction, apply them once durable, return its id.

        The transaction is durable as the sync policy promises when this returns;
        ``force_sync`` makes it durable against power loss whatever the policy (swapping uses
        it). A failure raises :class:`CommitFailedError` and applies nothing.
        """
        if type(records) is not list:
            records = list(records)
        if self._closed:
            raise RuntimeError("the write-ahead log is closed")
        to_wire = self.serde.to_wire
        commit = Commit(records, _packer().pack([to_wire(record) for record in records]), force_sync)
        self._committer.submit(commit)
        if commit.error is not None:
            raise commit.error
        return commit.txn_id

    def _write_batch(self, batch: list[Commit]) -> None:
        """Write, sync and apply ``batch`` as consecutive transactions, or fail all of it."""
        if self._closed:
            for commit in batch:
                commit.settle(error=RuntimeError("the write-ahead log is closed"))
            return
        journal = self._journal
        if journal is None or journal.broken:
            try:
                journal = self._writable_journal()
            except OSError as error:
                self._fail(batch, error, f"no journal could be opened in {self.journal_directory}")
                return
        first = self._next_txn_id
        if len(batch) == 1:
            data = encode_transaction(first, batch[0].payload)
            force = batch[0].force
        else:
            data = b"".join([encode_transaction(first + i, commit.payload) for i, commit in enumerate(batch)])
            force = any(commit.force for commit in batch)
        last = first + len(batch) - 1
        try:
            journal.append(data, last, len(batch))
            if force and not journal.dsync:
                journal.sync()
        except OSError as error:
            journal.cut_back()
            self._fail(batch, error, f"it was not written to journal {journal.path}")
            return
        self._next_txn_id = last + 1
        apply = self._apply
        for index, commit in enumerate(batch):
            for record in commit.records:
                apply(record)
            commit.settle(first + index)

    @staticmethod
    def _fail(batch: list[Commit], error: OSError, where: str) -> None:
        failure = CommitFailedError(
            error.errno, f"the commit failed: {where}: {error.strerror or error}; nothing of it was applied"
        )
        failure.__cause__ = error
        for commit in batch:
            commit.settle(error=failure)

    def _writable_journal(self) -> JournalWriter:
        """A new journal in place of a broken one (or of none)."""
        journal = self._journal
        previous = journal.end() if journal is not None else self._tail
        fresh = self._create_journal(self._next_txn_id, previous)
        if journal is not None:
            journal.close(end_marker=False)
            log.warning("continuing in journal %s; %s ends at byte %d", fresh.path, journal.path, journal.length)
        self._journal = fresh
        return fresh

    # -- checkpoints ----------------------------------------------------------------------

    def checkpoint(
        self, on_cut: Callable[[], T] | None = None, before_snapshot: Callable[[], None] | None = None
    ) -> tuple[CheckpointReport, T | None]:
        """Write a snapshot of the current state and remove the journals it covers.

        ``on_cut`` runs while updates are held, at the exact point the snapshot describes; what
        it returns is handed back once the snapshot is durable (the FlowFile repository uses it
        to release content claims only then). ``before_snapshot`` runs after updates resumed,
        before the snapshot is written (the content the snapshot references is synced there).
        A failure raises and leaves the log as it was: the old snapshot and every journal stay.
        """
        started = time.monotonic()
        with self._checkpoint_lock:
            self._committer.pause()
            try:
                if self._closed:
                    raise RuntimeError("the write-ahead log is closed")
                max_txn_id = self._next_txn_id - 1
                old = self._journal
                if old is None or old.broken or old.transactions > 0:
                    self._journal = self._create_journal(max_txn_id + 1, old.end() if old is not None else self._tail)
                    if old is not None:
                        old.close()
                current = self._journal.path
                records = list(self.records.values())
                swap_locations = set(self.swap_locations)
                horizon = int(self._clock() * 1000) - self.transfer_mark_window_ms
                self.transfer_marks = {key: at for key, at in self.transfer_marks.items() if at >= horizon}
                transfer_marks = dict(self.transfer_marks)
                outbox = dict(self.outbox)
                token = on_cut() if on_cut is not None else None
            finally:
                self._committer.resume()
            if before_snapshot is not None:
                before_snapshot()
            to_wire = self.serde.to_wire
            snapshots.write_snapshot(
                self.directory,
                (to_wire(record) for record in records),
                swap_locations,
                transfer_marks=transfer_marks,
                outbox=outbox,
                max_txn_id=max_txn_id,
                record_count=len(records),
                serde_name=self.serde.name,
                serde_version=self.serde.version,
                journal=current.name,
            )
            removed = remove_covered_journals(self.journal_directory, keep=current)
        report = CheckpointReport(max_txn_id, len(records), len(swap_locations), removed, time.monotonic() - started,
                                  len(transfer_marks), len(outbox))
        log.debug("checkpoint: %s", report)
        return report, token

    def close(self, *, checkpoint: bool = True) -> None:
        """Checkpoint (by default) and close the journal; no update is accepted afterwards.

        A checkpoint that fails is logged, not raised: the journals hold every commit.
        """
        if self._closed:
            return
        if checkpoint:
            try:
                self.checkpoint()
            except OSError as error:
                log.error("could not write the checkpoint of %s: %s; every committed transaction is in the "
                          "journals and is recovered at the next start", self.directory, error)
        self._committer.pause()
        try:
            self._closed = True
            self._committer.fail_queued(RuntimeError("the write-ahead log is closed"))
            if self._journal is not None:
                self._journal.close()
        finally:
            self._committer.resume()

    @property
    def closed(self) -> bool:
        """True once closed (or recovered read-only): no update is accepted."""
        return self._closed

    @property
    def next_txn_id(self) -> int:
        """The id the next transaction will get."""
        return self._next_txn_id


def remove_covered_journals(journal_directory: Path, keep: Path) -> int:
    """Delete every journal but ``keep`` (all of them are covered by the new snapshot); a
    journal that cannot be deleted now is left for the next checkpoint."""
    removed = 0
    for _, path in list_journals(journal_directory):
        if path != keep:
            try:
                fileops.unlink(path, missing_ok=True)
                removed += 1
            except OSError as error:
                log.warning("could not delete journal %s, which the snapshot covers (%s); the next checkpoint "
                            "tries again", path, error)
    if removed:
        try:
            fileops.sync_directory(journal_directory)
        except OSError as error:
            log.warning("could not sync %s after deleting journals (%s)", journal_directory, error)
    return removed
