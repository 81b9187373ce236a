"""A shard: the compressed, indexed long-term storage of a time span of provenance events.

Layout of ``shards/<first_event_time>-<first_event_id>/``:

- ``<first_id>.seg`` — one segment per rollover: checksummed blocks of events (see
  ``segment``).
- ``index.db`` — the SQLite index (see ``index``); its ``meta`` records the bounds, the
  counts and the layout versions (``index``, ``segment``).

Durability of an append: the segment is written as ``<first_id>.seg.partial``, fsynced, renamed
into place and the directory fsynced (a killed rollover leaves no truncated segment; opening
deletes a ``.partial`` file, whose events the journals still hold), then one SQLite transaction
adds the blocks and the index rows and commits with ``synchronous=FULL`` in WAL mode, so after
``append`` returns the events survive a power loss and the journals that held them may be
deleted. Shards are deleted whole, never edited, so deletion needs no index update.

Opening checks the index quickly: it must open, its meta and blocks must read, its bounds must
agree with its rows, and each block of a format-2 segment must be where its row says. The rest
of the check — SQLite's ``quick_check`` and the row count, which read the whole index — runs
later, once, from the repository's maintenance (``verify_index``), so a node with gigabytes of
provenance starts at once. An index that fails either check (or is missing, empty, or of an
older layout) is kept in the quarantine and rebuilt from the segments. A segment that no
index row references (a rollover interrupted between the segment and the commit, or an index
that lost its last transactions) is indexed too, within the ids the shard may hold: it may
keep the only copy of its events, and a rollover run again skips the ids already stored. A
block that cannot be read is reported once and left out of every read; an index that fails
while running is reported, left out of queries and rebuilt by ``rebuild_index``.
"""

from __future__ import annotations

import bisect
import json
import logging
import os
import shutil
import sqlite3
import threading
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any, Iterable, Sequence

from engine import fileops
from engine.damage import Damage, DamageLog, Quarantine
from engine.provenance import codec, index, segment
from engine.provenance.event import ProvenanceEvent
from engine.provenance.frames import OVERHEAD, describe_ids
from engine.provenance.segment import SEGMENT_VERSION, BlockError
from engine.provenance.shard_index import DECODE_ERRORS, ShardIndexCheck, segment_names

__all__ = ["Shard", "remove_directory"]

log = logging.getLogger(__name__)

_BLOCK_CACHE = 64
_INDEX_CHUNK = 65536
_BLOCK_REMEDY = "Restore the segment from a backup to get the events back; the other events are unaffected."


def remove_directory(path: Path) -> None:
    """Delete a shard directory; renamed to ``*.deleting`` first, so a crash mid-way leaves no
    half shard that ``open`` would take for a real one."""
    doomed = path.with_name(path.name + ".deleting")
    fileops.rename(path, doomed)
    fileops.sync_directory(doomed.parent)
    shutil.rmtree(doomed)


