"""Checking a shard's index and rebuilding it from the segments (see ``shard`` for when).

A mixin of :class:`~engine.provenance.shard.Shard`: it works on the shard's connections, its
loaded state and its damage log.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Sequence

import msgpack

from engine import fileops
from engine.damage import Damage
from engine.provenance import codec, index, segment
from engine.provenance.event import ProvenanceEvent
from engine.provenance.frames import OVERHEAD
from engine.provenance.segment import SEGMENT_VERSION, Block

__all__ = ["DECODE_ERRORS", "ShardIndexCheck", "segment_names"]

log = logging.getLogger(__name__)

_INDEX_REMEDY = "Nothing to do: the index was rebuilt; the damaged copy is in the quarantine folder."
#: Decoding a damaged event can fail in any of these ways.
DECODE_ERRORS = (ValueError, TypeError, IndexError, KeyError, msgpack.UnpackException)


def segment_names(path: Path) -> list[str]:
    """The segment files of the shard at ``path``, in id order."""
    names = [entry.name for entry in os.scandir(path) if entry.name.endswith(".seg") and entry.name[:-4].isdigit()]
    return sorted(names, key=lambda name: int(name[:-4]))


class ShardIndexCheck:
    """The index checks and rebuilds of a shard (a mixin of ``Shard``)."""

    def _check_index(self) -> str | None:
        """Open the index; None when it can be used, else what is wrong with it ("" for an older layout)."""
        db = self.path / index.INDEX
        try:
            if db.stat().st_size == 0:
                return "the index is empty"
        except FileNotFoundError:
            return "the index is missing"
        try:
            self._writer = index.connect(db)
            if not self._load():
                return ""
            return self._verify()
        except (sqlite3.DatabaseError, ValueError, TypeError) as error:
            return f"the index cannot be read: {error}"

    def verify_index(self, below: int | None) -> None:
        """The part of the index check that reads the whole index (SQLite's ``quick_check`` and
        the row count), run once after opening; a failing index is rebuilt from the segments
        (call with no append under way)."""
        if self.verified:
            return
        try:
            with self._lock:
                check = [row[0] for row in self._writer.execute("PRAGMA quick_check")]
                (count,) = self._writer.execute("SELECT count(*) FROM events").fetchone()
            if check != ["ok"]:
                problem = f"SQLite's quick_check fails: {'; '.join(check[:3])}"
            elif count != self.count:
                problem = f"its meta counts {self.count} events, its rows {count}"
            else:
                problem = None
        except sqlite3.DatabaseError as error:
            problem = f"the index cannot be read: {error}"
        if problem is not None:
            with self._lock:
                self.index_damaged = True
            self._rebuild(problem, below)
            self._open_reader()
            with self._lock:
                self.index_damaged = False
        self.verified = True

    def _verify(self) -> str | None:
        """What makes the loaded index disagree with its rows or the segments, or None."""
        # One aggregate per statement: SQLite answers a lone min() or max() of the key or of an
        # indexed column by walking one edge of a B-tree, and scans the table for two at once.
        min_id, max_id, min_time, max_time = (
            self._writer.execute(f"SELECT {bound} FROM events").fetchone()[0]
            for bound in ("min(id)", "max(id)", "min(time)", "max(time)")
        )
        count = self.count
        if (min_id or 0, max_id or 0) != (self.min_id, self.max_id) or (min_id is None) != (count == 0):
            return f"its meta (count {self.count}, ids {self.min_id}–{self.max_id}) disagrees with its rows"
        if count and (min_time, max_time) != (self.min_time, self.max_time):
            return "its meta disagrees with its rows on the time span"
        if count and (not self._block_ids or self._block_ids[0] > self.min_id):
            return "its blocks do not start at its first event"
        if self.segment_version < SEGMENT_VERSION:
            return None
        rows: dict[str, list[tuple[int, int, int]]] = {}
        for first_id, (name, offset, length) in zip(self._block_ids, self._blocks):
            rows.setdefault(name, []).append((offset, length, first_id))
        try:
            for name, blocks in rows.items():
                if not self._blocks_agree(name, sorted(blocks)):
                    return f"its blocks of segment {name} are not where it says"
        except OSError as error:
            return f"a segment it names cannot be read: {error}"
        return None

    def _blocks_agree(self, name: str, blocks: list[tuple[int, int, int]]) -> bool:
        """Whether the index rows of a format-2 segment can be right. Rows are written back to
        back, so rows that are not are wrong; rows that are may still differ from the file when
        the segment is damaged, which reads report: the index is wrong only where the segment
        holds an intact frame other than the one the row names."""
        expected = len(segment.MAGIC)
        for offset, length, _ in blocks:
            if offset != expected:
                return False
            expected = offset + OVERHEAD + length
        chain = segment.frame_chain(self.path / name)
        for offset, length, first_id in blocks:
            found = chain.get(offset)
            if found is not None and found != (length, first_id) and segment.frame_checks_out(self.path / name, offset):
                return False
        return True

    def _rebuild(self, problem: str, below: int | None, names: Sequence[str] | None = None) -> None:
        """Index the segments afresh (``names``, else those in the folder now): ``problem`` says why
        ("" for an index of an older layout)."""
        self._close_connections()
        db = self.path / index.INDEX
        kept = ""
        if problem:
            try:
                for name in index.INDEX_FILES:
                    if (self.path / name).exists():
                        self.quarantine.copy(self.path / name)
            except OSError as error:
                kept = f"; the damaged index could not be kept in the quarantine ({error})"
        for name in index.INDEX_FILES:
            fileops.unlink(self.path / name, missing_ok=True)
        self.count = self.min_id = self.max_id = self.min_time = self.max_time = 0
        self.components, self.types = Counter(), Counter()
        self.segment_version = SEGMENT_VERSION
        self._writer = index.connect(db)
        index.create(self._writer)
        names = segment_names(self.path) if names is None else names
        indexed, unreadable, unknown = self._index_segments(names, self.first_id, below)
        self._load()
        summary = f"{indexed} event(s) re-indexed from {len(names)} segment(s), {unreadable} unreadable"
        if unknown:
            summary += f" and {unknown} damaged place(s) of unknown size"
        if problem:
            self.damage.record(Damage("provenance index", str(db), None, problem,
                                      f"rebuilt: {summary}{kept}", _INDEX_REMEDY))
        else:
            log.info("provenance: rebuilt the index of shard %s in the current layout: %s", self.name, summary)

    def _index_orphans(self, names: Sequence[str], below: int | None) -> None:
        referenced = {name for name, _, _ in self._blocks}
        orphans = [name for name in names if name not in referenced]
        if orphans:
            try:
                indexed, _, _ = self._index_segments(orphans, max(self.first_id, self.max_id + 1), below)
            except (OSError, sqlite3.OperationalError) as error:
                # Left for the next start; a rollover run again from the journals rewrites them.
                log.warning("provenance: shard %s: cannot index segment(s) %s now: %s", self.name,
                            ", ".join(orphans), error)
                return
            self._load()
            log.info("provenance: shard %s: indexed %d event(s) of segment(s) %s that no index row referenced "
                     "(left by an interrupted rollover)", self.name, indexed, ", ".join(orphans))

    def _index_segments(self, names: Sequence[str], low: int, below: int | None) -> tuple[int, int, int]:
        """Index every readable block of ``names`` whose ids lie in ``[low, below)`` and follow the
        ids already indexed, in one transaction; returns (events indexed, events unreadable,
        damaged places of unknown size). The caller reloads the shard's state."""
        conn = self._writer
        indexed = unreadable = unknown = 0
        count, min_id, min_time, max_time = self.count, self.min_id, self.min_time, self.max_time
        components, types = Counter(self.components), Counter(self.types)
        last = low - 1
        framed_only = self.segment_version >= SEGMENT_VERSION
        conn.execute("BEGIN")
        try:
            for name in names:
                path = self.path / name
                with open(path, "rb") as handle:
                    framed_only = framed_only and segment.is_framed(handle.read(len(segment.MAGIC)))
                for item in segment.walk(path):
                    if not isinstance(item, Block):
                        self._report(path, item.offset, item.found, item.ids)
                        if item.ids is None:
                            unknown += 1
                        else:
                            unreadable += len(item.ids)
                        continue
                    ids = item.ids
                    if ids[0] <= last or (below is not None and ids[-1] >= below):
                        continue
                    events, lost = self._decode_block(path, item)
                    unreadable += len(lost)
                    if not events:
                        continue
                    conn.execute("INSERT INTO blocks VALUES (?, ?, ?, ?)", (ids[0], name, item.offset, item.length))
                    fragments = codec.index_fragments(events, self.indexed_attributes)
                    index.insert(conn, [e.event_id for e in events], fragments)
                    index.add_counts(components, types, fragments)
                    times = [e.event_time for e in events]
                    if not count:
                        min_id, min_time, max_time = events[0].event_id, times[0], times[0]
                    min_time, max_time = min(min_time, *times), max(max_time, *times)
                    count += len(events)
                    indexed += len(events)
                    last = ids[-1]
            meta = {
                "version": codec.FORMAT_VERSION, "index": index.INDEX_VERSION,
                "segment": SEGMENT_VERSION if framed_only else 1, "compression": self.compression,
                "indexed_attributes": json.dumps(sorted(self.indexed_attributes)),
            }
            if count:
                meta.update(count=count, min_id=min_id, max_id=max(last, self.max_id), min_time=min_time,
                            max_time=max_time, **index.counts_meta(components, types))
            conn.execute("INSERT OR REPLACE INTO meta SELECT key, value FROM json_each(?)", (json.dumps(meta),))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return indexed, unreadable, unknown

    def _decode_block(self, path: Path, block: Block) -> tuple[list[ProvenanceEvent], list[int]]:
        events, lost = [], []
        for event_id, blob in zip(block.ids, block.events):
            try:
                events.append(codec.event_from_wire(codec.decode_wire(blob), event_id))
            except DECODE_ERRORS:
                lost.append(event_id)
        if lost:
            self._report(path, block.offset, "events that do not decode", lost)
        return events, lost

    def rebuild_index(self, below: int | None) -> None:
        """Rebuild an index found damaged while running (call with no append under way)."""
        with self._lock:
            self.index_damaged = True
        self._rebuild("the index failed while running", below)
        self._open_reader()
        with self._lock:
            self.index_damaged = False
        self.verified = True
