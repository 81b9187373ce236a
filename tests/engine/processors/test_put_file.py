"""PutFile: writes, conflict strategies, directories, limits, metadata, failures, SEND events."""

from __future__ import annotations

import os
import stat
from datetime import datetime, timezone

import pytest

from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner


def put(tmp_path, properties, *flowfiles):
    runner = ProcessorTestRunner("PutFile", tmp_path, properties)
    for content, attributes in flowfiles:
        runner.enqueue(content, **attributes)
    runner.run()
    return runner


def test_writes_each_flowfile_and_records_a_send(tmp_path):
    out = tmp_path / "out"
    with put(tmp_path, {"Directory": str(out) + "/${region}"}, (b"one", {"filename": "a.txt", "region": "eu"}),
             (b"two" * 100_000, {"filename": "b.bin", "region": "us"})) as runner:
        assert (out / "eu" / "a.txt").read_bytes() == b"one"
        assert (out / "us" / "b.bin").read_bytes() == b"two" * 100_000
        assert len(runner.output("success")) == 2
        sends = runner.events(event_type=E.SEND)
        assert sorted(e.transit_uri for e in sends) == [(out / "eu" / "a.txt").as_uri(), (out / "us" / "b.bin").as_uri()]
        assert not [p for p in (out / "eu").iterdir() if p.name.startswith(".")], "no temporary file is left"


@pytest.mark.parametrize("strategy, content, routed", [("replace", b"new", "success"), ("ignore", b"old", "success"),
                                                       ("fail", b"old", "failure")])
def test_conflict_resolution(tmp_path, strategy, content, routed):
    out = tmp_path / "out"
    out.mkdir()
    (out / "x.txt").write_bytes(b"old")
    with put(tmp_path, {"Directory": str(out), "Conflict Resolution Strategy": strategy},
             (b"new", {"filename": "x.txt"})) as runner:
        assert (out / "x.txt").read_bytes() == content
        (flowfile,) = runner.output(routed)
        if routed == "failure":
            assert flowfile.penalty_expiration > 0, "a FlowFile that failed to be written is penalized"
            assert any("already exists" in message for message in runner.bulletins)
        assert len(runner.events(event_type=E.SEND)) == (1 if strategy == "replace" else 0)


def test_missing_directory_is_created_or_refused(tmp_path):
    with put(tmp_path, {"Directory": str(tmp_path / "new" / "deep")}, (b"x", {"filename": "f"})) as runner:
        assert (tmp_path / "new" / "deep" / "f").exists() and runner.output("success")
    with put(tmp_path, {"Directory": str(tmp_path / "absent"), "Create Missing Directories": "false"},
             (b"x", {"filename": "f"})) as runner:
        assert runner.output("failure") and not (tmp_path / "absent").exists()


def test_maximum_file_count(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "existing").write_bytes(b"")
    with put(tmp_path, {"Directory": str(out), "Maximum File Count": "2"}, (b"1", {"filename": "a"}),
             (b"2", {"filename": "b"})) as runner:
        assert len(runner.output("success")) == 1 and len(runner.output("failure")) == 1
        assert sorted(p.name for p in out.iterdir()) == ["a", "existing"]


def test_a_filename_leaving_the_directory_is_refused(tmp_path):
    with put(tmp_path, {"Directory": str(tmp_path / "out")}, (b"x", {"filename": "../escape.txt"})) as runner:
        assert runner.output("failure") and not (tmp_path / "escape.txt").exists()
        assert any("would leave the directory" in message for message in runner.bulletins)


def test_permissions_and_last_modified_time(tmp_path):
    out = tmp_path / "out"
    properties = {"Directory": str(out), "Permissions": "${perm}", "Last Modified Time": "${when}"}
    with put(tmp_path, properties, (b"a", {"filename": "sym", "perm": "rw-r-----", "when": "02/01/2026 10:30:00 +0000"}),
             (b"b", {"filename": "oct", "perm": "600", "when": ""})) as runner:
        assert len(runner.output("success")) == 2
        assert stat.S_IMODE(os.stat(out / "sym").st_mode) == 0o640
        assert stat.S_IMODE(os.stat(out / "oct").st_mode) == 0o600
        assert os.stat(out / "sym").st_mtime == datetime(2026, 1, 2, 10, 30, tzinfo=timezone.utc).timestamp()
    with put(tmp_path, {"Directory": str(out), "Permissions": "rwz"}, (b"c", {"filename": "bad"})) as runner:
        assert runner.output("failure")
        assert any("permissions 'rwz'" in message for message in runner.bulletins)


def test_directory_is_required(tmp_path):
    with ProcessorTestRunner("PutFile", tmp_path, {}) as runner:
        assert runner.validate() == ["'Directory' is required"]
