"""Transfer marks: which FlowFiles sent by peers were taken, kept in the log, its snapshot and pruned."""

from __future__ import annotations

import time

import msgpack
import pytest

from engine.checksums import crc32
from engine.damage import StorageCorruptionError
from engine.repository.records import RepositoryRecord
from engine.wal import snapshot as snapshots
from tests.engine.repository.conftest import make_flowfile


def _now_ms() -> int:
    return int(time.time() * 1000)


def test_marks_are_committed_with_flowfiles_and_recovered_from_the_journal(open_repo):
    repo = open_repo()
    flowfile = make_flowfile(repo)
    repo.update([RepositoryRecord.create(flowfile, "q"), RepositoryRecord.transfer_mark("node-b:u1", _now_ms())])
    assert repo.was_received("node-b:u1")
    assert not repo.was_received("node-b:u2")

    again = open_repo()
    assert again.was_received("node-b:u1")
    assert again.recovered.queues["q"] == [flowfile]
    assert again.recovered.wal.transfer_marks == 1


def test_marks_survive_a_checkpoint_in_the_snapshot(open_repo):
    repo = open_repo()
    repo.update([RepositoryRecord.transfer_mark(f"node-b:u{i}", _now_ms()) for i in range(3)])
    report = repo.checkpoint()
    assert report.transfer_marks == 3

    again = open_repo()
    assert all(again.was_received(f"node-b:u{i}") for i in range(3))
    assert again.recovered.wal.snapshot_max_txn_id >= 0


def test_a_checkpoint_prunes_marks_older_than_the_window(open_repo):
    repo = open_repo(transfer_mark_window=60)
    old = _now_ms() - 61_000
    repo.update([RepositoryRecord.transfer_mark("node-b:old", old), RepositoryRecord.transfer_mark("node-b:new", _now_ms())])
    assert repo.was_received("node-b:old")
    repo.checkpoint()
    assert not repo.was_received("node-b:old")
    assert repo.was_received("node-b:new")
    again = open_repo(transfer_mark_window=60)
    assert not again.was_received("node-b:old")
    assert again.was_received("node-b:new")


def test_a_snapshot_without_marks_has_no_marks_section_and_loads(open_repo, tmp_path):
    repo = open_repo()
    flowfile = make_flowfile(repo)
    repo.update([RepositoryRecord.create(flowfile, "q")])
    repo.checkpoint()
    data = (tmp_path / "ffr" / snapshots.SNAPSHOT_NAME).read_bytes()
    kinds = _frame_kinds(data)
    assert b"T" not in kinds and kinds[-1] == b"E"  # what versions before transfer marks wrote
    again = open_repo()
    assert again.recovered.queues["q"] == [flowfile]
    assert again.wal.transfer_marks == {}


def test_a_damaged_marks_section_is_refused_naming_the_file_and_offset(open_repo, tmp_path):
    repo = open_repo()
    repo.update([RepositoryRecord.transfer_mark("node-b:u1", _now_ms())])
    repo.checkpoint()
    path = tmp_path / "ffr" / snapshots.SNAPSHOT_NAME
    data = bytearray(path.read_bytes())
    offset = _frame_offsets(bytes(data))[b"T"]
    data[offset + 9 + 2] ^= 0xFF  # a byte of the section's payload
    path.write_bytes(bytes(data))
    with pytest.raises(StorageCorruptionError) as raised:
        open_repo()
    message = str(raised.value)
    assert str(path) in message and f"offset {offset}" in message and "--accept-damage" in message


def test_a_torn_marks_section_is_refused(open_repo, tmp_path):
    repo = open_repo()
    repo.update([RepositoryRecord.transfer_mark(f"node-b:u{i}", _now_ms()) for i in range(50)])
    repo.checkpoint()
    path = tmp_path / "ffr" / snapshots.SNAPSHOT_NAME
    data = path.read_bytes()
    offset = _frame_offsets(data)[b"T"]
    path.write_bytes(data[:offset + 20])
    with pytest.raises(StorageCorruptionError) as raised:
        open_repo()
    assert str(path) in str(raised.value)


def test_a_marks_section_of_the_wrong_shape_is_refused(tmp_path):
    snapshots.write_snapshot(tmp_path, [], [], transfer_marks={"k": 1}, max_txn_id=-1, record_count=0,
                             serde_name="flowfile", serde_version=2, journal="x")
    path = tmp_path / snapshots.SNAPSHOT_NAME
    assert snapshots.read_snapshot(path).transfer_marks == {"k": 1}


    data = path.read_bytes()
    offset = _frame_offsets(data)[b"T"]
    payload = msgpack.packb(["not", "a", "map"])
    frame = bytes([ord("T")]) + len(payload).to_bytes(4, "big") + crc32(payload).to_bytes(4, "big") + payload
    end = data[offset + 9 + int.from_bytes(data[offset + 1:offset + 5], "big"):]
    path.write_bytes(data[:offset] + frame + end)
    with pytest.raises(snapshots.SnapshotCorruptionError, match="transfer marks"):
        snapshots.read_snapshot(path)


def _frame_offsets(data: bytes) -> dict[bytes, int]:
    header_length = int.from_bytes(data[8:12], "big")
    offset = 16 + header_length
    found = {}
    while offset + 9 <= len(data):
        kind = data[offset:offset + 1]
        size = int.from_bytes(data[offset + 1:offset + 5], "big")
        found.setdefault(kind, offset)
        offset += 9 + size
    return found


def _frame_kinds(data: bytes) -> list[bytes]:
    return sorted(_frame_offsets(data), key=_frame_offsets(data).get)
