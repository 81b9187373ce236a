"""Damage reports and the quarantine folder."""

from __future__ import annotations

from engine.damage import Damage, DamageLog, Quarantine, StorageCorruptionError


def test_a_damage_names_the_file_the_offset_what_was_found_and_what_to_do():
    damage = Damage("journal", "/data/flowfile_repository/journals/7.journal", 4096, "checksum mismatch",
                    "start-up refused", "restore the file")
    assert str(damage) == ("journal /data/flowfile_repository/journals/7.journal at byte offset 4096: "
                           "checksum mismatch; start-up refused. restore the file")
    error = StorageCorruptionError([damage], "or start with --accept-damage")
    assert "7.journal at byte offset 4096" in str(error)
    assert str(error).endswith("or start with --accept-damage")


def test_listeners_hear_of_earlier_and_later_damage():
    log = DamageLog()
    first = log.record(Damage("swap file", "a.swap", None, "missing", "its FlowFiles are lost"))
    heard = []
    log.subscribe(heard.append)
    second = log.record(Damage("swap file", "b.swap", 12, "truncated", "3 FlowFiles lost"))
    assert heard == [first, second]
    assert log.entries() == [first, second]


def test_the_quarantine_keeps_paths_relative_to_the_data_directory_in_one_dated_folder(tmp_path):
    data = tmp_path / "node"
    journal = data / "flowfile_repository" / "journals" / "3.journal"
    journal.parent.mkdir(parents=True)
    journal.write_bytes(b"abc")
    swap = data / "flowfile_repository" / "swap" / "x.swap"
    swap.parent.mkdir()
    swap.write_bytes(b"def")
    quarantine = Quarantine(data, clock=lambda: 1_700_000_000.0)
    copied = quarantine.copy(journal)
    moved = quarantine.move(swap)
    folder = data / "quarantine" / "2023-11-14-22-13-20"
    assert copied == folder / "flowfile_repository" / "journals" / "3.journal"
    assert moved == folder / "flowfile_repository" / "swap" / "x.swap"
    assert copied.read_bytes() == b"abc" and journal.read_bytes() == b"abc"
    assert moved.read_bytes() == b"def" and not swap.exists()


def test_a_second_run_in_the_same_second_gets_a_folder_of_its_own(tmp_path):
    (tmp_path / "f").write_bytes(b"x")
    first = Quarantine(tmp_path, clock=lambda: 0.0)
    first.copy(tmp_path / "f")
    second = Quarantine(tmp_path, clock=lambda: 0.0)
    assert second.folder != first.folder
