"""The order of a session commit under failure: the FlowFile log first, then provenance."""

from __future__ import annotations

import pytest

from engine.provenance.event import ProvenanceEventType as E
from engine.testing.faults import FaultPlan


def test_a_commit_whose_provenance_write_fails_still_commits(node) -> None:
    plan = FaultPlan(fail_at=1, matches="provenance_repository", persistent=True)
    with plan.installed():
        node.seed("q", b"one", b"two")
        queued = node.seed("q", b"three")  # everything queued so far
        assert plan.triggered
        assert node.storage.provenance.stats().backlog_events == 3
        plan.heal()
    assert len(queued) == 3
    events = node.events()
    assert [(e.event_type, e.flowfile_uuid) for e in events] == [(E.CREATE, f.uuid) for f in queued]
    assert [e.event_id for e in events] == sorted({e.event_id for e in events})


def test_a_commit_whose_log_update_fails_registers_no_event(node) -> None:
    [flowfile] = node.seed("in", b"data")
    before = node.storage.provenance.stats().max_event_id
    session = node.session(incoming=["in"], outgoing={"success": ["out"]}, auto_terminated=["drop"])
    taken = session.get()
    session.transfer(session.put_attribute(taken, "k", "v"), "drop")
    session.transfer(session.create(), "success")
    with FaultPlan(fail_at=1, matches="flowfile_repository").installed():
        with pytest.raises(OSError):
            session.commit()
    assert node.storage.provenance.stats().max_event_id == before
    assert [e.event_type for e in node.events()] == [E.CREATE]
    assert node.queue("in").peek(1) == [flowfile]


def test_a_forced_send_survives_a_failed_log_update(node) -> None:
    node.seed("in", b"data")
    session = node.session(incoming=["in"], auto_terminated=["sent"])
    taken = session.get()
    session.provenance.send(taken, "http://example.invalid/upload")
    session.transfer(taken, "sent")
    with FaultPlan(fail_at=1, matches="flowfile_repository").installed():
        with pytest.raises(OSError):
            session.commit()
    assert [e.event_type for e in node.events()] == [E.CREATE, E.SEND]
