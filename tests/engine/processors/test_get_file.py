"""GetFile against real files in a temporary directory."""

from __future__ import annotations

import grp
import os
import pwd
import re
import threading
import time

import pytest

from engine.processors.get_file import GetFile
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner

ROOT = os.geteuid() == 0


def make(path, content=b"data", age=None):
    """Write a file, optionally last modified ``age`` seconds ago."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    if age is not None:
        moment = time.time() - age
        os.utime(path, (moment, moment))
    return path


def names(runner):
    return sorted(flowfile.attributes["filename"] for flowfile in runner.output("success"))


@pytest.fixture
def inbox(tmp_path):
    directory = tmp_path / "inbox"
    directory.mkdir()
    return directory


def runner_for(tmp_path, inbox, **properties):
    return ProcessorTestRunner(GetFile, tmp_path, {"Input Directory": str(inbox), **properties}, input=False)


def test_picks_up_a_file_with_its_content_and_attributes_then_deletes_it(tmp_path, inbox):
    source = make(inbox / "report.csv", b"a,b\n1,2\n", age=30)
    os.chmod(source, 0o640)
    status = source.stat()
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        (flowfile,) = runner.output("success")
        assert runner.content(flowfile) == b"a,b\n1,2\n"
        attributes = flowfile.attributes
        assert attributes["filename"] == "report.csv"
        assert attributes["path"] == "./"
        assert attributes["absolute.path"] == str(inbox) + "/"
        assert attributes["file.permissions"] == "rw-r-----"
        assert attributes["file.owner"] == pwd.getpwuid(status.st_uid).pw_name
        assert attributes["file.group"] == grp.getgrgid(status.st_gid).gr_name
        expected_modified = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(status.st_mtime))
        assert attributes["file.lastModifiedTime"] == expected_modified
        for name in ("file.creationTime", "file.lastAccessTime"):
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}", attributes[name])
        assert not source.exists()


def test_each_flowfile_gets_a_receive_event_with_the_file_uri(tmp_path, inbox):
    source = make(inbox / "a b.txt")
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        (flowfile,) = runner.output("success")
        (event,) = runner.events(flowfile_uuid=flowfile.uuid)
        assert event.event_type is E.RECEIVE
        assert event.transit_uri == source.as_uri() == f"file://{inbox}/a%20b.txt"
        assert event.attributes["filename"] == "a b.txt"


def test_the_source_file_is_deleted_only_once_the_session_commits(tmp_path, inbox):
    source = make(inbox / "a.txt")
    with runner_for(tmp_path, inbox) as runner:
        runner.node.start()
        session = runner.node.create_session()
        runner.node.processor.on_trigger(runner.node.context, session)
        assert source.exists(), "nothing is deleted before the FlowFile is committed"
        session.commit()
        assert not source.exists()
        assert names(runner) == ["a.txt"]
        runner.stop()


def test_a_rolled_back_session_leaves_the_file_to_be_picked_up_again(tmp_path, inbox):
    source = make(inbox / "a.txt", b"kept")
    with runner_for(tmp_path, inbox) as runner:
        runner.node.start()
        session = runner.node.create_session()
        runner.node.processor.on_trigger(runner.node.context, session)
        session.rollback()
        assert source.exists() and runner.output("success") == []
        runner.run()
        (flowfile,) = runner.output("success")
        assert runner.content(flowfile) == b"kept" and not source.exists()


def test_keep_source_file_leaves_files_in_place_and_picks_them_up_again(tmp_path, inbox):
    source = make(inbox / "a.txt")
    with runner_for(tmp_path, inbox, **{"Keep Source File": "true"}) as runner:
        runner.run(2)
        assert names(runner) == ["a.txt", "a.txt"]
        assert source.exists()


def test_batch_size_limits_the_files_of_one_task(tmp_path, inbox):
    for index in range(5):
        make(inbox / f"f{index}.txt", age=100 - index)
    with runner_for(tmp_path, inbox, **{"Batch Size": "2"}) as runner:
        runner.run(stop=False)
        assert len(runner.output("success")) == 2
        runner.run(2)
        assert names(runner) == [f"f{index}.txt" for index in range(5)]
        assert list(inbox.iterdir()) == []


def test_the_default_batch_size_is_ten(tmp_path, inbox):
    for index in range(12):
        make(inbox / f"f{index:02}.txt")
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        assert len(runner.output("success")) == 10


def test_older_files_are_picked_up_first(tmp_path, inbox):
    make(inbox / "new.txt", age=10)
    make(inbox / "old.txt", age=1000)
    with runner_for(tmp_path, inbox, **{"Batch Size": "1"}) as runner:
        runner.run()
        assert names(runner) == ["old.txt"]


def test_file_filter_matches_the_whole_name(tmp_path, inbox):
    make(inbox / "a.csv")
    make(inbox / "b.csv.tmp")
    make(inbox / "c.json")
    with runner_for(tmp_path, inbox, **{"File Filter": r".*\.csv"}) as runner:
        runner.run()
        assert names(runner) == ["a.csv"]
        assert sorted(p.name for p in inbox.iterdir()) == ["b.csv.tmp", "c.json"]


def test_hidden_files_are_ignored_unless_asked_for(tmp_path, inbox):
    make(inbox / ".hidden")
    make(inbox / "shown")
    with runner_for(tmp_path, inbox, **{"File Filter": ".*"}) as runner:
        runner.run()
        assert names(runner) == ["shown"]
    with runner_for(tmp_path, inbox, **{"File Filter": ".*", "Ignore Hidden Files": "false"}) as runner:
        runner.run()
        assert names(runner) == [".hidden"]


def test_the_default_file_filter_skips_dot_files_too(tmp_path, inbox):
    make(inbox / ".partial")
    with runner_for(tmp_path, inbox, **{"Ignore Hidden Files": "false"}) as runner:
        runner.run()
        assert names(runner) == []


def test_subdirectories_are_recursed_by_default_with_a_relative_path(tmp_path, inbox):
    make(inbox / "top.txt")
    make(inbox / "a" / "b" / "deep.txt")
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        paths = {f.attributes["filename"]: (f.attributes["path"], f.attributes["absolute.path"])
                 for f in runner.output("success")}
        assert paths == {"top.txt": ("./", f"{inbox}/"), "deep.txt": ("a/b/", f"{inbox}/a/b/")}


def test_without_recursion_only_the_directory_itself_is_read(tmp_path, inbox):
    make(inbox / "top.txt")
    nested = make(inbox / "sub" / "nested.txt")
    with runner_for(tmp_path, inbox, **{"Recurse Subdirectories": "false"}) as runner:
        runner.run()
        assert names(runner) == ["top.txt"]
        assert nested.exists()


def test_path_filter_selects_subdirectories_and_leaves_the_top_directory_alone(tmp_path, inbox):
    make(inbox / "top.txt")
    make(inbox / "keep" / "a.txt")
    make(inbox / "keep" / "inner" / "b.txt")
    make(inbox / "skip" / "c.txt")
    with runner_for(tmp_path, inbox, **{"Path Filter": "keep.*"}) as runner:
        runner.run()
        assert names(runner) == ["a.txt", "b.txt"]


def test_minimum_and_maximum_age(tmp_path, inbox):
    make(inbox / "fresh.txt", age=5)
    make(inbox / "middle.txt", age=120)
    make(inbox / "ancient.txt", age=7200)
    with runner_for(tmp_path, inbox, **{"Minimum File Age": "1 min", "Maximum File Age": "1 hour"}) as runner:
        runner.run()
        assert names(runner) == ["middle.txt"]


def test_minimum_and_maximum_size(tmp_path, inbox):
    make(inbox / "small", b"x" * 10)
    make(inbox / "medium", b"x" * 2000)
    make(inbox / "large", b"x" * 5000)
    with runner_for(tmp_path, inbox, **{"Minimum File Size": "1 KB", "Maximum File Size": "4 KB"}) as runner:
        runner.run()
        assert names(runner) == ["medium"]


def test_polling_interval_spaces_out_listings(tmp_path, inbox):
    make(inbox / "first.txt")
    with runner_for(tmp_path, inbox, **{"Polling Interval": "1 hour"}) as runner:
        runner.run(stop=False)
        make(inbox / "second.txt")
        runner.run(stop=False)
        assert names(runner) == ["first.txt"], "no new listing before the interval has passed"
        runner.stop()
        runner.run()
        assert names(runner) == ["first.txt", "second.txt"], "a restart lists again"


def test_concurrent_tasks_never_pick_up_the_same_file(tmp_path, inbox):
    make(inbox / "a.txt")
    make(inbox / "b.txt")
    with runner_for(tmp_path, inbox, **{"Batch Size": "1"}) as runner:
        runner.node.start()
        processor, context = runner.node.processor, runner.node.context
        first, second = runner.node.create_session(), runner.node.create_session()
        processor.on_trigger(context, first)
        processor.on_trigger(context, second)  # lists again while the first file is still on disk
        first.commit()
        second.commit()
        assert names(runner) == ["a.txt", "b.txt"]
        runner.stop()


def test_many_threads_pick_up_every_file_exactly_once(tmp_path, inbox):
    for index in range(60):
        make(inbox / f"f{index:02}.txt", str(index).encode())
    with runner_for(tmp_path, inbox, **{"Batch Size": "3"}) as runner:
        runner.node.start()
        processor, context = runner.node.processor, runner.node.context
        errors = []

        def work():
            try:
                for _ in range(500):
                    if not any(inbox.iterdir()):
                        return
                    session = runner.node.create_session()
                    processor.on_trigger(context, session)
                    session.commit()
            except Exception as error:  # noqa: BLE001 - reported by the assertion below
                errors.append(error)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        runner.stop()
        assert errors == []
        picked = names(runner)
        assert picked == [f"f{index:02}.txt" for index in range(60)]
        assert list(inbox.iterdir()) == []


def test_unreadable_files_are_left_alone(tmp_path, inbox):
    locked = make(inbox / "locked.txt")
    make(inbox / "open.txt")
    os.chmod(locked, 0)
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        assert "open.txt" in names(runner)
        if ROOT:
            pytest.skip("running as root: file permissions are not enforced, so a mode-000 file is readable")
        assert names(runner) == ["open.txt"]
        assert locked.exists()


def test_a_missing_input_directory_at_run_time_is_reported_not_fatal(tmp_path, inbox):
    with runner_for(tmp_path, inbox) as runner:
        runner.node.start()
        inbox.rmdir()
        runner.run()
        assert runner.output("success") == []
        assert any("does not exist" in message for message in runner.bulletins)


def test_invalid_configurations_are_reported(tmp_path, inbox):
    properties = {"Input Directory": str(tmp_path / "missing"), "File Filter": "([", "Batch Size": "0",
                  "Maximum File Age": "50 millis", "Minimum File Size": "lots", "Keep Source File": "maybe",
                  "Polling Interval": "soon"}
    with ProcessorTestRunner(GetFile, tmp_path, properties, input=False) as runner:
        problems = "\n".join(runner.validate())
        for name in ("Input Directory", "File Filter", "Batch Size", "Maximum File Age", "Minimum File Size",
                     "Keep Source File", "Polling Interval"):
            assert f"'{name}'" in problems
        assert "does not exist" in problems and "100 millis" in problems


def test_the_input_directory_is_required_and_incoming_connections_are_refused(tmp_path):
    with ProcessorTestRunner(GetFile, tmp_path, {}) as runner:
        problems = runner.validate()
        assert "'Input Directory' is required" in problems
        assert "does not accept incoming connections" in problems


def test_the_input_directory_may_come_from_the_environment(tmp_path, inbox, monkeypatch):
    monkeypatch.setenv("GETFILE_INBOX", str(inbox))
    make(inbox / "env.txt")
    with ProcessorTestRunner(GetFile, tmp_path, {"Input Directory": "${GETFILE_INBOX}"}, input=False) as runner:
        assert runner.validate() == []
        runner.run()
        assert names(runner) == ["env.txt"]


def test_declares_what_nifi_declares():
    assert GetFile.nifi_type == "org.apache.nifi.processors.standard.GetFile"
    assert GetFile.restricted == ("read-filesystem", "write-filesystem")
    assert [p.name for p in GetFile.properties] == [
        "Input Directory", "File Filter", "Path Filter", "Batch Size", "Keep Source File", "Recurse Subdirectories",
        "Polling Interval", "Ignore Hidden Files", "Minimum File Age", "Maximum File Age", "Minimum File Size",
        "Maximum File Size"]
