"""A session that writes content, failed at each of its content-file operations in turn (ENOSPC,
ENOSPC after half a write, EIO): it fails cleanly, storage verifies, nothing leaks, and the same
session succeeds once the disk heals."""

from __future__ import annotations

import errno

import pytest

from engine.testing.faults import FaultPlan

BIG = b"B" * (200 << 10)  # past the writer's buffer: written straight to the file


def _session_that_writes(node):
    """Take the two FlowFiles of "in", rewrite them (one small, one big), make three more in one
    batch write, send everything to "out" and commit; roll back on failure, as a task does."""
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    try:
        small, big = session.get_batch(2)
        small = session.write_bytes(small, b"small")
        big = session.write(big, lambda out: [out.write(BIG[:100]), out.write(BIG[100:])])
        batch = session.write_all_bytes([(session.create(), b"one"), (session.create(), b"two"),
                                         (session.create(), b"")])
        for flowfile in (small, big, *batch):
            session.transfer(flowfile, "success")
        session.commit()
    except BaseException:
        session.rollback()
        raise


def _drain(node, queue):
    session = node.session(incoming=[queue])
    for flowfile in session.get_batch(100):
        session.remove(flowfile)
    session.commit()


def _check_clean(node):
    verification = node.storage.verify()
    assert verification.ok, verification.problems
    size = node.queue("in").size()
    assert (size.count, size.unacknowledged_count) == (2, 0), "both FlowFiles are back"
    assert len(node.queue("out")) == 0


def _check_output(node):
    out = node.queue("out").peek(10)
    contents = sorted(node.storage.content.read_bytes(f.content_claim) if f.content_claim else b"" for f in out)
    assert contents == sorted([b"small", BIG, b"one", b"two", b""])
    assert node.storage.verify().ok


def test_a_session_fails_cleanly_at_each_content_file_operation(node):
    node.seed("in", b"x", b"y")
    counting = FaultPlan(operations={"open", "write", "sync"}, matches="content_repository")
    with counting.installed():
        _session_that_writes(node)
    operations = counting.count
    assert operations >= 5 and {op for op, _ in counting.calls} == {"open", "write", "sync"}, counting.calls
    _drain(node, "out")
    modes = [(errno.ENOSPC, False), (errno.ENOSPC, True), (errno.EIO, False)]
    failures = 0
    for number in range(1, operations + 3):
        for code, partial in modes:
            node.seed("in", b"x", b"y")
            plan = FaultPlan(fail_at=number, errno=code, operations={"open", "write", "sync"},
                             matches="content_repository", partial=partial)
            with plan.installed():
                try:
                    _session_that_writes(node)
                except OSError as error:
                    assert plan.triggered and error.errno in (code, errno.EIO), (number, code, error)
                    failures += 1
                else:
                    assert not plan.triggered, (number, plan.failures)
                    _drain(node, "out")
                    _drain(node, "in")
                    continue
            _check_clean(node)
            _session_that_writes(node)  # healed
            _check_output(node)
            _drain(node, "out")
    assert failures >= 3 * (operations - 2)
    assert node.storage.claims.counts() == {}


def test_a_disk_that_stays_full_fails_every_session_until_it_heals(node):
    node.seed("in", b"x", b"y")
    plan = FaultPlan(fail_at=1, operations={"write", "sync"}, matches="content_repository", persistent=True)
    with plan.installed():
        for _ in range(3):
            with pytest.raises(OSError) as caught:
                _session_that_writes(node)
            assert caught.value.errno == errno.ENOSPC
            _check_clean(node)
        plan.heal()
        _session_that_writes(node)
    _check_output(node)
