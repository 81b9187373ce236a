"""The backlog: events registered while the disk refused them, kept until it accepts them.

``register_events`` gives a batch its ids, then appends it to a journal. When the append fails
(ENOSPC, EIO: the journal is cut back), the batch stays in its journal set's ``frames``, which
the rollover stores in a shard from memory, and joins the set's ``backlog``, which the next
append to the set writes to the journal. So a session whose FlowFile-log commit succeeded
never fails for provenance, and its events keep their ids and their order.

The backlog holds at most ``limit`` events. Past it, batches are dropped and reported as a
:class:`Damage` naming how many events, their ids, their times and why, at most once a
minute while the disk keeps refusing (and at close), never silently. Events in the backlog
are in memory only until rolled over: a crash before that loses them.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Iterable

from engine.damage import Damage, DamageLog
from engine.provenance.frames import describe_ranges
from engine.provenance.journal import Journal, JournalFrame, JournalSet

__all__ = ["Backlog"]

log = logging.getLogger(__name__)

_REPORT_INTERVAL = 60.0


class _Dropped:
    """Dropped batches not reported yet."""

    def __init__(self) -> None:
        self.count = 0
        self.ids: list[tuple[int, int]] = []
        self.min_time: int | None = None
        self.max_time: int | None = None
        self.reasons: list[str] = []

    def add(self, frame: JournalFrame, reason: str) -> None:
        self.count += len(frame.events)
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

    def hold(self, generation: JournalSet, frame: JournalFrame, data: bytes, error: OSError) -> None:
        """Keep a batch whose append failed with ``error`` (its encoded frame is ``data``), or drop it."""
        count = len(frame.events)
        with self._lock:
            held = self.events + count <= self.limit
            if held:
                first = self.events == 0
                self.events += count
                generation.frames.append(frame)
                generation.backlog.append((frame, data))
            else:
                self._dropped = self._dropped or _Dropped()
                self._dropped.add(frame, f"{error}, with the backlog of {self.limit} events full")
        if held and first:
            log.warning("provenance: cannot write to the journals (%s); holding events in memory until the disk "
                        "accepts them (at most %d)", error, self.limit)
        if not held:
            self.report()

    def write(self, generation: JournalSet, journal: Journal) -> None:
        """Append the set's held batches to ``journal`` (the caller holds its lock) while it accepts them."""
        with self._lock:
            pending, generation.backlog = generation.backlog, []
        written = 0
        for position, (frame, data) in enumerate(pending):
            try:
                journal.append(data)
            except OSError:
                with self._lock:
                    generation.backlog[:0] = pending[position:]
                break
            written += len(frame.events)
        with self._lock:
            self.events -= written

    def stored(self, frames: Iterable[JournalFrame]) -> None:
        """Held batches were stored in a shard."""
        count = sum(len(frame.events) for frame in frames)
        with self._lock:
            self.events -= count

    def drop(self, frames: Iterable[JournalFrame], reason: str) -> None:
        """Held batches that will never be written (the repository closed first)."""
        frames = list(frames)
        with self._lock:
            for frame in frames:
                self.events -= len(frame.events)
                self._dropped = self._dropped or _Dropped()
                self._dropped.add(frame, reason)

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
            f"to {_iso(dropped.max_time)}",
            "Free space on the provenance repository's disk, or replace the failing disk.",
        ))


def _iso(millis: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(millis / 1000)) + f".{millis % 1000:03d} UTC"
