"""A shard: the compressed, indexed long-term storage of a time span of provenance events.

Layout of ``shards/<first_event_time>-<first_event_id>/``:

- ``<first_id>.seg`` — one segment per rollover: independent zstd-compressed blocks, each the
  msgpack ``[ids, events]`` of up to ``BLOCK_EVENTS`` consecutive events (event bytes as made
  by ``codec``), so reading one event decompresses one small block.
- ``index.db`` — SQLite: ``blocks`` (where each block is), ``events`` (id, time, type and
  component key, with an index per query form), ``terms`` (the keys of every uuid an event
  names, of its filename and of its indexed attributes, for those queries and lineage) and
  ``meta`` (bounds, counts, layout versions). Keys are 64-bit hashes (``codec.index_key``):
  integer rows are small and cheap to insert, and readers check the events they find. An index
  of an older layout is rebuilt from the segments when the shard is opened.

Durability of an append: the segment is written and fsynced (and the directory), then one
SQLite transaction adds the blocks and the index rows and commits with ``synchronous=FULL``
in WAL mode, so after ``append`` returns the events survive a power loss and the journals
that held them may be deleted. A crash before the commit leaves an unreferenced segment,
which ``open`` deletes; a crash after it leaves the journals too, and the repository skips
the ids the shard already has when it rolls them over again. Shards are deleted whole, never
edited, so deletion needs no index update.
"""

from __future__ import annotations

import bisect
import json
import os
import shutil
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterable, Sequence

import msgpack
import zstandard

from engine import fileops
from engine.provenance import codec
from engine.provenance.event import ProvenanceEvent

__all__ = ["Shard", "BLOCK_EVENTS", "INDEX_VERSION"]

