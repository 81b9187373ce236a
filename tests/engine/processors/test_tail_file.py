"""TailFile with real files: whole lines only, rollovers found by the rolling pattern, the start
positions, line-start grouping, NUL rereading, several files, state across restarts and a crash
in the middle of a commit, confinement, and failures that lose nothing."""

from __future__ import annotations

import json
import os
import time
import zlib

import pytest

from engine.components import Scope
from engine.processors.tail_file import PENDING_MARK, PENDING_STATE
from engine.testing import ProcessorTestRunner


def tail(tmp_path, properties, **options):
    return ProcessorTestRunner("TailFile", tmp_path, properties, input=False, **options)


def contents(runner):
    return [runner.content(flowfile) for flowfile in runner.output("success")]


def append(path, data: bytes):
    with open(path, "ab") as handle:
        handle.write(data)


def age(path, seconds):
    """Move a file's last-modified time ``seconds`` into the past (rolled-over files are ordered by it)."""
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))


def test_whole_lines_become_flowfiles_named_after_their_byte_range(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"first\nsecond\r\nthird without end")
    with tail(tmp_path, {"Files to Tail": str(log)}) as runner:
        runner.run()
        (out,) = runner.output("success")
        assert runner.content(out) == b"first\nsecond\r\n"
        assert out.attributes["filename"] == "app.0-14.log"
        assert out.attributes["mime.type"] == "text/plain"
        assert out.attributes["tailfile.original.path"] == str(log)
        (event,) = runner.events(event_type="RECEIVE")
        assert event.transit_uri == log.as_uri()
        assert event.details == "FlowFile contains bytes 0 through 14 of source file"
        state = runner.state(Scope.LOCAL).values
        assert state["file.0.filename"] == str(log) and state["file.0.position"] == "14"
        assert {"file.0.checksum", "file.0.timestamp", "file.0.length", "file.0.tailingPostRollover"} <= set(state)
        assert PENDING_MARK not in state

        append(log, b"\nfourth\r")
        runner.run()
        assert contents(runner)[1:] == [b"third without end\n"], "a lone \\r at the end waits for what follows"
        append(log, b"fifth\n")
        runner.run()
        assert b"".join(contents(runner)) == b"first\nsecond\r\nthird without end\nfourth\rfifth\n"
        assert runner.output("success")[-1].attributes["filename"] == "app.32-45.log"


def test_a_rollover_is_followed_and_nothing_appended_before_it_is_missed(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"a1\na2\n")
    with tail(tmp_path, {"Files to Tail": str(log), "Rolling Filename Pattern": "${filename}.log.*"}) as runner:
        runner.run()
        append(log, b"a3\na4-no-end")
        log.rename(tmp_path / "app.log.1")
        log.write_bytes(b"b1\n")
        runner.run()
        assert contents(runner) == [b"a1\na2\n", b"a3\na4-no-end", b"b1\n"]
        names = [flowfile.attributes["filename"] for flowfile in runner.output("success")]
        assert names == ["app.0-6.log", "app.log.1", "app.0-3.log"]
        assert {flowfile.attributes["tailfile.original.path"] for flowfile in runner.output("success")} == {str(log)}
        runner.run()
        assert len(runner.output("success")) == 3, "nothing is read twice"


def test_rollovers_while_stopped_are_read_after_a_restart(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"a1\n")
    properties = {"Files to Tail": str(log), "Rolling Filename Pattern": "app.log.*"}
    with tail(tmp_path, properties) as runner:
        runner.run()  # stops afterwards; the state stays
        append(log, b"a2\n")
        log.rename(tmp_path / "app.log.1")
        (tmp_path / "app.log.2").write_bytes(b"b1\nb2\n")
        log.write_bytes(b"c1\n")
        age(tmp_path / "app.log.1", -1)  # rolled over after the last read, in this order
        age(tmp_path / "app.log.2", -2)
        runner.run()
        assert contents(runner) == [b"a1\n", b"a2\n", b"b1\nb2\n", b"c1\n"]
        runner.run()
        append(log, b"c2\n")
        runner.run()
        assert contents(runner)[4:] == [b"c2\n"]


