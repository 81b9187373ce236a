import logging
import os

import pytest

from engine.damage import StorageCorruptionError
from engine.wal import SyncPolicy, UpdateType, WriteAheadLog
from engine.wal.journal import list_journals
from tests.engine.wal.conftest import Rec


def open_log(path, serde, **options) -> WriteAheadLog:
    wal = WriteAheadLog(path, serde, **options)
    wal.recover()
    return wal


def write_values(wal, count, start=0):
    for i in range(start, start + count):
        wal.update([Rec(UpdateType.CREATE, i, f"value-{i}" * 10)])


def current_journal(path):
    return list_journals(path / "journals")[-1][1]


def test_transactions_survive_an_unclean_stop(tmp_path, serde):
    wal = open_log(tmp_path, serde, sync_policy=SyncPolicy.OS)
    write_values(wal, 50)
    # no close: what a killed process leaves
    recovered = open_log(tmp_path, serde)
    assert sorted(recovered.records) == list(range(50))
    assert recovered.records[7].value == "value-7" * 10


def test_truncated_tail_is_discarded_with_a_warning_naming_file_and_offset(tmp_path, serde, caplog):
    wal = open_log(tmp_path, serde)
    write_values(wal, 3)
    journal = current_journal(tmp_path)
    size = journal.stat().st_size
    with open(journal, "r+b") as handle:
        handle.truncate(size - 8)
    caplog.set_level(logging.WARNING)
    recovered = open_log(tmp_path, serde)
    assert sorted(recovered.records) == [0, 1]
    warning = next(r for r in caplog.records if "torn tail" in r.getMessage())
    assert str(journal) in warning.getMessage()
    assert "byte offset" in warning.getMessage()


def test_trailing_nul_bytes_are_a_torn_tail(tmp_path, serde, caplog):
    wal = open_log(tmp_path, serde)
    write_values(wal, 3)
    journal = current_journal(tmp_path)
    size = journal.stat().st_size
    with open(journal, "r+b") as handle:
        handle.truncate(size - 8)
        handle.seek(0, os.SEEK_END)
        handle.write(b"\0" * 28)
    recovered = open_log(tmp_path, serde)
    assert sorted(recovered.records) == [0, 1]


def test_only_zeros_after_last_transaction_is_harmless(tmp_path, serde):
    wal = open_log(tmp_path, serde)
    write_values(wal, 3)
    with open(current_journal(tmp_path), "ab") as handle:
        handle.write(b"\0" * 4096)
    recovered = open_log(tmp_path, serde)
    assert sorted(recovered.records) == [0, 1, 2]


def test_a_partial_transaction_is_never_half_applied(tmp_path, serde):
    wal = open_log(tmp_path, serde)
    wal.update([Rec(UpdateType.CREATE, 1, "a")])
    wal.update([Rec(UpdateType.CREATE, i, "b") for i in range(2, 100)] + [Rec(UpdateType.DELETE, 1)])
    journal = current_journal(tmp_path)
    with open(journal, "r+b") as handle:
        handle.truncate(journal.stat().st_size - 100)
    recovered = open_log(tmp_path, serde)
    assert sorted(recovered.records) == [1]


def test_corruption_in_the_middle_refuses_start_naming_file_and_offset(tmp_path, serde):
    wal = open_log(tmp_path, serde)
    write_values(wal, 10)
    journal = current_journal(tmp_path)
    data = bytearray(journal.read_bytes())
    middle = len(data) // 2
    data[middle] ^= 0xFF
    journal.write_bytes(bytes(data))
    before = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(StorageCorruptionError) as raised:
        open_log(tmp_path, serde)
    [damage] = raised.value.damages
    assert damage.path == str(journal)
    assert 0 < damage.offset <= middle
    assert str(journal) in str(raised.value) and f"byte offset {damage.offset}" in str(raised.value)
    assert "--accept-damage" in str(raised.value)
    assert {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_accepting_the_damage_keeps_every_readable_transaction_and_a_copy_of_the_log(tmp_path, serde):
    wal = open_log(tmp_path, serde)
    write_values(wal, 10)
    journal = current_journal(tmp_path)
    original = journal.read_bytes()
    data = bytearray(original)
    data[len(data) // 2] ^= 0xFF
    journal.write_bytes(bytes(data))
    recovered = WriteAheadLog(tmp_path, serde, accept_damage=True)
    report = recovered.recover()
    kept = sorted(recovered.records)
    assert len(kept) == 9 and set(kept) < set(range(10))
    [lost] = set(range(10)) - set(kept)
    assert any(f"transactions {lost} to {lost}" in item for item in report.given_up)
    copy = report.quarantine / tmp_path.name / "journals" / journal.name
    assert copy.read_bytes() == bytes(data)
    # the damaged journal was folded into a snapshot: a normal start now works
    recovered.update([Rec(UpdateType.CREATE, 100, "after")])
    again = open_log(tmp_path, serde)
    assert sorted(again.records) == kept + [100]


def test_bytes_that_cannot_begin_a_transaction_are_damage(tmp_path, serde):
    wal = open_log(tmp_path, serde)
    write_values(wal, 2)
    with open(current_journal(tmp_path), "ab") as handle:
        handle.write(b"\x13garbage")
    with pytest.raises(StorageCorruptionError, match="unexpected marker byte 0x13"):
        open_log(tmp_path, serde)


def test_clean_close_writes_the_end_marker(tmp_path, serde):
    wal = open_log(tmp_path, serde)
    write_values(wal, 2)
    journal = current_journal(tmp_path)
    wal.close(checkpoint=False)
    assert journal.read_bytes()[-13] == 0x7F
    assert sorted(open_log(tmp_path, serde).records) == [0, 1]
