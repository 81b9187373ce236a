"""Opening shards left in every state: older segment formats, segments no index references,
directories without segments, a segment a killed rollover left half-written, and an index that
fails while the repository runs."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine.damage import DamageLog
from engine.provenance import ProvenanceConfig, ProvenanceQuery, ProvenanceRepository
from engine.provenance import frames, segment
from engine.provenance.check import check_directory
from engine.provenance.frames import Frame
from tests.engine.provenance.conftest import T0, make_event

CONFIG = ProvenanceConfig(journal_count=1, max_storage_time=10 * 365 * 86400.0)


def everything(repo: ProvenanceRepository) -> list:
    return list(reversed(repo.query(ProvenanceQuery(limit=100_000)).events))


def to_format_1(path: Path) -> None:
    """Rewrite a segment as segments were before format 2: the blocks back to back, unframed."""
    data = path.read_bytes()
    blocks, offset = [], len(segment.MAGIC)
    while offset < len(data):
        frame = frames.parse(data, offset)
        assert isinstance(frame, Frame)
        blocks.append(frame.payload)
        offset = frame.end
    path.write_bytes(b"".join(blocks))


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_format_1_segments_are_rebuilt_read_and_closed_for_appends(tmp_path: Path, compression: str) -> None:
    config = ProvenanceConfig(journal_count=1, compression=compression, max_storage_time=10 * 365 * 86400.0)
    with ProvenanceRepository(tmp_path, config) as repo:
        registered = repo.register_events([make_event(uuid=f"u{i}") for i in range(600)])
        repo.rollover()
    [shard] = (tmp_path / "shards").iterdir()
    to_format_1(shard / "1.seg")
    (shard / "index.db").unlink()
    damage = DamageLog()
    with ProvenanceRepository(tmp_path, config, damage=damage) as repo:
        [entry] = damage.entries()
        assert "600 event(s) re-indexed from 1 segment(s), 0 unreadable" in entry.effect
        assert everything(repo) == registered
        assert repo.query(ProvenanceQuery(flowfile_uuid="u599")).events == [registered[-1]]
        more = repo.register_events([make_event()])
        repo.rollover()
        assert repo.stats().shard_count == 2  # the format-1 shard takes no new segment
        assert repo.get_events([1, more[0].event_id]) == [registered[0], *more]
    with ProvenanceRepository(tmp_path, config) as repo:  # its rebuilt index is read as it is
        assert everything(repo) == registered + more


def test_format_1_zstd_segment_resynchronises_on_the_next_frame(tmp_path: Path) -> None:
    with ProvenanceRepository(tmp_path, CONFIG) as repo:
        registered = repo.register_events([make_event(uuid=f"u{i}") for i in range(600)])
        repo.rollover()
    [shard] = (tmp_path / "shards").iterdir()
    to_format_1(shard / "1.seg")
    data = bytearray((shard / "1.seg").read_bytes())
    data[10] ^= 0xFF  # inside the first block
    (shard / "1.seg").write_bytes(bytes(data))
    (shard / "index.db").unlink()
    damage = DamageLog()
    with ProvenanceRepository(tmp_path, CONFIG, damage=damage) as repo:
        assert everything(repo) == registered[256:]
        kinds = sorted((d.kind, d.offset) for d in damage.entries())
        assert kinds == [("provenance block", 0), ("provenance index", None)]


def test_a_segment_no_index_references_is_indexed(tmp_path: Path) -> None:
    with ProvenanceRepository(tmp_path, CONFIG) as repo:
        first = repo.register_events([make_event() for _ in range(300)])
        repo.rollover()
    [shard] = (tmp_path / "shards").iterdir()
    saved = (shard / "index.db").read_bytes()
    with ProvenanceRepository(tmp_path, CONFIG) as repo:
        second = repo.register_events([make_event() for _ in range(300)])
        repo.rollover()
    # The index lost the last commit, and the journals are gone: the segment is the only copy.
    for name in ("index.db-wal", "index.db-shm"):
        (shard / name).unlink(missing_ok=True)
    (shard / "index.db").write_bytes(saved)
    damage = DamageLog()
    with ProvenanceRepository(tmp_path, CONFIG, damage=damage) as repo:
        assert everything(repo) == first + second
        assert damage.entries() == []
        assert repo.register_events([make_event()])[0].event_id == 601


def test_a_segment_holding_ids_of_a_later_shard_is_not_indexed_twice(tmp_path: Path) -> None:
    config = ProvenanceConfig(journal_count=1, shard_duration=1, max_storage_time=10 * 365 * 86400.0)
    with ProvenanceRepository(tmp_path, config) as repo:
        first = repo.register_events([make_event(time=T0) for _ in range(10)])
        repo.rollover()
        second = repo.register_events([make_event(time=T0 + 5000) for _ in range(10)])
        repo.rollover()
    older, newer = sorted((tmp_path / "shards").iterdir(), key=lambda p: int(p.name.split("-")[1]))
    shutil.copy(newer / "11.seg", older / "11.seg")  # a rollover that failed there, then succeeded here
    with ProvenanceRepository(tmp_path, config) as repo:
        assert everything(repo) == first + second
        assert repo.stats().event_count == 20


KILLED_MID_SEGMENT = """
import os, signal, sys
from pathlib import Path
from engine import fileops
from engine.provenance import ProvenanceConfig, ProvenanceRepository
from tests.engine.provenance.conftest import make_event

