"""FetchFile against real files in a temporary directory."""

from __future__ import annotations

import os
import re
import time

import pytest

from engine.processors.fetch_file import FetchFile
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner

ROOT = os.geteuid() == 0
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@pytest.fixture
def files(tmp_path):
    directory = tmp_path / "files"
    directory.mkdir()
    return directory


def listed(runner, path, content=b"placeholder", **attributes):
    """Enqueue a FlowFile as ListFile makes it for ``path``."""
    return runner.enqueue(content, filename=path.name, **{"absolute.path": f"{path.parent}/"}, **attributes)


def make(path, content=b"file content"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def test_replaces_the_content_with_the_file_and_leaves_the_file(tmp_path, files):
    source = make(files / "a.txt", b"hello from disk")
    with ProcessorTestRunner(FetchFile, tmp_path) as runner:
        flowfile = listed(runner, source, keep="me")
        runner.run()
        (out,) = runner.output("success")
        assert runner.content(out) == b"hello from disk"
        assert out.uuid == flowfile.uuid and out.attributes["keep"] == "me"
        assert source.read_bytes() == b"hello from disk"
        event = runner.events(flowfile_uuid=out.uuid)[-1]
        assert event.event_type is E.FETCH
        assert event.transit_uri == source.as_uri()
        assert event.details == f"Replaced content of FlowFile with contents of {source.as_uri()}"


def test_several_flowfiles_are_fetched_in_one_task(tmp_path, files):
    with ProcessorTestRunner(FetchFile, tmp_path) as runner:
        for index in range(5):
            listed(runner, make(files / f"f{index}", str(index).encode()))
        runner.run()
        assert sorted(runner.content(f) for f in runner.output("success")) == [b"0", b"1", b"2", b"3", b"4"]


def test_file_to_fetch_is_an_expression_over_the_attributes(tmp_path, files):
    make(files / "data" / "x.bin", b"x")
    with ProcessorTestRunner(FetchFile, tmp_path, {"File to Fetch": "${root}/data/${name}.bin"}) as runner:
        runner.enqueue(root=str(files), name="x")
        runner.run()
        (out,) = runner.output("success")
        assert runner.content(out) == b"x"


def test_delete_file_deletes_the_file_only_after_the_commit(tmp_path, files):
    source = make(files / "a.txt")
    with ProcessorTestRunner(FetchFile, tmp_path, {"Completion Strategy": "Delete File"}) as runner:
        listed(runner, source)
        runner.node.start()
        session = runner.node.create_session()
        runner.node.processor.on_trigger(runner.node.context, session)
        assert source.exists(), "the file stays until its content is committed"
        session.commit()
        assert not source.exists()
        assert len(runner.output("success")) == 1
        runner.stop()


def test_a_rolled_back_fetch_leaves_the_file_in_place(tmp_path, files):
    source = make(files / "a.txt")
    with ProcessorTestRunner(FetchFile, tmp_path, {"Completion Strategy": "Delete File"}) as runner:
        listed(runner, source)
        runner.node.start()
        session = runner.node.create_session()
        runner.node.processor.on_trigger(runner.node.context, session)
        session.rollback()
        assert source.exists() and len(runner.input_flowfiles()) == 1
        runner.stop()


def test_move_file_moves_it_into_a_destination_created_when_missing(tmp_path, files):
    source = make(files / "a.txt", b"moved")
    destination = tmp_path / "done" / "today"
    properties = {"Completion Strategy": "Move File", "Move Destination Directory": str(destination)}
    with ProcessorTestRunner(FetchFile, tmp_path, properties) as runner:
        listed(runner, source)
        runner.run()
        assert not source.exists()
        assert (destination / "a.txt").read_bytes() == b"moved"
        assert runner.content(runner.output("success")[0]) == b"moved"


def test_the_move_destination_is_an_expression_over_the_attributes(tmp_path, files):
    source = make(files / "a.txt")
    properties = {"Completion Strategy": "Move File", "Move Destination Directory": f"{tmp_path}/by-kind/${{kind}}"}
    with ProcessorTestRunner(FetchFile, tmp_path, properties) as runner:
        listed(runner, source, kind="reports")
        runner.run()
        assert (tmp_path / "by-kind" / "reports" / "a.txt").exists()


@pytest.mark.parametrize("name", ["a.txt", "noextension"])
def test_a_move_conflict_renames_by_default(tmp_path, files, name):
    source = make(files / name, b"new")
    destination = make(tmp_path / "done" / name, b"old").parent
    properties = {"Completion Strategy": "Move File", "Move Destination Directory": str(destination)}
    with ProcessorTestRunner(FetchFile, tmp_path, properties) as runner:
        listed(runner, source)
        runner.run()
        assert (destination / name).read_bytes() == b"old"
        (renamed,) = [p for p in destination.iterdir() if p.name != name]
        stem, _, extension = name.partition(".")
        expected = rf"{stem}-{UUID}\.{extension}" if extension else rf"{stem}-{UUID}"
        assert re.fullmatch(expected, renamed.name)
        assert renamed.read_bytes() == b"new" and not source.exists()


def test_a_move_conflict_can_replace_the_existing_file(tmp_path, files):
    source = make(files / "a.txt", b"new")
    destination = make(tmp_path / "done" / "a.txt", b"old").parent
    properties = {"Completion Strategy": "Move File", "Move Destination Directory": str(destination),
                  "Move Conflict Strategy": "Replace File"}
    with ProcessorTestRunner(FetchFile, tmp_path, properties) as runner:
        listed(runner, source)
        runner.run()
        assert [p.name for p in destination.iterdir()] == ["a.txt"]
        assert (destination / "a.txt").read_bytes() == b"new" and not source.exists()


def test_a_move_conflict_can_keep_the_existing_file_and_delete_the_fetched_one(tmp_path, files):
    source = make(files / "a.txt", b"new")
    destination = make(tmp_path / "done" / "a.txt", b"old").parent
    properties = {"Completion Strategy": "Move File", "Move Destination Directory": str(destination),
                  "Move Conflict Strategy": "Keep Existing"}
    with ProcessorTestRunner(FetchFile, tmp_path, properties) as runner:
        listed(runner, source)
        runner.run()
        assert [p.name for p in destination.iterdir()] == ["a.txt"]
        assert (destination / "a.txt").read_bytes() == b"old" and not source.exists()
        assert runner.content(runner.output("success")[0]) == b"new"


def test_a_move_conflict_can_fail_the_flowfile_before_fetching(tmp_path, files):
    source = make(files / "a.txt", b"new")
    destination = make(tmp_path / "done" / "a.txt", b"old").parent
    properties = {"Completion Strategy": "Move File", "Move Destination Directory": str(destination),
                  "Move Conflict Strategy": "Fail"}
    with ProcessorTestRunner(FetchFile, tmp_path, properties) as runner:
        listed(runner, source)
        runner.run()
        (failed,) = runner.output("failure")
        assert runner.content(failed) == b"placeholder", "nothing was fetched"
        assert source.exists() and (destination / "a.txt").read_bytes() == b"old"
        assert any("conflict strategy is Fail" in message for message in runner.bulletins)


def test_a_move_destination_that_is_a_file_fails_the_flowfile(tmp_path, files):
    source = make(files / "a.txt")
    blocker = make(tmp_path / "not-a-directory")
    properties = {"Completion Strategy": "Move File", "Move Destination Directory": str(blocker)}
    with ProcessorTestRunner(FetchFile, tmp_path, properties) as runner:
        listed(runner, source)
        runner.run()
        assert len(runner.output("failure")) == 1 and source.exists()


def test_a_failed_completion_leaves_the_flowfile_in_success_with_a_warning(tmp_path, files):
    source = make(files / "a.txt", b"data")
    destination = tmp_path / "done"
    properties = {"Completion Strategy": "Move File", "Move Destination Directory": str(destination)}
    with ProcessorTestRunner(FetchFile, tmp_path, properties) as runner:
        listed(runner, source)
        runner.node.start()
        session = runner.node.create_session()
        runner.node.processor.on_trigger(runner.node.context, session)
        destination.rmdir()
        destination.write_bytes(b"now a file")  # the destination breaks between the fetch and the commit
        session.commit()
        runner.stop()
        (out,) = runner.output("success")
        assert runner.content(out) == b"data" and source.exists()
        assert any("could not move it" in message for message in runner.bulletins)


def test_a_missing_file_goes_to_not_found_penalized_with_a_route_event(tmp_path, files):
    with ProcessorTestRunner(FetchFile, tmp_path) as runner:
        flowfile = listed(runner, files / "missing.txt")
        runner.run()
        (out,) = runner.output("not.found")
        assert out.penalty_expiration > time.time() * 1000
        assert runner.content(out) == b"placeholder"
        event = runner.events(flowfile_uuid=flowfile.uuid)[-1]
        assert event.event_type is E.ROUTE and event.relationship == "not.found"
        assert any("does not exist" in message for message in runner.bulletins)


def test_a_file_below_a_file_is_not_found(tmp_path, files):
    blocker = make(files / "plain")
    with ProcessorTestRunner(FetchFile, tmp_path, {"File to Fetch": f"{blocker}/inside"}) as runner:
        runner.enqueue()
        runner.run()
        assert len(runner.output("not.found")) == 1


def test_the_not_found_log_level_decides_whether_a_bulletin_is_posted(tmp_path, files):
    with ProcessorTestRunner(FetchFile, tmp_path, {"Log level when file not found": "NONE"}) as runner:
        listed(runner, files / "missing.txt")
        runner.run()
        assert len(runner.output("not.found")) == 1 and runner.bulletins == []
    with ProcessorTestRunner(FetchFile, tmp_path, {"Log level when file not found": "WARN"}) as runner:
        listed(runner, files / "missing.txt")
        runner.run()
        assert any("does not exist" in message for message in runner.bulletins)


def test_an_unreadable_file_goes_to_permission_denied_penalized(tmp_path, files):
    source = make(files / "secret.txt")
    os.chmod(source, 0)
    with ProcessorTestRunner(FetchFile, tmp_path, {"Log level when permission denied": "WARN"}) as runner:
        flowfile = listed(runner, source)
        runner.run()
        if ROOT:
            assert len(runner.output("success")) == 1
            pytest.skip("running as root: file permissions are not enforced, so a mode-000 file is readable")
        (out,) = runner.output("permission.denied")
        assert out.penalty_expiration > time.time() * 1000
        event = runner.events(flowfile_uuid=flowfile.uuid)[-1]
        assert event.event_type is E.ROUTE and event.relationship == "permission.denied"
        assert any("permission to read it is denied" in message for message in runner.bulletins)


def test_a_directory_cannot_be_fetched_and_goes_to_failure_penalized(tmp_path, files):
    with ProcessorTestRunner(FetchFile, tmp_path, {"File to Fetch": str(files)}) as runner:
        runner.enqueue(b"kept")
        runner.run()
        (out,) = runner.output("failure")
        assert runner.content(out) == b"kept" and out.penalty_expiration > time.time() * 1000


def test_a_failing_expression_goes_to_failure(tmp_path):
    with ProcessorTestRunner(FetchFile, tmp_path, {"File to Fetch": "/tmp/${n:toDate():toNumber()}"}) as runner:
        runner.enqueue(n="not a number")
        runner.run()
        assert len(runner.output("failure")) == 1


def test_moving_requires_a_destination_directory(tmp_path):
    with ProcessorTestRunner(FetchFile, tmp_path, {"Completion Strategy": "Move File"}) as runner:
        assert runner.validate() == ["'Move Destination Directory' is required"]
    with ProcessorTestRunner(FetchFile, tmp_path, {"Completion Strategy": "Delete File"}) as runner:
        assert runner.validate() == []


def test_invalid_configurations_are_reported(tmp_path):
    properties = {"Completion Strategy": "Shred", "Move Conflict Strategy": "Merge",
                  "Log level when file not found": "LOUD", "Log level when permission denied": "quiet",
                  "File to Fetch": " "}
    with ProcessorTestRunner(FetchFile, tmp_path, properties, input=False) as runner:
        problems = "\n".join(runner.validate())
        for name in properties:
            assert f"'{name}'" in problems
        assert "needs an incoming connection" in problems


def test_declares_what_nifi_declares():
    assert FetchFile.nifi_type == "org.apache.nifi.processors.standard.FetchFile"
    assert [r.name for r in FetchFile.relationships] == ["success", "not.found", "permission.denied", "failure"]
    assert FetchFile.restricted == ("read-filesystem", "write-filesystem")
    (default,) = [p.default for p in FetchFile.properties if p.name == "File to Fetch"]
    assert default == "${absolute.path}/${filename}"
