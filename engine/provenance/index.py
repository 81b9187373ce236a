"""The SQLite index of a shard: its schema, its connections and the inserts of index rows.

Tables: ``blocks`` (where each block is), ``events`` (id, time, type and component key, with an
index per query form), ``terms`` (the keys of every uuid an event names, of its filename and of
its indexed attributes, for those queries and lineage) and ``meta`` (bounds, counts, layout
versions, and the number of events of each component key and of each type, which tell a query
how to read the shard). Keys are 64-bit hashes (``codec.term_key``) of the lower-cased text:
integer rows are small and cheap to insert, and readers check the events they find.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from operator import itemgetter
from pathlib import Path
from typing import Any, Iterable, Sequence

from engine.provenance import codec

__all__ = [
    "INDEX", "INDEX_FILES", "INDEX_VERSION", "SCHEMA", "add_counts", "connect", "counts_meta", "create",
    "fragment_counts", "insert", "is_damage", "meta_counts",
]

# Version 3: keys of lower-cased text, and the counts of components and types in ``meta``.
INDEX_VERSION = 3
INDEX = "index.db"
INDEX_FILES = (INDEX, f"{INDEX}-wal", f"{INDEX}-shm")
# The index statements read ?1, the concatenated records of codec.index_fragments each behind
# its 20-character id: fixed-width fields sliced out of a blob cost a fraction of JSON parsing.
# Offsets are 1-based: id 1, time 21, type 41, component 61, term count 81, terms from 89.
_HEADER = 20 + codec.FRAGMENT_HEADER
_EVENTS = f"""
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
_TERMS = f"""
WITH RECURSIVE t(p, id, left) AS (
    SELECT {_HEADER + 1}, CAST(substr(?1, 1, 20) AS INTEGER), CAST(substr(?1, 81, 8) AS INTEGER)
    UNION ALL
    SELECT CASE WHEN left > 1 THEN p + 20 ELSE p + 20 + {_HEADER} END,
           CASE WHEN left > 1 THEN id ELSE CAST(substr(?1, p + 20, 20) AS INTEGER) END,
           CASE WHEN left > 1 THEN left - 1 ELSE CAST(substr(?1, p + 100, 8) AS INTEGER) END
    FROM t WHERE left > 1 OR p + 20 <= length(?1))
INSERT OR IGNORE INTO terms SELECT CAST(substr(?1, p, 20) AS INTEGER), id FROM t ORDER BY 1, 2"""

_TYPE_FIELD = itemgetter(slice(20, 40))
_COMPONENT_FIELD = itemgetter(slice(40, 60))

SCHEMA = (
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


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the index at ``path``: autocommit, WAL, synchronous commits."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30.0)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        # FULL: a commit is the point after which the journals may be deleted.
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA cache_size=-65536")
    except BaseException:
        conn.close()
        raise
    return conn


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that reads the index at ``path`` and changes nothing: without a ``-wal``
    file nobody writes the database, so it is opened immutable (a read-only open in WAL mode
    would create ``-wal`` and ``-shm`` files)."""
    mode = "mode=ro" if path.with_name(path.name + "-wal").exists() else "mode=ro&immutable=1"
    return sqlite3.connect(f"file:{path}?{mode}", uri=True)


def is_damage(error: sqlite3.DatabaseError) -> bool:
    """Whether ``error`` says the index file is damaged, not that the disk is full or busy."""
    # OperationalError is a full disk or a busy database; ProgrammingError a closed connection.
    return not isinstance(error, (sqlite3.OperationalError, sqlite3.ProgrammingError, sqlite3.IntegrityError))


def create(conn: sqlite3.Connection) -> None:
    """Create the tables the connection's index lacks."""
    for statement in SCHEMA:
        conn.execute(statement)


def fragment_counts(fragments: Iterable[str]) -> tuple[Counter[int], Counter[str]]:
    """How many of the events of ``fragments`` each component key and each type has."""
    fragments = fragments if isinstance(fragments, (list, tuple)) else list(fragments)
    # Counted on the fixed-width fields as they are (C-level loops), converted once per value.
    components = Counter(map(_COMPONENT_FIELD, fragments))
    types = Counter(map(_TYPE_FIELD, fragments))
    return (Counter({int(key): count for key, count in components.items()}),
            Counter({key.rstrip(): count for key, count in types.items()}))


def add_counts(components: Counter[int], types: Counter[str], fragments: Sequence[str]) -> None:
    """Add the counts of the events of ``fragments`` to ``components`` and ``types``."""
    more_components, more_types = fragment_counts(fragments)
    components.update(more_components)
    types.update(more_types)


def counts_meta(components: Counter[int], types: Counter[str]) -> dict[str, dict[str, int]]:
    """The ``meta`` entries that keep the counts."""
    return {"components": {str(key): count for key, count in components.items()}, "types": dict(types)}


def meta_counts(meta: dict[str, Any]) -> tuple[Counter[int], Counter[str]]:
    """The counts kept in ``meta`` (a nested object comes back from SQLite as its JSON text)."""
    def read(key: str) -> dict[str, int]:
        value = meta.get(key)
        return json.loads(value) if isinstance(value, str) else dict(value or {})

    return Counter({int(key): count for key, count in read("components").items()}), Counter(read("types"))


def insert(conn: sqlite3.Connection, ids: Sequence[int], fragments: Sequence[str]) -> None:
    """Index events by their ids and index fragments (see ``codec.index_fragments``)."""
    # One statement per table: executemany would release and retake the GIL for every row
    # and crawl while writer threads hold it.
    records = "".join([f"{event_id:20d}{fragment}" for event_id, fragment in zip(ids, fragments)]).encode()
    conn.execute(_EVENTS, (records,))
    conn.execute(_TERMS, (records,))