config = ProvenanceConfig(journal_count=1, max_storage_time=10 * 365 * 86400.0)
repo = ProvenanceRepository(Path(sys.argv[1]), config).open()
repo.register_events([make_event(uuid=f"u{i}") for i in range(300)])
repo.rollover()
repo.register_events([make_event(uuid=f"u{i}") for i in range(300, 600)])
# The next segment's write puts half of its bytes in the file, then the process is killed.
fileops.set_fault_hook(lambda operation, path, size: size // 2 if operation == "write" and "/shards/" in path
                       and size > 1 else None)
fileops.add_full_listener(lambda path: os.kill(os.getpid(), signal.SIGKILL))
repo.rollover()
"""


def test_a_rollover_killed_while_writing_its_segment_leaves_no_damage(tmp_path: Path) -> None:
    root = Path(__file__).parents[3]
    child = subprocess.run([sys.executable, "-c", KILLED_MID_SEGMENT, str(tmp_path)], cwd=root,
                           env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True)
    assert child.returncode == -signal.SIGKILL, child.stderr
    [shard] = (tmp_path / "shards").iterdir()
    assert [p.name for p in shard.glob("*.partial")] == ["301.seg.partial"]  # the half it wrote
    assert list(check_directory(tmp_path)) == []  # what `python -m engine.inspect` reports
    damage = DamageLog()
    with ProvenanceRepository(tmp_path, CONFIG, damage=damage) as repo:
        assert [e.flowfile_uuid for e in everything(repo)] == [f"u{i}" for i in range(600)]
        assert damage.entries() == []
    assert sorted(p.name for p in shard.iterdir() if p.suffix in (".seg", ".partial")) == ["1.seg", "301.seg"]


def test_shard_directories_without_segments_are_removed(tmp_path: Path) -> None:
    with ProvenanceRepository(tmp_path, CONFIG) as repo:
        registered = repo.register_events([make_event()])
    (tmp_path / "shards" / "1700000009999-99").mkdir()
    sqlite3.connect(tmp_path / "shards" / "1700000009999-99" / "index.db").close()
    with ProvenanceRepository(tmp_path, CONFIG) as repo:
        assert sorted(p.name for p in (tmp_path / "shards").iterdir()) == [f"{T0}-1"]
        assert everything(repo) == registered


class FailingConnection:
    def execute(self, *args: object) -> None:
        raise sqlite3.DatabaseError("database disk image is malformed")

    def close(self) -> None:
        pass


def test_an_index_failing_while_running_is_left_out_then_rebuilt(tmp_path: Path) -> None:
    damage = DamageLog()
    with ProvenanceRepository(tmp_path, CONFIG, damage=damage) as repo:
        registered = repo.register_events([make_event(uuid=f"u{i}") for i in range(10)])
        repo.rollover()
        [shard] = repo._shards
        shard._reader = FailingConnection()
        assert everything(repo) == []
        assert repo.get_events([3]) == [registered[2]]  # reads need no index
        assert repo.lineage("u3").events == []
        [entry] = damage.entries()
        assert (entry.kind, entry.path) == ("provenance index", str(shard.path / "index.db"))
        later = repo.register_events([make_event()])
        repo.rollover()
        assert repo.stats().shard_count == 2  # new events go to a new shard
        repo.run_maintenance(now=T0)
        assert everything(repo) == registered + later
        assert repo.lineage("u3").events == [registered[3]]
        assert "rebuilt: 10 event(s) re-indexed" in damage.entries()[-1].effect


def test_an_index_of_an_older_layout_is_rebuilt_at_open(tmp_path: Path) -> None:
    events = [make_event(uuid=f"u{i}", filename=f"File-{i}.txt") for i in range(5)]
    with ProvenanceRepository(tmp_path, CONFIG) as repo:
        registered = repo.register_events(events)
        repo.rollover()
    [index_path] = (tmp_path / "shards").glob("*/index.db")
    with sqlite3.connect(index_path) as conn:  # as layout 2 left it: its version, no per-component counts
        conn.execute("UPDATE meta SET value = 2 WHERE key = 'index'")
        conn.execute("DELETE FROM meta WHERE key IN ('components', 'types')")
    with ProvenanceRepository(tmp_path, CONFIG) as repo:
        assert everything(repo) == registered
        assert repo.query(ProvenanceQuery(filename="file-3.TXT")).events == [registered[3]]  # keys of layout 3
        assert repo.query(ProvenanceQuery(component_ids=frozenset({events[0].component_id}))).events
    with sqlite3.connect(index_path) as conn:
        assert dict(conn.execute("SELECT key, value FROM meta"))["index"] == 3
