"""How the write-ahead log judges what it finds on disk, before it changes anything.

:func:`plan_recovery` reads the snapshot files and every journal and returns a
:class:`RecoveryPlan`: which snapshot to start from, which journals to replay and up to where,
and every :class:`~engine.damage.Damage` found. It changes no file; the log carries the plan
out only when it holds no damage, or when the operator accepted the damage (then it first
keeps a copy of the files in the quarantine folder).

The rules (see ``engine.wal.journal`` for the formats):

- **Snapshot** (seed 001): with ``snapshot`` and ``.partial`` both present, the snapshot is used
  and ``.partial`` deleted; with only ``.partial``, it is promoted when complete. Because the
  checkpoint renames ``.partial`` over ``snapshot`` atomically, a lone incomplete ``.partial``
  can only come from a crash in the very first checkpoint: it is dropped only when the
  journals still start at transaction 0. An empty, cut or checksum-failing ``snapshot``, or no
  snapshot while the journals start later than transaction 0, is damage.
- **Journals**: replay starts at the journal the snapshot names (``max_txn_id + 1``); each
  journal names the one before it and where that one's committed bytes end, and transaction
  ids run on without a gap. Only the newest journal may end in a torn tail (a cut frame, or
  NUL bytes to the end of the file); a journal that ends before the length its successor
  recorded, a frame that fails a checksum with data after it, a false end marker, a gap in
  ids or a missing journal is damage. A newest journal whose header was never fully written
  holds nothing and is removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from engine.damage import Damage
from engine.wal.journal import (
    END_MARKER_SIZE,
    JournalEnd,
    JournalScan,
    list_journals,
    read_transactions,
    scan_journal,
)
from engine.wal.snapshot import (
    PARTIAL_NAME,
    SNAPSHOT_NAME,
    SnapshotContents,
    SnapshotCorruptionError,
    read_snapshot,
)

__all__ = ["RecoveryPlan", "plan_recovery", "REMEDY"]

REMEDY = (
    "Nothing was changed on disk. Restore the damaged file from a backup if you have one; or start the node with "
    "--accept-damage (setting flowfile_repository.accept_damage) to keep a copy of the repository in the "
    "quarantine folder, recover everything that is readable and report what was given up."
)


@dataclass
class RecoveryPlan:
    """What recovery will do (see the module docstring)."""

    snapshot: SnapshotContents | None = None
    delete_partial: bool = False
    promote_partial: bool = False
    journals: list[JournalScan] = field(default_factory=list)
    remove: list[Path] = field(default_factory=list)
    tail: JournalEnd | None = None
    next_txn: int = 0
    damages: list[Damage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    given_up: list[str] = field(default_factory=list)
    legacy: bool = False

    def transactions(self) -> Iterator[tuple[int, list[Any]]]:
        """Every readable transaction to replay, in order, each once, as (serde version of its
        journal, wire records)."""
        last = self.snapshot.max_txn_id if self.snapshot is not None else -1
        for scan in self.journals:
            for txn_id, wire in read_transactions(scan):
                if txn_id > last:
                    last = txn_id
                    yield scan.serde_version, wire


def _damage(kind: str, path: Path, offset: int | None, found: str, effect: str) -> Damage:
    return Damage(kind, str(path), offset, found, effect)


def plan_recovery(directory: Path, *, salvage: bool = False) -> RecoveryPlan:
    """Judge the log in ``directory`` (see the module docstring); with ``salvage`` (the
    operator accepted the damage), read past damage wherever whole frames can be found and say
    what was given up."""
    plan = RecoveryPlan()
    journal_directory = directory / "journals"
    journals = [path for _, path in list_journals(journal_directory)]
    scans = _scan_chain(journals, salvage)
    _choose_snapshot(directory, plan, scans)
    base = plan.snapshot.max_txn_id if plan.snapshot is not None else -1
    start = _chain_start(plan, scans, base, directory)
    chain = scans[start:] if start is not None else []
    _judge_chain(plan, chain, base, salvage)
    return plan


def _scan_chain(journals: list[Path], salvage: bool) -> list[JournalScan]:
    """Scan every journal, newest first, reading each older one up to the length its
    successor recorded."""
    scans: list[JournalScan] = []
    stop_at: int | None = None
    for path in reversed(journals):
        scan = scan_journal(path, stop_at=stop_at, resync=salvage)
        scans.append(scan)
        if scan.header_problem is not None and scan.header_torn and not scans[:-1]:
            stop_at = None  # a newest journal created by an interrupted open: the one before is the end
            continue
        stop_at = scan.previous.length if scan.previous is not None else None
    scans.reverse()
    return scans


def _choose_snapshot(directory: Path, plan: RecoveryPlan, scans: list[JournalScan]) -> None:
    snapshot, partial = directory / SNAPSHOT_NAME, directory / PARTIAL_NAME
    journals_from_start = bool(scans) and scans[0].first_txn == 0 and scans[0].previous is None
    if snapshot.exists():
        plan.delete_partial = partial.exists()
        try:
            plan.snapshot = read_snapshot(snapshot)
            return
        except SnapshotCorruptionError as error:
            plan.damages.append(_damage("snapshot", snapshot, error.offset, error.reason,
                                        "the state at the last checkpoint cannot be read"))
            plan.given_up.append(f"the snapshot {snapshot}: every FlowFile that no later transaction touched")
            return
    if partial.exists():
        try:
            plan.snapshot = read_snapshot(partial)
            plan.promote_partial = True
            return
        except SnapshotCorruptionError as error:
            if journals_from_start:
                plan.delete_partial = True
                plan.notes.append(f"{partial} is incomplete ({error.reason}): the first checkpoint was interrupted; "
                                  "the journals hold every transaction")
                return
            plan.damages.append(_damage("snapshot", partial, error.offset, error.reason,
                                        "there is no snapshot, and the journals do not start at transaction 0"))
            return
    if scans and not journals_from_start and scans[0].header_problem is None:
        first = scans[0].first_txn if scans[0].first_txn is not None else scans[0].first_frame_txn
        if scans[0].version == 1 and first == 0:
            return
        plan.damages.append(_damage(
            "snapshot", snapshot, None, "the file is missing",
            f"the oldest journal {scans[0].name} starts at transaction {first}: the state before it is lost"))


def _chain_start(plan: RecoveryPlan, scans: list[JournalScan], base: int, directory: Path) -> int | None:
    """Index of the first journal to replay."""
    named = plan.snapshot.journal if plan.snapshot is not None else None
    if named is not None:
        for index, scan in enumerate(scans):
            if scan.name == named:
                return index
        plan.damages.append(_damage(
            "journal", directory / "journals" / named, None, "the file is missing",
            f"the snapshot names it as the journal of transaction {base + 1} on: every transaction since the "
            "last checkpoint is lost"))
        plan.given_up.append(f"every transaction after {base} (journal {named} is missing)")
        return None
    if plan.snapshot is None:
        return 0  # every journal must be replayed, from transaction 0
    for index, scan in enumerate(scans):  # a snapshot of the earlier format names no journal
        first = scan.first_txn if scan.first_txn is not None else scan.first_frame_txn
        if first is not None and first > base:
            return index
        if scan.version == 1 and scan.last_txn is not None and scan.last_txn > base:
            return index
    return len(scans)


def _judge_chain(plan: RecoveryPlan, chain: list[JournalScan], base: int, salvage: bool) -> None:
    plan.legacy = any(scan.version == 1 for scan in chain) or (
        plan.snapshot is not None and plan.snapshot.journal is None)
    expected = base + 1
    previous: JournalScan | None = None
    for position, scan in enumerate(chain):
        successor = chain[position + 1] if position + 1 < len(chain) else None
        if scan.header_problem is not None:
            if successor is None and scan.header_torn:
                plan.remove.append(scan.path)
                plan.notes.append(f"journal {scan.path} holds only a cut header (a crash while it was opened); "
                                  "it is removed")
                continue
            plan.damages.append(_damage("journal", scan.path, 0, scan.header_problem,
                                        "its transactions cannot be read"))
            _give_up(plan, scan, "its whole content")
            previous = scan
            continue
        _check_link(plan, previous, scan)
        if scan.version == 2 and not plan.legacy and scan.first_txn != expected:
            plan.damages.append(_damage(
                "journal", scan.path, 0, f"it starts at transaction {scan.first_txn}",
                f"transaction {expected} was expected next: a journal is missing or was replaced"))
            if scan.first_txn > expected:
                plan.given_up.append(f"transactions {expected} to {scan.first_txn - 1} (missing)")
        _check_end(plan, scan, successor)
        if scan.version == 2:
            expected = max(expected, scan.first_txn)
        if scan.last_txn is not None:
            expected = max(expected, scan.last_txn + 1)
        for _, _, _, last_salvaged in scan.salvaged:
            if last_salvaged is not None:
                expected = max(expected, last_salvaged + 1)
        plan.journals.append(scan)
        previous = scan
    plan.next_txn = expected
    if plan.journals:
        plan.tail = JournalEnd(plan.journals[-1].name, expected - 1, plan.journals[-1].valid_end)
    if salvage:
        _note_missing_transactions(plan, base)


def _check_link(plan: RecoveryPlan, previous: JournalScan | None, scan: JournalScan) -> None:
    """A journal must name the one before it and agree on where that one ends."""
    if previous is None or previous.version != 2 or scan.version != 2 or previous.header_problem is not None:
        return
    if scan.previous is None or scan.previous.name != previous.name:
        named = scan.previous.name if scan.previous is not None else "no journal"
        plan.damages.append(_damage(
            "journal", scan.path, 0, f"its header names {named} as the journal before it",
            f"the journal before it is {previous.name}: a journal is missing or was replaced"))
        return
    last = previous.last_txn if previous.last_txn is not None else (previous.first_txn or 0) - 1
    if previous.problem is None and last != scan.previous.last_txn:
        plan.damages.append(_damage(
            "journal", previous.path, previous.valid_end, f"its last transaction is {last}",
            f"the next journal {scan.name} says it ends with transaction {scan.previous.last_txn}"))


def _check_end(plan: RecoveryPlan, scan: JournalScan, successor: JournalScan | None) -> None:
    """Only the newest journal may end early, and only in a torn tail."""
    problem = scan.problem
    recorded = successor.previous.length if successor is not None and successor.previous is not None else None
    if problem is None:
        if recorded is not None and scan.size > recorded and not (scan.size - recorded == END_MARKER_SIZE):
            plan.notes.append(f"journal {scan.path}: {scan.size - recorded} byte(s) after offset {recorded} were "
                              "written by a commit that failed; ignored")
        return
    if problem.torn and (successor is None or scan.version == 1):
        plan.notes.append(f"journal {scan.path} has a torn tail at byte offset {problem.offset} ({problem.reason}): "
                          "the unwritten end of the last write before a crash, discarded; no acknowledged commit "
                          "is lost")
        return
    if successor is None:
        effect = "the newest journal cannot be read past this point: the transactions after it would be lost"
        found = problem.reason
    elif problem.torn and recorded is not None:
        effect = f"the next journal {successor.name} says it holds {recorded} bytes of committed transactions"
        found = f"it ends at byte {scan.valid_end} ({problem.reason})"
    else:
        effect = f"it cannot be read past this point, and the next journal {successor.name} follows it"
        found = problem.reason
    plan.damages.append(_damage("journal", scan.path, problem.offset, found, effect))
    resumed = scan.salvaged[0][0] if scan.salvaged else scan.size
    _give_up(plan, scan, f"bytes {problem.offset} to {resumed} (unreadable)")


def _give_up(plan: RecoveryPlan, scan: JournalScan, what: str) -> None:
    plan.given_up.append(f"journal {scan.path}: {what}")


def _note_missing_transactions(plan: RecoveryPlan, base: int) -> None:
    """With salvage: list the transaction ids no readable frame holds."""
    present: list[tuple[int, int]] = []
    for scan in plan.journals:
        if scan.first_frame_txn is not None:
            present.append((scan.first_frame_txn, scan.last_txn))
        present.extend((first, last) for _, _, first, last in scan.salvaged if first is not None)
    present.sort()
    expected = base + 1
    for first, last in present:
        if first > expected:
            plan.given_up.append(f"transactions {expected} to {first - 1} (unreadable)")
        expected = max(expected, last + 1)