BLOCK_EVENTS = 256
INDEX_VERSION = 2
_INDEX = "index.db"
_BLOCK_CACHE = 64
_INDEX_CHUNK = 65536
# The index statements read ?1, the concatenated records of codec.index_fragments each behind
# its 20-character id: fixed-width fields sliced out of a blob cost a fraction of JSON parsing.
# Offsets are 1-based: id 1, time 21, type 41, component 61, term count 81, terms from 89.
_HEADER = 20 + codec.FRAGMENT_HEADER
_INSERT_EVENTS = f"""
WITH RECURSIVE r(o) AS (
    SELECT 1
    UNION ALL
    SELECT o + {_HEADER} + 20 * CAST(substr(?1, o + 80, 8) AS INTEGER) FROM r
    WHERE o + {_HEADER} + 20 * CAST(substr(?1, o + 80, 8) AS INTEGER) <= length(?1))
INSERT INTO events
SELECT CAST(substr(?1, o, 20) AS INTEGER), CAST(substr(?1, o + 20, 20) AS INTEGER),
       rtrim(CAST(substr(?1, o + 40, 20) AS TEXT)), CAST(substr(?1, o + 60, 20) AS INTEGER)
FROM r"""
# One row per term: t walks the terms of an event (``left`` of them still to come), then steps
# over the next record's header; every event has at least one term, its FlowFile's uuid. In
# key order, the inserts walk the B-tree from one page to the next instead of at random.
_INSERT_TERMS = f"""
WITH RECURSIVE t(p, id, left) AS (
    SELECT {_HEADER + 1}, CAST(substr(?1, 1, 20) AS INTEGER), CAST(substr(?1, 81, 8) AS INTEGER)
    UNION ALL
    SELECT CASE WHEN left > 1 THEN p + 20 ELSE p + 20 + {_HEADER} END,
           CASE WHEN left > 1 THEN id ELSE CAST(substr(?1, p + 20, 20) AS INTEGER) END,
           CASE WHEN left > 1 THEN left - 1 ELSE CAST(substr(?1, p + 100, 8) AS INTEGER) END
    FROM t WHERE left > 1 OR p + 20 <= length(?1))
INSERT OR IGNORE INTO terms SELECT CAST(substr(?1, p, 20) AS INTEGER), id FROM t ORDER BY 1, 2"""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID",
    """CREATE TABLE IF NOT EXISTS blocks (
        first_id INTEGER PRIMARY KEY, segment TEXT NOT NULL, offset INTEGER NOT NULL,
        length INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS events (
        id INTEGER PRIMARY KEY, time INTEGER NOT NULL, type TEXT NOT NULL, component INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS events_component ON events (component, time)",
    "CREATE INDEX IF NOT EXISTS events_type ON events (type, time)",
    "CREATE INDEX IF NOT EXISTS events_time ON events (time)",
    """CREATE TABLE IF NOT EXISTS terms (
        key INTEGER NOT NULL, event_id INTEGER NOT NULL, PRIMARY KEY (key, event_id)) WITHOUT ROWID""",
)
# The tables of index version 1, replaced when such a shard is opened.
_LEGACY_TABLES = ("events", "links", "attrs")

_local = threading.local()


def _decompressor() -> zstandard.ZstdDecompressor:
    decompressor = getattr(_local, "zstd", None)
    if decompressor is None:
        decompressor = _local.zstd = zstandard.ZstdDecompressor()
    return decompressor


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30.0)
    conn.execute("PRAGMA journal_mode=WAL")
    # FULL: a commit is the point after which the journals may be deleted.
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA cache_size=-65536")
    return conn


class Shard:
    """One shard directory; appends come from one thread at a time, reads from any."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._writer = _connect(path / _INDEX)
        self._writer.execute(_SCHEMA[0])
        self._lock = threading.Lock()
        self._cache: OrderedDict[int, tuple[tuple[int, ...], tuple[bytes, ...]]] = OrderedDict()
        self.deleted = False
        meta = dict(self._writer.execute("SELECT key, value FROM meta"))
        legacy = meta.get("count", 0) and meta.get("index", 1) < INDEX_VERSION
        if not legacy:
            for statement in _SCHEMA:
                self._writer.execute(statement)
        self.compression: str = meta.get("compression", "zstd")
        self.indexed_attributes = frozenset(json.loads(meta.get("indexed_attributes", "[]")))
        self.count: int = meta.get("count", 0)
        self.min_id: int = meta.get("min_id", 0)
        self.max_id: int = meta.get("max_id", 0)
        self.min_time: int = meta.get("min_time", 0)
        self.max_time: int = meta.get("max_time", 0)
        rows = self._writer.execute("SELECT first_id, segment, offset, length FROM blocks ORDER BY first_id")
        self._block_ids: list[int] = []
        self._blocks: list[tuple[str, int, int]] = []
        for first_id, segment, offset, length in rows:
            self._block_ids.append(first_id)
            self._blocks.append((segment, offset, length))
        if legacy:
            self._reindex()
        self._reader = _connect(path / _INDEX)
        self._index_bytes = self._index_size()
        self.size = self._disk_size()

    @classmethod
    def create(
        cls, parent: Path, first_time: int, first_id: int, *, compression: str,
        indexed_attributes: Iterable[str],
    ) -> Shard:
        """Make a new, empty shard under ``parent``."""
        path = parent / f"{first_time}-{first_id}"
        fileops.make_directory(path, parents=False)
        shard = cls(path)
        shard.compression = compression
        shard.indexed_attributes = frozenset(indexed_attributes)
        return shard

    @property
    def name(self) -> str:
        """The directory name, ``<first_event_time>-<first_event_id>``."""
        return self.path.name

    def remove_orphan_segments(self) -> None:
        """Delete segments no committed block points at (left by a crash mid-rollover)."""
        referenced = {segment for segment, _, _ in self._blocks}
        for entry in os.scandir(self.path):
            if entry.name.endswith(".seg") and entry.name not in referenced:
                fileops.unlink(entry.path)
        self.size = self._disk_size()

    def append(
        self, ids: Sequence[int], blobs: Sequence[bytes], fragments: Sequence[str], min_time: int, max_time: int
    ) -> None:
        """Store and index events: ascending ``ids``, their stored bytes and index fragments."""
        segment = f"{ids[0]}.seg"
        block_rows = self._write_segment(segment, ids, blobs)
        first = self.count == 0
        if not first:
            min_time, max_time = min(min_time, self.min_time), max(max_time, self.max_time)
        meta = {
            "version": codec.FORMAT_VERSION,
            "index": INDEX_VERSION,
            "compression": self.compression,
            "indexed_attributes": json.dumps(sorted(self.indexed_attributes)),
            "count": self.count + len(ids),
            "min_id": ids[0] if first else self.min_id,
            "max_id": ids[-1],
            "min_time": min_time,
            "max_time": max_time,
        }
        conn = self._writer
        conn.execute("BEGIN")
        try:
            conn.execute("INSERT INTO blocks SELECT value->>0, value->>1, value->>2, value->>3 FROM json_each(?)",
                         (json.dumps(block_rows),))
            for start in range(0, len(ids), _INDEX_CHUNK):
                self._index(ids[start : start + _INDEX_CHUNK], fragments[start : start + _INDEX_CHUNK])
            conn.execute("INSERT OR REPLACE INTO meta SELECT key, value FROM json_each(?)", (json.dumps(meta),))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        with self._lock:
            for first_id, seg, offset, length in block_rows:
                self._block_ids.append(first_id)
                self._blocks.append((seg, offset, length))
            self.count = meta["count"]
            self.min_id, self.max_id = meta["min_id"], meta["max_id"]
            self.min_time, self.max_time = min_time, max_time
        # Three stats instead of one per file of the shard: see the journal set for why.
        index_bytes = self._index_size()
        _, _, offset, length = block_rows[-1]
        self.size += offset + length + index_bytes - self._index_bytes
        self._index_bytes = index_bytes

    def _index(self, ids: Sequence[int], fragments: Sequence[str]) -> None:
        # One statement per table: executemany would release and retake the GIL for every row
        # and crawl while writer threads hold it.
        records = "".join([f"{event_id:20d}{fragment}" for event_id, fragment in zip(ids, fragments)]).encode()
        self._writer.execute(_INSERT_EVENTS, (records,))
        self._writer.execute(_INSERT_TERMS, (records,))

    def _reindex(self) -> None:
        """Rebuild an index of an older layout from the segments, in one transaction."""
        conn = self._writer
        conn.execute("BEGIN")
        try:
            for table in _LEGACY_TABLES:
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in _SCHEMA:
                conn.execute(statement)
            for first_id in self._block_ids:
                block_ids, blobs = self._block(first_id)
                events = [codec.event_from_wire(codec.decode_wire(blob), i) for i, blob in zip(block_ids, blobs)]
                self._index(block_ids, codec.index_fragments(events, self.indexed_attributes))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('index', ?)", (INDEX_VERSION,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._cache.clear()

    def _write_segment(
        self, segment: str, ids: Sequence[int], blobs: Sequence[bytes]
    ) -> list[tuple[int, str, int, int]]:
        starts = range(0, len(ids), BLOCK_EVENTS)
        chunks = [
            msgpack.packb([ids[start : start + BLOCK_EVENTS], blobs[start : start + BLOCK_EVENTS]], use_bin_type=True)
            for start in starts
        ]
        if self.compression == "zstd":
            # One call for every block: the GIL is released and retaken once, not once per block,
            # which matters when it has to be won back from busy writer threads.
            compressed = zstandard.ZstdCompressor(level=1).multi_compress_to_buffer(chunks)
            chunks = [segment_bytes.tobytes() for segment_bytes in compressed]
        rows = []
        offset = 0
        for start, data in zip(starts, chunks):
            rows.append((ids[start], segment, offset, len(data)))
            offset += len(data)
        path = self.path / segment
        fd = fileops.open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            fileops.write_all(fd, b"".join(chunks), path)
            fileops.sync(fd, path)
        finally:
            fileops.close(fd)
        fileops.sync_directory(self.path)
        return rows

    def select_ids(self, where: Sequence[str], params: Sequence[Any], before: int | None, limit: int) -> list[int]:
        """Ids of events matching every SQL condition in ``where``, newest first."""
        conditions = list(where)
        values = list(params)
        if before is not None:
            conditions.append("id < ?")
            values.append(before)
        sql = "SELECT id FROM events"
        if conditions:
            sql += " WHERE " + " AND ".join(conditions)
        sql += " ORDER BY id DESC LIMIT ?"
        values.append(limit)
        return [row[0] for row in self._query(sql, values)]

    def term_ids(self, key: int) -> list[int]:
        """Ids of the events indexed under term ``key`` (see ``codec.index_fragments``), ascending."""
        return [row[0] for row in self._query("SELECT event_id FROM terms WHERE key = ?", (key,))]

    def read_events(self, ids: Iterable[int]) -> dict[int, ProvenanceEvent]:
        """The events with ``ids`` held by this shard (absent ids are left out)."""
        found: dict[int, ProvenanceEvent] = {}
        for event_id in ids:
            block = self._block(event_id)
            if block is None:
                continue
            block_ids, blobs = block
            index = bisect.bisect_left(block_ids, event_id)
            if index < len(block_ids) and block_ids[index] == event_id:
                found[event_id] = codec.event_from_wire(codec.decode_wire(blobs[index]), event_id)
        return found

    def _block(self, event_id: int) -> tuple[tuple[int, ...], tuple[bytes, ...]] | None:
        with self._lock:
            index = bisect.bisect_right(self._block_ids, event_id) - 1
            if index < 0 or self.deleted:
                return None
            first_id = self._block_ids[index]
            cached = self._cache.get(first_id)
            if cached is not None:
                self._cache.move_to_end(first_id)
                return cached
            segment, offset, length = self._blocks[index]
        with open(self.path / segment, "rb") as handle:
            handle.seek(offset)
            data = handle.read(length)
        if self.compression == "zstd":
            data = _decompressor().decompress(data)
        block_ids, blobs = msgpack.unpackb(data, use_list=False)
        with self._lock:
            self._cache[first_id] = (block_ids, blobs)
            if len(self._cache) > _BLOCK_CACHE:
                self._cache.popitem(last=False)
        return block_ids, blobs

    def _query(self, sql: str, params: Sequence[Any]) -> list[Any]:
        with self._lock:
            if self.deleted:
                return []
            return self._reader.execute(sql, params).fetchall()

    def _index_size(self) -> int:
        total = 0
        for name in (_INDEX, f"{_INDEX}-wal", f"{_INDEX}-shm"):
            try:
                total += os.stat(self.path / name).st_size
            except FileNotFoundError:
                pass
        return total

    def _disk_size(self) -> int:
        return sum(entry.stat().st_size for entry in os.scandir(self.path) if entry.is_file())

    def close(self) -> None:
        """Close the index connections."""
        with self._lock:
            self._reader.close()
            self._writer.close()

    def delete(self) -> None:
        """Remove the shard from disk; later reads see it empty.

        The directory is first renamed to ``*.deleting`` so a crash mid-way leaves no half shard
        that ``open`` would take for a real one.
        """
        with self._lock:
            self.deleted = True
            self._reader.close()
            self._writer.close()
            self._cache.clear()
        doomed = self.path.with_name(self.path.name + ".deleting")
        fileops.rename(self.path, doomed)
        fileops.sync_directory(doomed.parent)
        shutil.rmtree(doomed)
