"""ProcessSession.terminate never waits for a stuck call, and nothing the stuck thread does later counts."""

from __future__ import annotations

import threading
import time

import pytest

from engine import fileops
from engine.session import TaskTerminatedError


def _in_thread(function):
    outcome = {}

    def run():
        try:
            outcome["result"] = function()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_terminate_returns_at_once_while_a_write_callback_is_stuck(node):
    (flowfile,) = node.seed("in", b"old")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    taken = session.get()
    entered, release = threading.Event(), threading.Event()

    def callback(out):
        out.write(b"partial ")
        entered.set()
        release.wait(10)
        out.write(b"rest")

    thread, outcome = _in_thread(lambda: session.write(taken, callback))
    assert entered.wait(5)
    started = time.monotonic()
    session.terminate()
    assert time.monotonic() - started < 1
    assert session.terminated
    assert node.queue("in").size().unacknowledged_count == 1, "the stuck call still holds the FlowFile"
    release.set()
    thread.join(5)
    assert isinstance(outcome.get("error"), TaskTerminatedError)
    size = node.queue("in").size()
    assert (size.count, size.unacknowledged_count) == (1, 0)
    assert [f.uuid for f in node.queue("in").peek(5)] == [flowfile.uuid], "back once, unchanged"
    with pytest.raises(TaskTerminatedError):
        session.transfer(taken, "success")
    with pytest.raises(TaskTerminatedError):
        session.commit()
    assert len(node.queue("out")) == 0
    assert node.storage.verify().ok, node.storage.verify().problems


def test_a_stream_handed_out_before_terminate_raises_afterwards(node):
    node.seed("in", b"content")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    stream = session.read(session.get())
    session.terminate()
    assert node.queue("in").size().count == 1, "no call held the session: rolled back at once"
    with pytest.raises(TaskTerminatedError):
        stream.read()
    stream.close()


def test_a_commit_stuck_before_its_log_transaction_does_not_write_it(node):
    node.seed("in", b"a")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    session.transfer(session.write_bytes(session.get(), b"changed"), "success")
    entered, release = threading.Event(), threading.Event()

    def hang_in_content_sync(operation, path, size):
        if operation == "sync" and "content_repository" in path:
            entered.set()
            release.wait(10)
        return None

    previous = fileops.set_fault_hook(hang_in_content_sync)
    try:
        thread, outcome = _in_thread(session.commit)
        assert entered.wait(5)
        started = time.monotonic()
        session.terminate()
        assert time.monotonic() - started < 1
        release.set()
        thread.join(5)
    finally:
        fileops.set_fault_hook(previous)
    assert isinstance(outcome.get("error"), TaskTerminatedError)
    assert len(node.queue("out")) == 0 and len(node.queue("in")) == 1
    assert [queue for queue, _ in node.storage.flowfiles.live_flowfiles()] == ["in"]
    assert node.storage.verify().ok
