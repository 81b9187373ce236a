"""The bytewax side of bench.peer_bytewax does the same work as the Flowsite flow."""

from __future__ import annotations

import os
import pickle
import sqlite3
import threading

from bench.peer_bytewax import (
    RECORD_SIZE,
    FilePerRecordSink,
    RecordSource,
    build_dataflow,
    is_large,
    run_with_recovery,
    update_attributes,
)


def test_every_record_becomes_one_file_and_the_source_position_is_snapshotted(tmp_path):
    sink = FilePerRecordSink(tmp_path / "out")
    run_with_recovery(build_dataflow(RecordSource(threading.Event(), limit=250), sink), tmp_path / "recovery")

    names = os.listdir(tmp_path / "out")
    assert sink.written == 250
    assert len(names) == 250 and not [name for name in names if name.startswith(".")]
    assert {(tmp_path / "out" / name).stat().st_size for name in names} == {RECORD_SIZE}
    (partition,) = (tmp_path / "recovery").iterdir()
    with sqlite3.connect(partition) as db:
        states = db.execute("SELECT step_id, ser_change FROM snaps").fetchall()
    assert [(step, pickle.loads(state)) for step, state in states] == [("peer_bytewax.generate", 250)]


def test_the_map_adds_two_attributes_and_the_filter_keeps_only_large_records():
    attributes = {"uuid": "u", "filename": "u", "path": "./"}

    large = update_attributes((attributes, b"x" * RECORD_SIZE))
    small = update_attributes((attributes, b"x" * 100))

    assert large[0] == {**attributes, "stage": "updated", "size.class": "true"}
    assert small[0]["size.class"] == "false"
    assert is_large(large) and not is_large(small)
    assert "stage" not in attributes
