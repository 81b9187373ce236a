"""Recovery tells damage from a torn tail: a damaged log refuses to start, names the file, the
offset and what it found, and changes nothing on disk; an operator may start anyway."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engine.damage import StorageCorruptionError
from engine.wal import SyncPolicy, UpdateType, WriteAheadLog
from engine.wal.journal import list_journals
from tests.engine.wal.conftest import Rec, RecSerde, frame_offsets


def open_log(path: Path, **options) -> WriteAheadLog:
    wal = WriteAheadLog(path, RecSerde(), **options)
    wal.recover()
    return wal


def files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def journals(path: Path) -> list[Path]:
    return [p for _, p in list_journals(path / "journals")]


def build(path: Path, *, checkpoints: int = 1, per_journal: int = 5) -> dict[int, str]:
    """A log with a snapshot and several journals after it, each but the newest closed with an
    end marker: one run of the log per group of transactions, a checkpoint in the first
    ``checkpoints`` runs; the log is left closed."""
    model: dict[int, str] = {}
    key = 0
    for round_ in range(checkpoints + 2):
        wal = open_log(path, sync_policy=SyncPolicy.OS)
        for _ in range(per_journal):
            wal.update([Rec(UpdateType.CREATE, key, f"v{key}" * 3)])
            model[key] = f"v{key}" * 3
            key += 1
        if round_ < checkpoints:
            wal.checkpoint()
        wal.close(checkpoint=False)
    return model


def assert_refused_naming(path: Path, damaged: Path, before: dict[str, bytes]) -> StorageCorruptionError:
    with pytest.raises(StorageCorruptionError) as raised:
        open_log(path)
    assert any(d.path == str(damaged) for d in raised.value.damages), raised.value
    assert str(damaged) in str(raised.value)
    assert files(path) == before, "a refused start changed files"
    return raised.value


def test_a_flipped_length_field_is_damage_not_a_torn_tail(tmp_path):
    build(tmp_path)
    journal = journals(tmp_path)[-2]  # an older journal: its successor says where it ends
    offset = frame_offsets(journal)[1]
    data = bytearray(journal.read_bytes())
    data[offset + 11] ^= 0x40  # inside the payload length
    journal.write_bytes(bytes(data))
    error = assert_refused_naming(tmp_path, journal, files(tmp_path))
    assert error.damages[0].offset == offset


def test_a_flipped_length_in_the_newest_journal_is_damage_too(tmp_path):
    build(tmp_path)
    journal = journals(tmp_path)[-1]
    wal = open_log(tmp_path)
    for key in range(100, 110):
        wal.update([Rec(UpdateType.CREATE, key, "x")])
    journal = journals(tmp_path)[-1]
    offset = frame_offsets(journal)[3]
    data = bytearray(journal.read_bytes())
    data[offset + 12] ^= 0x01
    journal.write_bytes(bytes(data))
    error = assert_refused_naming(tmp_path, journal, files(tmp_path))
    assert error.damages[0].offset == offset and "checksum" in error.damages[0].found


def test_an_end_marker_written_over_a_frame_is_damage(tmp_path):
    build(tmp_path)
    wal = open_log(tmp_path)
    for key in range(100, 105):
        wal.update([Rec(UpdateType.CREATE, key, "x")])
    journal = journals(tmp_path)[-1]
    offset = frame_offsets(journal)[2]
    data = bytearray(journal.read_bytes())
    data[offset] = 0x7F
    journal.write_bytes(bytes(data))
    assert_refused_naming(tmp_path, journal, files(tmp_path))


def test_an_older_journal_that_lost_its_tail_is_damage(tmp_path):
    build(tmp_path)
    older = journals(tmp_path)[-2]
    offsets = frame_offsets(older)
    with open(older, "r+b") as handle:
        handle.truncate(offsets[-1])  # the last frame is gone, cleanly at a frame boundary
    error = assert_refused_naming(tmp_path, older, files(tmp_path))
    assert "next journal" in str(error)


def test_a_missing_journal_is_a_gap_and_damage(tmp_path):
    build(tmp_path, checkpoints=1)
    wal = open_log(tmp_path)
    wal.update([Rec(UpdateType.CREATE, 500, "x")])
    wal.close(checkpoint=False)
    chain = journals(tmp_path)
    middle = chain[1]
    middle.unlink()
    with pytest.raises(StorageCorruptionError) as raised:
        open_log(tmp_path)
    assert "a journal is missing" in str(raised.value)


def test_the_journal_the_snapshot_names_must_exist(tmp_path):
    build(tmp_path)
    first = journals(tmp_path)[0]
    first.unlink()
    with pytest.raises(StorageCorruptionError, match="snapshot names it"):
        open_log(tmp_path)


def test_an_empty_snapshot_is_damage_not_no_snapshot(tmp_path):
    build(tmp_path)
    (tmp_path / "snapshot").write_bytes(b"")
    error = assert_refused_naming(tmp_path, tmp_path / "snapshot", files(tmp_path))
    assert "empty" in str(error)


def test_a_flipped_bit_in_the_snapshot_header_is_damage(tmp_path):
    build(tmp_path)
    snapshot = tmp_path / "snapshot"
    data = bytearray(snapshot.read_bytes())
    data[20] ^= 0x01  # inside the msgpack header (max_txn_id among others)
    snapshot.write_bytes(bytes(data))
    error = assert_refused_naming(tmp_path, snapshot, files(tmp_path))
    assert error.damages[0].offset == 0


def test_an_empty_partial_alone_is_dropped_only_when_the_journals_start_at_zero(tmp_path):
    wal = open_log(tmp_path)
    wal.update([Rec(UpdateType.CREATE, 1, "a")])
    (tmp_path / ".partial").write_bytes(b"")  # a crash at the very start of the first checkpoint
    again = open_log(tmp_path)
    assert sorted(again.records) == [1]
    assert not (tmp_path / ".partial").exists()


def test_an_empty_partial_without_a_snapshot_is_damage_when_journals_were_removed(tmp_path):
    build(tmp_path)
    (tmp_path / "snapshot").rename(tmp_path / ".partial")
    (tmp_path / ".partial").write_bytes(b"")
    assert_refused_naming(tmp_path, tmp_path / ".partial", files(tmp_path))


def test_a_complete_partial_alone_is_promoted(tmp_path):
    model = build(tmp_path)
    (tmp_path / "snapshot").rename(tmp_path / ".partial")
    assert {k: r.value for k, r in open_log(tmp_path).records.items()} == model
    assert (tmp_path / "snapshot").exists() and not (tmp_path / ".partial").exists()


def test_no_snapshot_while_the_journals_start_later_is_damage(tmp_path):
    build(tmp_path)
    (tmp_path / "snapshot").unlink()
    with pytest.raises(StorageCorruptionError, match="snapshot .* the file is missing"):
        open_log(tmp_path)


def test_torn_tails_of_the_newest_journal_are_recovered_exactly(tmp_path):
    model = build(tmp_path)
    wal = open_log(tmp_path)
    for key in range(100, 110):
        wal.update([Rec(UpdateType.CREATE, key, "x" * 40)])
        model[key] = "x" * 40
    journal = journals(tmp_path)[-1]
    offsets = frame_offsets(journal)
    whole = journal.read_bytes()
    for cut in range(offsets[-1] + 1, len(whole)):  # every cut inside the last frame
        journal.write_bytes(whole[:cut])
        recovered = WriteAheadLog(tmp_path, RecSerde())
        recovered.recover(read_only=True)
        expected = dict(model)
        del expected[109]
        assert {k: r.value for k, r in recovered.records.items()} == expected
    journal.write_bytes(whole[: offsets[-1]] + b"\0" * 300)  # pages a power loss never wrote
    recovered = WriteAheadLog(tmp_path, RecSerde())
    recovered.recover(read_only=True)
    assert 109 not in recovered.records and 108 in recovered.records


@pytest.mark.parametrize("kind", ["journal", "older journal", "snapshot"])
def test_corruption_campaign_exact_recovery_or_a_refusal_that_names_the_damage(tmp_path, kind):
    """Flip a byte and cut the file at every frame boundary and at random offsets: recovery is
    exact, or it refuses naming the file and changing nothing — never a silent loss."""
    source = tmp_path / "source"
    model = build(source)
    wal = open_log(source, sync_policy=SyncPolicy.OS)
    for key in range(100, 112):
        wal.update([Rec(UpdateType.CREATE, key, "y" * (key % 7) * 10)])
        model[key] = "y" * (key % 7) * 10
    del wal
    target = {"journal": journals(source)[-1], "older journal": journals(source)[-2],
              "snapshot": source / "snapshot"}[kind]
    data = target.read_bytes()
    rng = random.Random(f"campaign-{kind}")
    points = set(frame_offsets(target)) if kind != "snapshot" else set(range(0, len(data), max(1, len(data) // 40)))
    points |= {rng.randrange(len(data)) for _ in range(20)}
    if kind == "older journal":
        points |= {len(data) - 13, len(data) - 5}  # its end marker, past the length its successor recorded
    outcomes = {"exact": 0, "refused": 0}
    for point in sorted(points):
        for damage in ("flip", "cut"):
            work = tmp_path / f"{damage}-{point}"
            _copy(source, work)
            victim = work / target.relative_to(source)
            damaged = bytearray(data)
            if damage == "flip":
                damaged[point] ^= 0x5A
            else:
                del damaged[point:]
            victim.write_bytes(bytes(damaged))
            before = files(work)
            try:
                recovered = open_log(work)
            except StorageCorruptionError as error:
                assert any(d.path == str(victim) for d in error.damages), (damage, point, str(error))
                assert files(work) == before
                outcomes["refused"] += 1
                continue
            got = {k: r.value for k, r in recovered.records.items()}
            torn_newest = kind == "journal" and damage == "cut"
            if torn_newest and got != model:
                # A cut newest journal loses only its unacknowledged-looking tail: a prefix of
                # the transactions, never one in the middle.
                assert set(got) <= set(model) and all(got[k] == model[k] for k in got)
                assert sorted(set(model) - set(got)) == list(range(min(set(model) - set(got)), 112))
            else:
                assert got == model, (damage, point)
            outcomes["exact"] += 1
    assert outcomes["refused"] > 0, outcomes
    if kind != "snapshot":  # every byte of a snapshot matters; a journal has torn tails and ignored bytes
        assert outcomes["exact"] > 0, outcomes


def _copy(source: Path, target: Path) -> None:
    for path in source.rglob("*"):
        destination = target / path.relative_to(source)
        if path.is_dir():
            destination.mkdir(parents=True, exist_ok=True)
        else:
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(path.read_bytes())