def test_post_rollover_tail_period_keeps_reading_the_rolled_file_until_it_is_quiet(tmp_path):
    log, rolled = tmp_path / "app.log", tmp_path / "app.log.1"
    log.write_bytes(b"a1\n")
    properties = {"Files to Tail": str(log), "Rolling Filename Pattern": "app.log.*",
                  "Post-Rollover Tail Period": "1 sec"}
    with tail(tmp_path, properties) as runner:
        runner.run(stop=False)
        log.rename(rolled)
        log.write_bytes(b"b1\n")
        append(rolled, b"a2\na3-partial")  # the writer still flushes into the rolled-over file
        runner.run(stop=False)
        assert contents(runner) == [b"a1\n", b"a2\n"], "whole lines of the rolled file; the new one waits"
        assert runner.state().values["file.0.tailingPostRollover"] == "true"
        time.sleep(1.1)  # the rolled file stays quiet for longer than the period
        runner.run()
        assert contents(runner) == [b"a1\n", b"a2\n", b"a3-partial", b"b1\n"]
        assert runner.state().values["file.0.tailingPostRollover"] == "false"


def test_beginning_of_time_reads_the_rolled_over_files_oldest_first(tmp_path):
    for name, data, seconds in [("app.log.2", b"old\n", 20), ("app.log.1", b"newer\n", 10)]:
        (tmp_path / name).write_bytes(data)
        age(tmp_path / name, seconds)
    (tmp_path / "app.log").write_bytes(b"current\n")
    properties = {"Files to Tail": str(tmp_path / "app.log"), "Rolling Filename Pattern": "app.log.?",
                  "Initial Start Position": "Beginning of Time"}
    with tail(tmp_path, properties) as runner:
        runner.run()
        assert contents(runner) == [b"old\n", b"newer\n", b"current\n"]


def test_beginning_of_file_skips_rolled_over_files_and_current_time_skips_what_is_written(tmp_path):
    (tmp_path / "app.log.1").write_bytes(b"rolled\n")
    age(tmp_path / "app.log.1", 5)
    (tmp_path / "app.log").write_bytes(b"before\n")
    properties = {"Files to Tail": str(tmp_path / "app.log"), "Rolling Filename Pattern": "app.log.*"}
    with tail(tmp_path, properties) as runner:
        runner.run(2)
        assert contents(runner) == [b"before\n"]
    with tail(tmp_path, {**properties, "Initial Start Position": "Current Time"}) as runner:
        runner.run()
        append(tmp_path / "app.log", b"after\n")
        runner.run()
        assert contents(runner) == [b"after\n"]


def rollover_while_opening(runner, log, rollovers):
    """Make the tailed file roll over, once per ``rollovers`` entry, as TailFile opens it anew:
    after it listed the rolled-over files and before it reads the tailed file."""
    processor = runner.node.processor
    opening = processor._open

    def open_after_rollovers(path, tailed):
        while rollovers:
            name, data = rollovers.pop(0)
            log.rename(log.with_name(name))
            log.write_bytes(data)
        return opening(path, tailed)

    processor._open = open_after_rollovers


@pytest.mark.parametrize("running", [True, False], ids=["following a rollover", "after a restart"])
def test_a_file_that_rolls_over_again_while_it_is_reopened_is_not_skipped(tmp_path, running):
    log = tmp_path / "app.log"
    log.write_bytes(b"a1\n")
    properties = {"Files to Tail": str(log), "Rolling Filename Pattern": "app.log.*"}
    with tail(tmp_path, properties) as runner:
        runner.run(stop=not running)
        if running:
            log.rename(tmp_path / "app.log.1")
            age(tmp_path / "app.log.1", 2)
            log.write_bytes(b"b1\n")
        rollover_while_opening(runner, log, [("app.log.2", b"c1\n"), ("app.log.3", b"d1\n")])
        runner.run(3, stop=False)
        expected = [b"a1\n", b"b1\n", b"c1\n", b"d1\n"] if running else [b"a1\n", b"c1\n", b"d1\n"]
        assert contents(runner) == expected
        runner.stop()


def test_an_empty_rolled_over_file_does_not_hold_up_the_tailed_file(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"a1\n")
    properties = {"Files to Tail": str(log), "Rolling Filename Pattern": "app.log.*"}
    with tail(tmp_path, properties) as runner:
        runner.run(stop=False)
        log.rename(tmp_path / "app.log.1")
        age(tmp_path / "app.log.1", 2)
        log.write_bytes(b"")
        log.rename(tmp_path / "app.log.2")
        age(tmp_path / "app.log.2", 1)
        log.write_bytes(b"b1\n")
        runner.run(2, stop=False)
        assert contents(runner) == [b"a1\n", b"b1\n"]
        runner.stop()


def test_a_file_truncated_in_place_is_read_from_its_start(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"long first line\n")
    with tail(tmp_path, {"Files to Tail": str(log)}) as runner:
        runner.run(stop=False)
        log.write_bytes(b"new\n")
        runner.run()
        assert contents(runner) == [b"long first line\n", b"new\n"]


