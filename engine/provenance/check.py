"""A read-only check of a provenance repository on disk, for ``python -m engine.inspect``: every
damaged journal frame, segment block and shard index, with its file and byte offset.

It changes nothing (the repository repairs what it can when a node opens it: journals are read
past damage, indexes rebuilt from their segments) and says what opening it would do.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Iterator

from engine.damage import Damage
from engine.provenance.index import connect_read_only
from engine.provenance.journal import list_journal_sets, read_journal
from engine.provenance.segment import Unreadable, walk

__all__ = ["check_directory"]

_INDEX = "index.db"


def check_directory(directory: Path) -> Iterator[Damage]:
    """Every damage found in the provenance repository at ``directory``."""
    journals = directory / "journals"
    if journals.is_dir():
        for _, paths in list_journal_sets(journals):
            for path in paths:
                yield from _check_journal(path)
    shards = directory / "shards"
    if shards.is_dir():
        for shard in sorted(p for p in shards.iterdir() if p.is_dir() and not p.name.endswith(".deleting")):
            yield from _check_shard(shard)


def _check_journal(path: Path) -> Iterator[Damage]:
    try:
        contents = read_journal(path)
    except OSError as error:
        yield Damage("provenance journal", str(path), None, f"the file cannot be read: {error}",
                     "its events would be left out")
        return
    for place in contents.damage:
        lost = f"events {place.lost[0]} to {place.lost[-1]}" if place.lost else "an unknown number of events"
        yield Damage("provenance journal", str(path), place.offset, place.found,
                     f"{lost} would be lost; the frames after it are kept")


def _check_shard(shard: Path) -> Iterator[Damage]:
    for segment in sorted(shard.glob("*.seg")):
        try:
            places = [place for place in walk(segment) if isinstance(place, Unreadable)]
        except OSError as error:
            yield Damage("provenance block", str(segment), None, f"the file cannot be read: {error}",
                         "its events cannot be read")
            continue
        for place in places:
            held = f"events {place.ids.start} to {place.ids.stop - 1}" if place.ids else "its events"
            yield Damage("provenance block", str(segment), place.offset, place.found, f"{held} cannot be read")
    problem = _index_problem(shard / _INDEX)
    if problem is not None:
        yield Damage("provenance index", str(shard / _INDEX), None, problem,
                     "the index is rebuilt from the shard's segments when a node opens the repository")


def _index_problem(index: Path) -> str | None:
    """What is wrong with a shard's index, or None when it opens and checks out."""
    if not index.exists():
        return "the file is missing"
    if index.stat().st_size == 0:
        return "the file is empty"
    try:
        with closing(connect_read_only(index)) as conn:
            verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
            conn.execute("SELECT key, value FROM meta").fetchall()
    except sqlite3.DatabaseError as error:
        return f"unreadable: {error}"
    return None if verdict == "ok" else f"SQLite's check found: {verdict}"
