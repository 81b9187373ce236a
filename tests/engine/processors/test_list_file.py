"""ListFile against real files in a temporary directory, with its listing state."""

from __future__ import annotations

import grp
import logging
import os
import pwd
import time

import pytest

from engine.components import Scope
from engine.processors.list_file import ListFile
from engine.provenance.event import ProvenanceEventType as E
from engine.runtime import Outcome
from engine.testing import ProcessorTestRunner

ROOT = os.geteuid() == 0
#: An hour ago, with milliseconds, so that the detected timestamp precision is milliseconds.
BASE = (int(time.time()) - 3600) * 1000 + 123


def make(path, content=b"data", modified_ms=BASE):
    """Write a file last modified at ``modified_ms``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    touch(path, modified_ms)
    return path


def touch(path, modified_ms):
    os.utime(path, ns=(modified_ms * 1_000_000, modified_ms * 1_000_000))


def names(runner):
    return sorted(flowfile.attributes["filename"] for flowfile in runner.output("success"))


@pytest.fixture
def inbox(tmp_path):
    directory = tmp_path / "inbox"
    directory.mkdir()
    return directory


def runner_for(tmp_path, inbox, **properties):
    return ProcessorTestRunner(ListFile, tmp_path, {"Input Directory": str(inbox), **properties}, input=False)


def state_of(runner):
    return dict(runner.state(Scope.CLUSTER).values)


def test_lists_files_without_content_with_their_attributes(tmp_path, inbox):
    source = make(inbox / "report.csv", b"a,b\n1,2\n")
    os.chmod(source, 0o604)
    status = source.stat()
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        (flowfile,) = runner.output("success")
        assert runner.content(flowfile) == b"" and flowfile.size == 0
        attributes = flowfile.attributes
        assert attributes["filename"] == "report.csv"
        assert attributes["path"] == "./"
        assert attributes["absolute.path"] == f"{inbox}/"
        assert attributes["file.size"] == "8"
        assert attributes["file.lastModifiedTime"] == time.strftime("%Y-%m-%dT%H:%M:%S%z",
                                                                    time.localtime(BASE / 1000))
        assert attributes["file.owner"] == pwd.getpwuid(status.st_uid).pw_name
        assert attributes["file.group"] == grp.getgrgid(status.st_gid).gr_name
        assert attributes["file.permissions"] == "rw----r--"
        assert "file.creationTime" in attributes and "file.lastAccessTime" in attributes
        assert source.read_bytes() == b"a,b\n1,2\n", "listing neither reads nor removes the file"
        (event,) = runner.events(flowfile_uuid=flowfile.uuid)
        assert event.event_type is E.CREATE


def test_without_file_attributes_only_the_listing_attributes_are_written(tmp_path, inbox):
    make(inbox / "a.txt")
    with runner_for(tmp_path, inbox, **{"Include File Attributes": "false"}) as runner:
        runner.run()
        (flowfile,) = runner.output("success")
        written = {k for k in flowfile.attributes if k.startswith("file.") or k in ("path", "absolute.path")}
        assert written == {"path", "absolute.path", "file.size", "file.lastModifiedTime"}


def test_a_file_is_listed_once_across_runs(tmp_path, inbox):
    make(inbox / "a.txt", modified_ms=BASE)
    make(inbox / "b.txt", modified_ms=BASE + 1000)
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        assert names(runner) == ["a.txt", "b.txt"]
        runner.run(3)
        assert names(runner) == ["a.txt", "b.txt"], "nothing is listed twice"
        assert state_of(runner) == {
            "listing.timestamp": str(BASE + 1000), "processed.timestamp": str(BASE + 1000),
            "id.0": str(inbox / "b.txt"), "listing.configuration": state_of(runner)["listing.configuration"]}


def test_files_are_listed_oldest_first(tmp_path, inbox):
    make(inbox / "z-old.txt", modified_ms=BASE)
    make(inbox / "a-new.txt", modified_ms=BASE + 5000)
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        assert [f.attributes["filename"] for f in runner.output("success")] == ["z-old.txt", "a-new.txt"]


def test_a_file_modified_later_is_listed_again(tmp_path, inbox):
    changed = make(inbox / "changed.txt", modified_ms=BASE)
    make(inbox / "same.txt", modified_ms=BASE + 10)
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        touch(changed, BASE + 60_000)
        runner.run()
        assert [f.attributes["filename"] for f in runner.output("success")][2:] == ["changed.txt"]


def test_a_new_file_with_the_newest_time_already_listed_is_still_listed(tmp_path, inbox):
    make(inbox / "first.txt", modified_ms=BASE)
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        make(inbox / "twin.txt", modified_ms=BASE)
        time.sleep(0.15)  # past the 100 ms listing lag of millisecond timestamps
        runner.run()
        assert names(runner) == ["first.txt", "twin.txt"]
        assert {v for k, v in state_of(runner).items() if k.startswith("id.")} == {
            str(inbox / "first.txt"), str(inbox / "twin.txt")}
        time.sleep(0.15)
        runner.run()
        assert len(runner.output("success")) == 2


def test_a_file_appearing_with_an_older_time_is_not_listed(tmp_path, inbox):
    make(inbox / "new.txt", modified_ms=BASE + 60_000)
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        make(inbox / "moved-in.txt", modified_ms=BASE)
        runner.run()
        assert names(runner) == ["new.txt"]


def at_the_start_of_a_second():
    """Now, just after a whole second began: the current second has most of its time left."""
    time.sleep(1 - time.time() % 1)
    return int(time.time()) * 1000


def test_the_newest_files_wait_one_run_when_they_may_still_be_written(tmp_path, inbox):
    with runner_for(tmp_path, inbox, **{"Target System Timestamp Precision": "seconds"}) as runner:
        second = at_the_start_of_a_second()
        make(inbox / "just-written.txt", modified_ms=second)
        runner.run()
        assert names(runner) == [], "another file could still be written within the same second"
        assert state_of(runner)["listing.timestamp"] == str(second)
        runner.run()
        assert names(runner) == [], "too soon after the previous run"
        time.sleep(1.05)
        runner.run()
        assert names(runner) == ["just-written.txt"]
        time.sleep(1.05)
        runner.run()
        assert names(runner) == ["just-written.txt"]


def test_timestamp_precision_sets_how_long_the_newest_files_wait(tmp_path, inbox):
    make(inbox / "recent.txt", modified_ms=int(time.time() * 1000) - 10_000)
    with runner_for(tmp_path, inbox, **{"Target System Timestamp Precision": "minutes"}) as runner:
        runner.run()
        assert names(runner) == [], "with minute precision a file of 10 s ago may still get company"
    with runner_for(tmp_path, inbox, **{"Target System Timestamp Precision": "millis"}) as runner:
        runner.run()
        assert names(runner) == ["recent.txt"]


def test_whole_second_times_are_detected_as_second_precision(tmp_path, inbox):
    with runner_for(tmp_path, inbox) as runner:
        second = at_the_start_of_a_second()
        make(inbox / "a.txt", modified_ms=second - 1000)
        make(inbox / "b.txt", modified_ms=second)
        runner.run()
        assert names(runner) == ["a.txt"], "b.txt waits out the 1 s lag of second precision"


def test_the_state_survives_a_restart(tmp_path, inbox):
    make(inbox / "a.txt", modified_ms=BASE)
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        runner.node.processor = ListFile()  # a new process: nothing remembered but the stored state
        runner.run()
        assert names(runner) == ["a.txt"]
        make(inbox / "b.txt", modified_ms=BASE + 1000)
        runner.run()
        assert names(runner) == ["a.txt", "b.txt"]


def test_a_new_primary_node_continues_from_the_cluster_state(tmp_path, inbox):
    make(inbox / "a.txt", modified_ms=BASE)
    with runner_for(tmp_path, inbox) as former:
        former.run()
        shared = state_of(former)
    make(inbox / "b.txt", modified_ms=BASE + 1000)
    with runner_for(tmp_path, inbox) as successor:
        successor.node.state_manager.set_state(shared, Scope.CLUSTER)
        successor.run()
        assert names(successor) == ["b.txt"]


def test_a_node_reelected_primary_reloads_what_the_other_primary_stored(tmp_path, inbox):
    make(inbox / "a.txt", modified_ms=BASE)
    with runner_for(tmp_path, inbox) as node, runner_for(tmp_path, inbox) as other:
        node.run(stop=False)
        node.controller.set_primary(False)
        make(inbox / "b.txt", modified_ms=BASE + 1000)
        assert node.run(stop=False) == [Outcome.NOT_PRIMARY]
        other.node.state_manager.set_state(state_of(node), Scope.CLUSTER)
        other.run()  # the primary of the time lists b.txt
        assert names(other) == ["b.txt"]
        node.node.state_manager.set_state(state_of(other), Scope.CLUSTER)
        node.controller.set_primary(True)
        node.run()
        assert names(node) == ["a.txt"], "b.txt was listed by the other primary"


def test_clearing_the_state_lists_everything_again(tmp_path, inbox):
    make(inbox / "a.txt")
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        runner.node.state_manager.clear(Scope.CLUSTER)
        runner.run()
        assert names(runner) == ["a.txt", "a.txt"]


def test_changing_the_filters_starts_a_new_listing(tmp_path, inbox):
    make(inbox / "a.csv", modified_ms=BASE)
    make(inbox / "b.txt", modified_ms=BASE)
    with runner_for(tmp_path, inbox, **{"File Filter": r".*\.txt"}) as first:
        first.run()
        shared = state_of(first)
    with runner_for(tmp_path, inbox) as unchanged:
        unchanged.node.state_manager.set_state(shared, Scope.CLUSTER)
        unchanged.run()
    with runner_for(tmp_path, inbox, **{"File Filter": r".*\.txt"}) as same:
        same.node.state_manager.set_state(shared, Scope.CLUSTER)
        same.run()
        assert names(same) == []
    assert names(unchanged) == ["a.csv", "b.txt"]


def test_no_tracking_lists_every_file_at_every_run_and_keeps_no_state(tmp_path, inbox):
    make(inbox / "a.txt")
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        assert state_of(runner) != {}
    with runner_for(tmp_path, inbox, **{"Listing Strategy": "none"}) as runner:
        runner.node.state_manager.set_state({"listing.timestamp": str(BASE)}, Scope.CLUSTER)
        runner.run(3)
        assert names(runner) == ["a.txt"] * 3
        assert state_of(runner) == {}


def test_file_filter_hidden_files_and_sizes(tmp_path, inbox):
    make(inbox / "keep.log", b"x" * 2000)
    make(inbox / "small.log", b"x")
    make(inbox / "big.log", b"x" * 9000)
    make(inbox / "other.txt", b"x" * 2000)
    make(inbox / ".hidden.log", b"x" * 2000)
    properties = {"File Filter": r".*\.log", "Minimum File Size": "1 KB", "Maximum File Size": "8 KB"}
    with runner_for(tmp_path, inbox, **properties) as runner:
        runner.run()
        assert names(runner) == ["keep.log"]
    with runner_for(tmp_path, inbox, **properties, **{"Ignore Hidden Files": "false"}) as runner:
        runner.run()
        assert names(runner) == [".hidden.log", "keep.log"]


def test_minimum_and_maximum_age(tmp_path, inbox):
    now = int(time.time() * 1000)
    make(inbox / "fresh.txt", modified_ms=now - 5_000)
    make(inbox / "middle.txt", modified_ms=now - 120_000)
    make(inbox / "ancient.txt", modified_ms=now - 7_200_000)
    with runner_for(tmp_path, inbox, **{"Minimum File Age": "1 min", "Maximum File Age": "1 hour"}) as runner:
        runner.run()
        assert names(runner) == ["middle.txt"]


def test_recursion_and_the_path_filter(tmp_path, inbox):
    make(inbox / "top.txt")
    make(inbox / "keep" / "a.txt")
    make(inbox / "keep" / "inner" / "b.txt")
    make(inbox / "skip" / "c.txt")
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        paths = sorted((f.attributes["path"], f.attributes["filename"]) for f in runner.output("success"))
        assert paths == [("./", "top.txt"), ("keep/", "a.txt"), ("keep/inner/", "b.txt"), ("skip/", "c.txt")]
        deep = next(f for f in runner.output("success") if f.attributes["filename"] == "b.txt")
        assert deep.attributes["absolute.path"] == f"{inbox}/keep/inner/"
    with runner_for(tmp_path, inbox, **{"Path Filter": "keep"}) as runner:
        runner.run()
        assert names(runner) == ["a.txt"]
    with runner_for(tmp_path, inbox, **{"Path Filter": "keep.*|"}) as runner:
        runner.run()
        assert names(runner) == ["a.txt", "b.txt", "top.txt"], "the input directory itself has the empty path"
    with runner_for(tmp_path, inbox, **{"Recurse Subdirectories": "false", "Path Filter": "keep"}) as runner:
        runner.run()
        assert names(runner) == ["top.txt"], "without recursion the path filter does not apply"


def test_a_symbolic_link_loop_is_listed_once(tmp_path, inbox):
    make(inbox / "sub" / "a.txt")
    os.symlink(inbox, inbox / "sub" / "back")
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        assert names(runner) == ["a.txt"]


def test_unreadable_files_are_not_listed(tmp_path, inbox):
    locked = make(inbox / "locked.txt")
    make(inbox / "open.txt")
    os.chmod(locked, 0)
    with runner_for(tmp_path, inbox) as runner:
        runner.run()
        assert "open.txt" in names(runner)
        if ROOT:
            pytest.skip("running as root: file permissions are not enforced, so a mode-000 file is readable")
        assert names(runner) == ["open.txt"]


def test_slow_listings_and_disk_operations_post_warnings(tmp_path, inbox):
    make(inbox / "a.txt")
    with runner_for(tmp_path, inbox, **{"Max Directory Listing Time": "0 sec",
                                         "Max Disk Operation Time": "0 sec"}) as runner:
        runner.run()
        assert any("listing directory" in message for message in runner.bulletins)
        assert any("reading the details of" in message for message in runner.bulletins)


def test_track_performance_sums_up_each_listing(tmp_path, inbox, caplog):
    make(inbox / "a.txt")
    make(inbox / "b.txt")
    with runner_for(tmp_path, inbox, **{"Track Performance": "true"}) as runner, \
            caplog.at_level(logging.DEBUG, logger="flowsite.components"):
        runner.run()
    (summary,) = [r.getMessage() for r in caplog.records if "examined" in r.getMessage()]
    assert "2 file(s) examined" in summary and "2 passed the filters" in summary


def test_runs_on_the_primary_node_only_one_task_at_a_time_every_minute():
    assert ListFile.primary_node_only and ListFile.trigger_serially
    assert ListFile.default_scheduling_period == "1 min"
    assert ListFile.restricted == ()
    assert ListFile.nifi_type == "org.apache.nifi.processors.standard.ListFile"


def test_invalid_configurations_are_reported(tmp_path, inbox):
    properties = {"Input Directory": str(tmp_path / "missing"), "Listing Strategy": "entities",
                  "File Filter": "*", "Maximum File Age": "10 millis", "Target System Timestamp Precision": "hours",
                  "Input Directory Location": "Mars"}
    with ProcessorTestRunner(ListFile, tmp_path, properties, input=False) as runner:
        problems = "\n".join(runner.validate())
        assert "'Input Directory'" in problems and "does not exist" in problems
        assert "'Listing Strategy' is 'entities', which is not one of the allowed values: timestamps, none" in problems
        for name in ("File Filter", "Maximum File Age", "Target System Timestamp Precision",
                     "Input Directory Location"):
            assert f"'{name}'" in problems


def test_a_flow_exported_by_nifi_with_former_property_names_loads_unchanged(tmp_path, inbox):
    make(inbox / "a.txt")
    exported = {
        "listing-strategy": "none", "Input Directory": str(inbox), "Recurse Subdirectories": "true",
        "record-writer": None, "Input Directory Location": "Remote", "File Filter": r"[^\.].*", "Path Filter": None,
        "Include File Attributes": "true", "Minimum File Age": "0 sec", "Maximum File Age": None,
        "Minimum File Size": "0 B", "Maximum File Size": None, "Ignore Hidden Files": "true",
        "target-system-timestamp-precision": "auto-detect", "et-state-cache": None, "et-time-window": "3 hours",
        "et-initial-listing-target": "all", "et-node-identifier": "${hostname()}", "track-performance": "false",
        "max-performance-metrics": "100000", "max-operation-time": "10 secs", "max-listing-time": "3 mins",
    }
    with ProcessorTestRunner(ListFile, tmp_path, exported, input=False) as runner:
        assert runner.validate() == []
        runner.run(2)
        assert names(runner) == ["a.txt", "a.txt"], "the migrated Listing Strategy (No Tracking) applies"


def test_a_record_writer_is_not_offered(tmp_path, inbox):
    properties = {"Input Directory": str(inbox), "Record Writer": "writer"}
    with ProcessorTestRunner(ListFile, tmp_path, properties, input=False) as runner:
        assert "'Record Writer' is not a property of ListFile" in runner.validate()


def test_a_missing_input_directory_at_run_time_is_reported_not_fatal(tmp_path, inbox):
    with runner_for(tmp_path, inbox) as runner:
        runner.node.start()
        inbox.rmdir()
        runner.run()
        assert runner.output("success") == []
        assert any("does not exist" in message for message in runner.bulletins)