def test_a_file_replaced_without_a_rolling_pattern_is_read_from_its_start(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"a1\n")
    with tail(tmp_path, {"Files to Tail": str(log)}) as runner:
        runner.run(stop=False)
        log.rename(tmp_path / "gone.log")
        log.write_bytes(b"b1\nb2 and more\n")
        runner.run(2, stop=False)
        assert contents(runner) == [b"a1\n", b"b1\nb2 and more\n"]
        runner.stop()


def test_line_start_pattern_keeps_multi_line_messages_together(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"2026 one\n  at a\n  at b\n2026 two\n  at c\n")
    with tail(tmp_path, {"Files to Tail": str(log), "Line Start Pattern": r"\d{4} "}) as runner:
        runner.run()
        assert contents(runner) == [b"2026 one\n  at a\n  at b\n"], "the last message may go on"
        append(log, b"2026 three\n")
        runner.run()
        assert contents(runner)[1:] == [b"2026 two\n  at c\n"]
        assert runner.state().values["file.0.position"] == str(len(b"2026 one\n  at a\n  at b\n2026 two\n  at c\n"))


def test_max_buffer_size_sends_a_message_that_grows_too_long(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"START\n" + b"x" * 30 + b"\n" + b"y" * 30 + b"\n" + b"z\n")
    properties = {"Files to Tail": str(log), "Line Start Pattern": "START", "Max Buffer Size": "32 B"}
    with tail(tmp_path, properties) as runner:
        runner.run()
        assert contents(runner) == [b"START\n" + b"x" * 30 + b"\n"], "flushed once it held 32 bytes or more"
        append(log, b"w\n")
        runner.run()
        assert contents(runner)[1:] == [b"y" * 30 + b"\nz\n"]


def test_reread_on_nul_stops_before_the_line_and_reads_it_once_filled(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"good\nhole\0\0\nafter\n")
    properties = {"Files to Tail": str(log), "Reread on NUL Encountered": "true"}
    with tail(tmp_path, properties) as runner:
        runner.run()
        assert contents(runner) == [b"good\n"]
        assert any("NUL character encountered" in message for message in runner.bulletins)
        with open(log, "r+b") as handle:
            handle.seek(9)
            handle.write(b"ed")
        runner.run()
        assert contents(runner) == [b"good\n", b"holeed\nafter\n"]
    log.write_bytes(b"nul\0kept\n")
    with tail(tmp_path, {"Files to Tail": str(log)}) as runner:
        runner.run()
        assert contents(runner) == [b"nul\0kept\n"]


def test_multiple_files_mode_tails_matching_recent_files_each_with_its_own_state(tmp_path):
    base = tmp_path / "logs"
    (base / "sub").mkdir(parents=True)
    (base / "a.log").write_bytes(b"a\n")
    (base / "sub" / "b.log").write_bytes(b"b\n")
    (base / "old.log").write_bytes(b"old\n")
    (base / "c.txt").write_bytes(b"c\n")
    age(base / "old.log", 3 * 3600)
    properties = {"Tailing Mode": "Multiple files", "Base Directory": str(base), "Files to Tail": r"(sub/)?\w+\.log",
                  "Recursive Lookup": "true", "Maximum Age": "1 hour", "Lookup Frequency": "1 min"}
    with tail(tmp_path, properties) as runner:
        runner.run(stop=False)
        assert sorted(contents(runner)) == [b"a\n", b"b\n"]
        (base / "d.log").write_bytes(b"d\n")
        runner.run(stop=False)
        assert len(runner.output("success")) == 2, "the new file waits for the next lookup"
        runner.clock.advance(61)
        append(base / "a.log", b"a2\n")
        runner.run()
        assert sorted(contents(runner)) == sorted([b"a\n", b"b\n", b"d\n", b"a2\n"])
        state = runner.state().values
        files = {state[key]: key.split(".")[1] for key in state if key.endswith(".filename")}
        assert set(files) == {str(base / "a.log"), str(base / "sub" / "b.log"), str(base / "d.log")}
        assert len(set(files.values())) == 3


def test_multiple_files_mode_needs_a_base_directory(tmp_path):
    with tail(tmp_path, {"Tailing Mode": "Multiple files", "Files to Tail": ".*"}) as runner:
        assert "'Base Directory' is required in Multiple files mode" in runner.validate()


def test_nifi_1_property_names_load(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"x\n")
    with tail(tmp_path, {"File to Tail": str(log), "tail-mode": "Single file", "File Location": "Local",
                         "reread-on-nul": "false", "pre-allocated-buffer-size": "65536 B"}) as runner:
        assert runner.validate() == []
        runner.run()
        assert contents(runner) == [b"x\n"]


