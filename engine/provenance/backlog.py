"""The backlog: events registered while the disk refused them, kept until it accepts them.

``register_events`` gives a batch its ids, then appends it to a journal. When the append fails
(ENOSPC, EIO: the journal is cut back), the batch stays in its journal set's ``frames``, which
the rollover stores in a shard from memory, and joins the set's ``backlog``, which the next
append to the set writes to the journal. So a session whose FlowFile-log commit succeeded
never fails for provenance, and its events keep their ids and their order.

A batch may come with a ``settle`` callback (``NodeStorage.commit`` passes one that settles
the batch's outbox entry in the FlowFile log): it is called once the batch is in a journal or a
shard. A held batch is settled only then, so a crash before it loses nothing: the next start
registers the events from the outbox. A batch registered without one is in memory only until
it is written or rolled over.

The backlog holds at most ``limit`` events. Past it, batches are dropped (and settled: the
outbox keeps nothing in memory without bound) and reported as a :class:`Damage` naming how many
events, their ids, their times and why, at most once a minute while the disk keeps refusing
(and at close), never silently. Held batches that the repository closes before the disk takes
them are reported the same way; those of FlowFile commits stay in the outbox for the next start.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Iterable

from engine.damage import Damage, DamageLog
from engine.provenance.frames import describe_ranges
from engine.provenance.journal import Held, Journal, JournalFrame, JournalSet, Settle

__all__ = ["Backlog"]

log = logging.getLogger(__name__)

_REPORT_INTERVAL = 60.0


class _Dropped:
    """Dropped batches not reported yet."""

    def __init__(self) -> None:
        self.count = 0
        self.kept = 0  # of them, events still in an outbox
        self.ids: list[tuple[int, int]] = []
        self.min_time: int | None = None
        self.max_time: int | None = None
        self.reasons: list[str] = []

    def add(self, frame: JournalFrame, reason: str, *, kept: bool = False) -> None:
        self.count += len(frame.events)
        if kept:
            self.kept += len(frame.events)
        last = frame.first_id + len(frame.events) - 1
        if self.ids and self.ids[-1][1] + 1 == frame.first_id:
            self.ids[-1] = (self.ids[-1][0], last)
        else:
            self.ids.append((frame.first_id, last))
        self.min_time = frame.min_time if self.min_time is None else min(self.min_time, frame.min_time)
        self.max_time = frame.max_time if self.max_time is None else max(self.max_time, frame.max_time)
        if reason not in self.reasons:
            self.reasons.append(reason)

    def describe_ids(self) -> str:
        return describe_ranges(self.ids, most=10)


class Backlog:
    """Counts, writes and bounds the batches held in memory; thread-safe."""

    def __init__(self, limit: int, damage: DamageLog, journal_dir: Path) -> None:
        self.limit = limit
        self.damage = damage
        self.journal_dir = journal_dir
        self.events = 0
        self._lock = threading.Lock()
        self._dropped: _Dropped | None = None
        self._reported_at = float("-inf")

    def hold(self, generation: JournalSet, frame: JournalFrame, data: bytes, error: OSError,
             settle: Settle | None = None) -> bool:
        """Keep a batch whose append failed with ``error`` (its encoded frame is ``data``) and
        return True (``settle`` is called once it is stored), or drop it and return False."""
        count = len(frame.events)
        with self._lock:
            held = self.events + count <= self.limit
            if held:
                first = self.events == 0
                self.events += count
                generation.frames.append(frame)
                generation.backlog.append(Held(frame, data, settle))
            else:
                self._dropped = self._dropped or _Dropped()
                self._dropped.add(frame, f"{error}, with the backlog of {self.limit} events full")
        if held and first:
            log.warning("provenance: cannot write to the journals (%s); holding events in memory until the disk "
                        "accepts them (at most %d)", error, self.limit)
        if not held:
            self.report()
        return held

    def write(self, generation: JournalSet, journal: Journal) -> None:
        """Append the set's held batches to ``journal`` (the caller holds its lock) while it
        accepts them, settling each one written."""
        with self._lock:
            pending, generation.backlog = generation.backlog, []
        written: list[Held] = []
        for position, held in enumerate(pending):
            try:
                journal.append(held.data)
            except OSError:
                with self._lock:
                    generation.backlog[:0] = pending[position:]
                break
            written.append(held)
        self.stored(written)

    def stored(self, batches: Iterable[Held]) -> None:
        """Held batches were written to a journal or stored in a shard: settle them."""
        batches = list(batches)
        with self._lock:
            self.events -= sum(len(held.frame.events) for held in batches)
        for held in batches:
            if held.settle is not None:
                held.settle()

    def drop(self, batches: Iterable[Held], reason: str) -> None:
        """Held batches that will never be written (the repository closed first); those with a
        ``settle`` stay unsettled, in their outbox."""
        batches = list(batches)
        with self._lock:
            for held in batches:
                self.events -= len(held.frame.events)
                self._dropped = self._dropped or _Dropped()
                self._dropped.add(held.frame, reason, kept=held.settle is not None)

    def report(self, *, force: bool = False) -> None:
        """Record the batches dropped since the last report (at most once a minute unless ``force``)."""
        with self._lock:
            dropped = self._dropped
            now = time.monotonic()
            if dropped is None or (not force and now - self._reported_at < _REPORT_INTERVAL):
                return
            self._dropped = None
            self._reported_at = now
        self.damage.record(Damage(
            "provenance journal", str(self.journal_dir), None,
            f"provenance events could not be written: {'; '.join(dropped.reasons)}",
            f"{dropped.count} event(s) dropped: ids {dropped.describe_ids()}, event times {_iso(dropped.min_time)} "
            f"to {_iso(dropped.max_time)}"
            + (f"; {dropped.kept} of them stay in the FlowFile repository's outbox and are registered again "
               "when the node starts" if dropped.kept else ""),
            "Free space on the provenance repository's disk, or replace the failing disk.",
        ))


def _iso(millis: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(millis / 1000)) + f".{millis % 1000:03d} UTC"
