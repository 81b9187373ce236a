"""A shard: the compressed, indexed long-term storage of a time span of provenance events.

Layout of ``shards/<first_event_time>-<first_event_id>/``:

- ``<first_id>.seg`` — one segment per rollover: independent zstd-compressed blocks, each the
  msgpack ``[ids, events]`` of up to ``BLOCK_EVENTS`` consecutive events (event bytes as made
  by ``codec``), so reading one event decompresses one small block.
- ``index.db`` — SQLite: ``blocks`` (where each block is), ``events`` (id, time, type,
  component, filename, with an index per query form), ``links`` (every uuid an event mentions
  with its role, for uuid queries and lineage), ``attrs`` (values of the indexed attributes)
  and ``meta`` (bounds and counts).

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

from engine.fsutil import fsync_directory
from engine.provenance import codec
from engine.provenance.event import ProvenanceEvent

__all__ = ["Shard", "BLOCK_EVENTS", "ROLE_FLOWFILE", "ROLE_PARENT", "ROLE_CHILD"]

BLOCK_EVENTS = 256
ROLE_FLOWFILE, ROLE_PARENT, ROLE_CHILD = 0, 1, 2
_INDEX = "index.db"
_BLOCK_CACHE = 64
_INDEX_CHUNK = 8192
# Each row is ``[id, fragment]`` with the fragment laid out by ``codec.index_fragment``.
_INSERT_EVENTS = (
    "INSERT INTO events SELECT value->>0, value->>'$[1][0]', value->>'$[1][1]', value->>'$[1][2]',"
    " value->>'$[1][3]' FROM json_each(?)"
)
_INSERT_LINKS = (
    "INSERT OR IGNORE INTO links SELECT m.value->>0, m.value->>1, e.value->>0"
    " FROM json_each(?) e, json_each(e.value, '$[1][4]') m"
)
_INSERT_ATTRS = (
    "INSERT OR IGNORE INTO attrs SELECT a.key, a.value, e.value->>0"
    " FROM json_each(?) e, json_each(e.value, '$[1][5]') a"
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blocks (
    first_id INTEGER PRIMARY KEY, segment TEXT NOT NULL, offset INTEGER NOT NULL,
    length INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY, time INTEGER NOT NULL, type TEXT NOT NULL,
    component TEXT NOT NULL, filename TEXT);
CREATE INDEX IF NOT EXISTS events_component ON events (component, time);
CREATE INDEX IF NOT EXISTS events_type ON events (type, time);
CREATE INDEX IF NOT EXISTS events_time ON events (time);
CREATE INDEX IF NOT EXISTS events_filename ON events (filename) WHERE filename IS NOT NULL;
CREATE TABLE IF NOT EXISTS links (
    uuid TEXT NOT NULL, role INTEGER NOT NULL, event_id INTEGER NOT NULL,
    PRIMARY KEY (uuid, role, event_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS attrs (
    name TEXT NOT NULL, value TEXT NOT NULL, event_id INTEGER NOT NULL,
    PRIMARY KEY (name, value, event_id)) WITHOUT ROWID;
"""

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
        self._writer.executescript(_SCHEMA)
        self._reader = _connect(path / _INDEX)
        self._lock = threading.Lock()
        self._cache: OrderedDict[int, tuple[tuple[int, ...], tuple[bytes, ...]]] = OrderedDict()
        self.deleted = False
        meta = dict(self._writer.execute("SELECT key, value FROM meta"))
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
        self.size = self._disk_size()

    @classmethod
    def create(
        cls, parent: Path, first_time: int, first_id: int, *, compression: str,
        indexed_attributes: Iterable[str],
    ) -> Shard:
        """Make a new, empty shard under ``parent``."""
        path = parent / f"{first_time}-{first_id}"
        path.mkdir()
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
                os.unlink(entry.path)
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
            conn.executemany("INSERT INTO blocks VALUES (?, ?, ?, ?)", block_rows)
            for start in range(0, len(ids), _INDEX_CHUNK):
                # One statement per chunk: executemany would release and retake the GIL for
                # every row and crawl while writer threads hold it.
                pairs = zip(ids[start : start + _INDEX_CHUNK], fragments[start : start + _INDEX_CHUNK])
                rows = "[" + ",".join([f"[{event_id},{fragment}]" for event_id, fragment in pairs]) + "]"
                conn.execute(_INSERT_EVENTS, (rows,))
                conn.execute(_INSERT_LINKS, (rows,))
                if self.indexed_attributes:
                    conn.execute(_INSERT_ATTRS, (rows,))
            conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta.items())
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
        self.size = self._disk_size()

    def _write_segment(
        self, segment: str, ids: Sequence[int], blobs: Sequence[bytes]
    ) -> list[tuple[int, str, int, int]]:
        compressor = zstandard.ZstdCompressor(level=1) if self.compression == "zstd" else None
        rows = []
        chunks = []
        offset = 0
        for start in range(0, len(ids), BLOCK_EVENTS):
            raw = msgpack.packb(
                [ids[start : start + BLOCK_EVENTS], blobs[start : start + BLOCK_EVENTS]], use_bin_type=True
            )
            data = compressor.compress(raw) if compressor is not None else raw
            rows.append((ids[start], segment, offset, len(data)))
            chunks.append(data)
            offset += len(data)
        fd = os.open(self.path / segment, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            view = memoryview(b"".join(chunks))
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_directory(self.path)
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

    def mentions(self, uuid: str) -> list[tuple[int, int]]:
        """``(event_id, role)`` of every event that names ``uuid``."""
        return self._query("SELECT event_id, role FROM links WHERE uuid = ?", (uuid,))

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
        os.rename(self.path, doomed)
        fsync_directory(doomed.parent)
        shutil.rmtree(doomed)