class Shard(ShardIndexCheck):
    """One shard directory; appends come from one thread at a time, reads from any.

    Made by ``create`` (a new shard) or ``open`` (an existing one).
    """

    def __init__(self, path: Path, *, compression: str, indexed_attributes: Iterable[str],
                 damage: DamageLog, quarantine: Quarantine) -> None:
        self.path = path
        self.damage = damage
        self.quarantine = quarantine
        self._lock = threading.Lock()
        self._cache: OrderedDict[int, tuple[tuple[int, ...], tuple[bytes, ...]]] = OrderedDict()
        self._reported: set[int] = set()  # blocks whose damage was recorded
        self._unreadable: set[int] = set()
        self.deleted = False
        #: Set when the index failed while running: queries leave the shard out until rebuilt.
        self.index_damaged = False
        #: Whether the full index check (``verify_index``) has run since the shard was opened.
        self.verified = False
        self.compression = compression
        self.indexed_attributes = frozenset(indexed_attributes)
        self.segment_version = SEGMENT_VERSION
        self.count = self.min_id = self.max_id = self.min_time = self.max_time = 0
        #: Events of each component key and of each type (the planner's figures, see ``search``).
        self.components: Counter[int] = Counter()
        self.types: Counter[str] = Counter()
        self._block_ids: list[int] = []
        self._blocks: list[tuple[str, int, int]] = []
        self._writer: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._index_bytes = 0
        self.size = 0

    @classmethod
    def create(
        cls, parent: Path, first_time: int, first_id: int, *, compression: str, indexed_attributes: Iterable[str],
        damage: DamageLog, quarantine: Quarantine,
    ) -> Shard:
        """Make a new, empty shard under ``parent`` (or take over the one a failed rollover left)."""
        path = parent / f"{first_time}-{first_id}"
        fileops.make_directory(path, parents=False)
        shard = cls(path, compression=compression, indexed_attributes=indexed_attributes, damage=damage,
                    quarantine=quarantine)
        shard._writer = index.connect(path / index.INDEX)
        try:
            index.create(shard._writer)
            shard._load()
            shard._open_reader()
        except BaseException:
            shard.close()
            raise
        shard.verified = True
        return shard

    @classmethod
    def open(
        cls, path: Path, *, below: int | None, compression: str, indexed_attributes: Iterable[str],
        damage: DamageLog, quarantine: Quarantine,
    ) -> Shard | None:
        """Open an existing shard, checking and if need be rebuilding its index; None when it
        holds no segment (the caller deletes it). ``below`` is the first id of the next shard:
        the ids this one may hold stop there."""
        partial = segment.remove_partial(path)
        if partial:
            log.info("provenance: shard %s: deleted the half-written segment(s) %s of a rollover that was "
                     "interrupted (its journals are rolled over again)", path.name, ", ".join(partial))
        names = segment_names(path)
        if not names:
            return None
        shard = cls(path, compression=compression, indexed_attributes=indexed_attributes, damage=damage,
                    quarantine=quarantine)
        problem = shard._check_index()
        if problem is not None:
            shard._rebuild(problem, below, names)
            shard.verified = True
        else:
            shard._index_orphans(names, below)
        shard._open_reader()
        return shard

    @property
    def name(self) -> str:
        """The directory name, ``<first_event_time>-<first_event_id>``."""
        return self.path.name

    @property
    def first_id(self) -> int:
        """The first id this shard may hold (from its name)."""
        return int(self.name.rsplit("-", 1)[1])

    # -- the index: loading (checking and rebuilding: see ``shard_index``) ----------------------

    def _load(self) -> bool:
        """Read the meta and the blocks into memory; False for an index of an older layout."""
        meta = dict(self._writer.execute("SELECT key, value FROM meta"))
        if meta.get("count", 0) and meta.get("index", 1) < index.INDEX_VERSION:
            return False
        self.compression = meta.get("compression", self.compression)
        if "indexed_attributes" in meta:
            self.indexed_attributes = frozenset(json.loads(meta["indexed_attributes"]))
        self.segment_version = meta.get("segment", 1 if meta.get("count") else SEGMENT_VERSION)
        if self.segment_version not in (1, SEGMENT_VERSION) or self.compression not in ("zstd", "none"):
            raise ValueError(f"unknown segment format {self.segment_version!r} or compression {self.compression!r}")
        self.count = meta.get("count", 0)
        self.min_id, self.max_id = meta.get("min_id", 0), meta.get("max_id", 0)
        self.min_time, self.max_time = meta.get("min_time", 0), meta.get("max_time", 0)
        self.components, self.types = index.meta_counts(meta)
        rows = self._writer.execute("SELECT first_id, segment, offset, length FROM blocks ORDER BY first_id")
        block_ids, blocks = [], []
        for first_id, name, offset, length in rows:
            block_ids.append(first_id)
            blocks.append((name, offset, length))
        with self._lock:
            self._block_ids, self._blocks = block_ids, blocks
            self._cache.clear()
        return True

    def _report(self, path: Path, offset: int, found: str, ids: Iterable[int] | None) -> None:
        lost = f"events {describe_ids(ids)}" if ids is not None else "an unknown number of events"
        self.damage.record(Damage(
            "provenance block", str(path), offset, found,
            f"{lost} cannot be read; queries, lineage and content lookups leave them out", _BLOCK_REMEDY,
        ))

    def _open_reader(self) -> None:
        reader = index.connect(self.path / index.INDEX)
        with self._lock:
            self._reader = reader
        self._index_bytes = self._index_size()
        self.size = self._disk_size()

    def _close_connections(self) -> None:
        with self._lock:
            for conn in (self._reader, self._writer):
                if conn is not None:
                    conn.close()
            self._reader = self._writer = None

    # -- appends ---------------------------------------------------------------------------------

    def append(
        self, ids: Sequence[int], blobs: Sequence[bytes], fragments: Sequence[str], min_time: int, max_time: int
    ) -> None:
        """Store and index events: ascending ``ids``, their stored bytes and index fragments."""
        name = f"{ids[0]}.seg"
        rows = segment.write(self.path / name, ids, blobs, self.compression)
        first = self.count == 0
        if not first:
            min_time, max_time = min(min_time, self.min_time), max(max_time, self.max_time)
        components, types = Counter(self.components), Counter(self.types)
        index.add_counts(components, types, fragments)
        meta = {
            "version": codec.FORMAT_VERSION,
            "index": index.INDEX_VERSION,
            "segment": SEGMENT_VERSION,
            "compression": self.compression,
            "indexed_attributes": json.dumps(sorted(self.indexed_attributes)),
            "count": self.count + len(ids),
            "min_id": ids[0] if first else self.min_id,
            "max_id": ids[-1],
            "min_time": min_time,
            "max_time": max_time,
            **index.counts_meta(components, types),
        }
        block_rows = [(first_id, name, offset, length) for first_id, offset, length in rows]
        conn = self._writer
        try:
            conn.execute("BEGIN")
            try:
                conn.execute("INSERT INTO blocks SELECT value->>0, value->>1, value->>2, value->>3 FROM json_each(?)",
                             (json.dumps(block_rows),))
                for start in range(0, len(ids), _INDEX_CHUNK):
                    index.insert(conn, ids[start : start + _INDEX_CHUNK], fragments[start : start + _INDEX_CHUNK])
                conn.execute("INSERT OR REPLACE INTO meta SELECT key, value FROM json_each(?)", (json.dumps(meta),))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as error:
            if index.is_damage(error):
                self._index_failed(error)
            raise
        with self._lock:
            for first_id, _, offset, length in block_rows:
                self._block_ids.append(first_id)
                self._blocks.append((name, offset, length))
            self.count = meta["count"]
            self.min_id, self.max_id = meta["min_id"], meta["max_id"]
            self.min_time, self.max_time = min_time, max_time
            self.components, self.types = components, types
        # Three stats instead of one per file of the shard: see the journal set for why.
        index_bytes = self._index_size()
        _, _, offset, length = block_rows[-1]
        self.size += offset + OVERHEAD + length + index_bytes - self._index_bytes
        self._index_bytes = index_bytes

    def select_ids(self, where: Sequence[str], params: Sequence[Any], before: int | None, limit: int,
                   hint: str = "") -> list[int]:
        """Ids of events matching every SQL condition in ``where``, newest first; ``hint`` is
        SQLite's ``INDEXED BY <index>`` or ``NOT INDEXED`` (see ``search``)."""
        conditions = list(where)
        values = list(params)
        if before is not None:
            conditions.append("id < ?")
            values.append(before)
        sql = f"SELECT id FROM events {hint}"
        if conditions:
            sql += " WHERE " + " AND ".join(conditions)
        sql += " ORDER BY id DESC LIMIT ?"
        values.append(limit)
        return [row[0] for row in self._query(sql, values)]

    def blocks(self) -> list[tuple[int, Path, int, int]]:
        """``(first id, segment path, offset, length)`` of every indexed block, in id order
        (read each with ``segment.read_block``; framed when ``segment_version`` is current)."""
        with self._lock:
            return [(first_id, self.path / name, offset, length)
                    for first_id, (name, offset, length) in zip(self._block_ids, self._blocks)]

    def term_ids(self, key: int) -> list[int]:
        """Ids of the events indexed under term ``key`` (see ``codec.index_fragments``), ascending."""
        return [row[0] for row in self._query("SELECT event_id FROM terms WHERE key = ?", (key,))]

    def read_events(self, ids: Iterable[int], holding: bytes | None = None) -> dict[int, ProvenanceEvent]:
        """The events with ``ids`` held by this shard (absent and unreadable ids are left out);
        with ``holding``, only those whose stored bytes, lower-cased, contain it (the others are
        not decoded; a block without it anywhere is passed over whole)."""
        found: dict[int, ProvenanceEvent] = {}
        wanted = sorted(ids)
        start = 0
        while start < len(wanted):
            block = self._block(wanted[start])
            if block is None:
                start += 1
                continue
            block_ids, blobs = block
            end = bisect.bisect_right(wanted, block_ids[-1], start)
            if end == start:  # an id after the block's last one: not stored
                start += 1
                continue
            if holding is not None and holding not in b"".join(blobs).lower():
                start = end
                continue
            for event_id in wanted[start:end]:
                at = bisect.bisect_left(block_ids, event_id)
                if at == len(block_ids) or block_ids[at] != event_id:
                    continue
                if holding is not None and holding not in blobs[at].lower():
                    continue
                try:
                    found[event_id] = codec.event_from_wire(codec.decode_wire(blobs[at]), event_id)
                except DECODE_ERRORS:
                    self._block_damaged(block_ids[0], f"event {event_id} does not decode", [event_id])
            start = end
        return found

    def _block(self, event_id: int) -> tuple[tuple[int, ...], tuple[bytes, ...]] | None:
        """The ids and event bytes of the block that would hold ``event_id``."""
        with self._lock:
            position = bisect.bisect_right(self._block_ids, event_id) - 1
            if position < 0 or self.deleted:
                return None
            first_id = self._block_ids[position]
            if first_id in self._unreadable:
                return None
            cached = self._cache.get(first_id)
            if cached is not None:
                self._cache.move_to_end(first_id)
                return cached
            name, offset, length = self._blocks[position]
        framed = self.segment_version >= SEGMENT_VERSION
        try:
            block_ids, blobs = segment.read_block(self.path / name, offset, length, first_id, framed)
        except BlockError as error:
            with self._lock:
                self._unreadable.add(first_id)
            self._block_damaged(first_id, str(error), None)
            return None
        with self._lock:
            self._cache[first_id] = (block_ids, blobs)
            if len(self._cache) > _BLOCK_CACHE:
                self._cache.popitem(last=False)
        return block_ids, blobs

    def _block_damaged(self, first_id: int, found: str, ids: list[int] | None) -> None:
        """Record the damage of a block once; ``ids`` None for the whole block."""
        with self._lock:
            position = bisect.bisect_left(self._block_ids, first_id)
            if first_id in self._reported or position == len(self._block_ids):
                return
            self._reported.add(first_id)
            name, offset, _ = self._blocks[position]
            end = self._block_ids[position + 1] if position + 1 < len(self._block_ids) else self.max_id + 1
        if ids is None:
            ids = [row[0] for row in self._query("SELECT id FROM events WHERE id >= ? AND id < ? ORDER BY id",
                                                 (first_id, end))] or list(range(first_id, end))
        self._report(self.path / name, offset, found, ids)

    def _query(self, sql: str, params: Sequence[Any]) -> list[Any]:
        with self._lock:
            if self.deleted or self.index_damaged:
                return []
            try:
                return self._reader.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as error:
                if not index.is_damage(error):
                    raise
                failure = error
        self._index_failed(failure)
        return []

    def _index_failed(self, error: sqlite3.DatabaseError) -> None:
        with self._lock:
            if self.index_damaged:
                return
            self.index_damaged = True
        self.damage.record(Damage(
            "provenance index", str(self.path / index.INDEX), None, f"the index failed while running: {error}",
            "queries and lineage leave this shard's events out, and new events go to a new shard, until the "
            "index is rebuilt from the segments at the next maintenance run",
        ))

    def _index_size(self) -> int:
        total = 0
        for name in index.INDEX_FILES:
            try:
                total += os.stat(self.path / name).st_size
            except FileNotFoundError:
                pass
        return total

    def _disk_size(self) -> int:
        return sum(entry.stat().st_size for entry in os.scandir(self.path) if entry.is_file())

    def close(self) -> None:
        """Close the index connections."""
        self._close_connections()

    def delete(self) -> None:
        """Remove the shard from disk; later reads see it empty."""
        with self._lock:
            self.deleted = True
            self._cache.clear()
        self._close_connections()
        remove_directory(self.path)
