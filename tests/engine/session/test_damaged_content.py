"""A session that reads damaged content takes that FlowFile out and rolls the rest back unpenalized."""

from __future__ import annotations

import os

import pytest

from engine.content.reader import ContentNotFoundError
from engine.damage import DAMAGED_QUEUE_ID
from engine.provenance.event import ProvenanceEventType as E
from engine.queue import FlowFileQueue
from engine.session import DamagedContentError, DamagedContentPolicy


def _flip(path, offset):
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x10
    path.write_bytes(data)


def test_read_bytes_of_a_flipped_content_drops_it_without_a_policy(node):
    flowfiles = node.seed("in", b"first", b"second", b"third", filename="f")
    damaged = flowfiles[1]
    _flip(node.storage.content.path(damaged.content_claim.resource_claim), damaged.content_claim.offset)
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    taken = session.get_batch(3)
    assert session.read_bytes(taken[0]) == b"first"
    with pytest.raises(DamagedContentError) as caught:
        session.read_bytes(taken[1])
    error = caught.value
    assert isinstance(error, ContentNotFoundError) and error.disposition == "dropped"
    assert error.flowfile.uuid == damaged.uuid and error.claim == damaged.content_claim
    session.commit()  # the rest was rolled back: nothing left to commit
    queue = node.queue("in")
    assert sorted(f.uuid for f in queue.peek(10)) == sorted([flowfiles[0].uuid, flowfiles[2].uuid])
    assert all(f.penalty_expiration == 0 for f in queue.peek(10)), "not penalized"
    assert queue.size().unacknowledged_count == 0
    (drop,) = node.events(event_type=E.DROP)
    assert drop.flowfile_uuid == damaged.uuid and "checksum" in drop.details
    (damage,) = node.storage.damage.entries()
    assert damage.offset == damaged.content_claim.offset and "was dropped" in damage.effect
    assert session.damaged_content == [damage]
    assert node.storage.verify().ok


def test_a_missing_file_read_as_a_stream_is_quarantined(node):
    damaged_queue = FlowFileQueue(DAMAGED_QUEUE_ID)
    (flowfile,) = node.seed("in", b"x" * 1000)
    os.unlink(node.storage.content.path(flowfile.content_claim.resource_claim))
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    session.component.damaged_content = DamagedContentPolicy("quarantine", damaged_queue)
    taken = session.get()
    with pytest.raises(DamagedContentError, match="is missing|not found") as caught:
        session.read(taken)
    assert caught.value.disposition == "quarantined"
    assert [f.uuid for f in damaged_queue.peek(5)] == [flowfile.uuid]
    assert len(node.queue("in")) == 0 and node.queue("in").size().unacknowledged_count == 0
    verification = node.storage.verify()
    assert verification.ok, verification.problems
    assert verification.references[flowfile.content_claim.resource_claim] == 1, "the claim is kept for the operator"


def test_damage_found_at_the_end_of_a_stream_inside_modify(node):
    (flowfile,) = node.seed("in", bytes(range(256)) * 10)
    _flip(node.storage.content.path(flowfile.content_claim.resource_claim), flowfile.content_claim.offset + 2559)
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    taken = session.get()

    def copy(source, out):
        while chunk := source.read(100):
            out.write(chunk)

    with pytest.raises(DamagedContentError):
        session.modify(taken, copy)
    assert node.storage.claims.counts() == {}, "the copy's claim was released, the dropped one's too"
    assert len(node.storage.damage.entries()) == 1


def test_damaged_content_written_in_the_session_rolls_back_and_keeps_the_flowfile(node):
    (flowfile,) = node.seed("in", b"fine")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    taken = session.write_bytes(session.get(), b"new content")
    _flip(node.storage.content.path(taken.content_claim.resource_claim), taken.content_claim.offset)
    with pytest.raises(DamagedContentError) as caught:
        session.read_bytes(taken)
    assert caught.value.disposition == "rolled back"
    assert [f.uuid for f in node.queue("in").peek(5)] == [flowfile.uuid]
    assert node.storage.verify().ok