def _crash_with_pending(runner, log, mark_offset):
    """Store the state a crash between 'pending saved' and 'committed' would leave."""
    manager = runner.node.state_manager
    before = dict(manager.get_state(Scope.LOCAL).values)
    after = dict(before, **{"file.0.position": str(log.stat().st_size),
                            "file.0.checksum": str(zlib.crc32(log.read_bytes()))})
    committed = runner.storage.flowfiles.wal.transfer_marks.get("TailFile:processor-under-test")
    manager.set_state({**before, PENDING_MARK: str(committed + mark_offset), PENDING_STATE: json.dumps(after)},
                      Scope.LOCAL)


def test_a_commit_that_never_happened_is_read_again_after_a_crash(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"a\n")
    with tail(tmp_path, {"Files to Tail": str(log)}) as runner:
        runner.run()
        append(log, b"b\n")
        _crash_with_pending(runner, log, mark_offset=1)  # its mark is not in the repository
        runner.run()
        assert contents(runner) == [b"a\n", b"b\n"]


def test_a_commit_that_happened_is_not_read_again_after_a_crash(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"a\n")
    with tail(tmp_path, {"Files to Tail": str(log)}) as runner:
        runner.run()
        append(log, b"b\n")
        _crash_with_pending(runner, log, mark_offset=0)  # the repository has its mark
        runner.run()
        assert contents(runner) == [b"a\n"]
        append(log, b"c\n")
        runner.run()
        assert contents(runner) == [b"a\n", b"c\n"]


def test_state_that_cannot_be_saved_ingests_nothing_and_says_so(tmp_path):
    log = tmp_path / "app.log"
    log.write_bytes(b"a\n")
    with tail(tmp_path, {"Files to Tail": str(log)}) as runner:
        runner.run()
        append(log, b"b\n")
        blocker = runner.directory / "node" / "state" / "local" / "processor-under-test.json.tmp"
        blocker.mkdir()  # the state file cannot be replaced
        runner.run()
        assert contents(runner) == [b"a\n"]
        assert any("could not save the tailing position" in message and "will try again" in message
                   for message in runner.bulletins), runner.bulletins
        blocker.rmdir()
        runner.run()
        assert contents(runner) == [b"a\n", b"b\n"]


def test_a_file_that_cannot_be_read_ingests_nothing_and_says_so(tmp_path):
    log = tmp_path / "app.log"
    log.mkdir()  # opens, but reading it fails (EISDIR)
    with tail(tmp_path, {"Files to Tail": str(log)}) as runner:
        runner.run()
        assert contents(runner) == []
        assert any(f"could not read {log}" in message for message in runner.bulletins), runner.bulletins


def test_a_tenant_without_read_filesystem_cannot_run_it(tmp_path):
    with tail(tmp_path, {"Files to Tail": str(tmp_path / "app.log")}, tenant={"capabilities": []}) as runner:
        assert any("TailFile needs the restricted capability 'read-filesystem'" in problem
                   for problem in runner.validate())


def test_a_file_outside_the_tenants_roots_is_refused(tmp_path):
    from engine.confinement import ConfinementSettings

    roots = tmp_path / "files"
    (roots / "acme").mkdir(parents=True)
    secret = tmp_path / "elsewhere.log"
    secret.write_bytes(b"not yours\n")
    with tail(tmp_path, {"Files to Tail": str(secret)}, tenant={"capabilities": ["read-filesystem"]},
              confinement=ConfinementSettings(files_root=str(roots))) as runner:
        runner.run()
        assert contents(runner) == []
        assert any(f"TailFile[processor-under-test] refused {secret}: outside tenant acme's file roots" in message
                   for message in runner.bulletins), runner.bulletins


@pytest.mark.parametrize("pattern,name,matches", [
    ("app.log.*", "app.log.1", True), ("app.log.*", "app.log", False), ("app.?.log", "app.1.log", True),
    ("app.{1,2}", "app.2", True), ("app.{1,2}", "app.3", False), ("app.[0-9]", "app.7", True),
])
def test_rolling_patterns_are_java_globs(pattern, name, matches):
    from engine.processors._tail import glob_regex

    assert bool(glob_regex(pattern).match(name)) is matches


def test_a_file_that_does_not_exist_yet_is_read_once_it_appears(tmp_path):
    log = tmp_path / "later" / "app.log"
    with tail(tmp_path, {"Files to Tail": str(log), "Rolling Filename Pattern": "app.log.*"}) as runner:
        runner.run(stop=False)
        assert contents(runner) == [] and runner.bulletins == []
        log.parent.mkdir()
        log.write_bytes(b"hello\n")
        runner.run()
        assert contents(runner) == [b"hello\n"]
