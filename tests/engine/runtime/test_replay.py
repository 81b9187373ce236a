"""Replaying provenance events on a real node: refusals, the new FlowFile and its REPLAY event,
the flow taking it downstream, restarts, archived content kept alive, and a failing disk."""

from __future__ import annotations

import errno
import time

import pytest

from engine.content.ranges import read_range
from engine.provenance.event import ProvenanceEventType as E
from engine.runtime.replay import ReplayFailedError, ReplayRefusedError, replay, replay_refusal
from engine.testing.faults import FaultPlan


def test_a_replay_queues_the_input_as_it_was_with_nifi_attributes_and_a_replay_event(node):
    event = node.modified()
    assert event.source_queue_id == "c1"
    claims_before = node.storage.claims.count(event.previous_content_claim.resource_claim)
    c1 = node.controller.queue("c1")
    waiting = len(c1)
    original_attributes = dict(event.previous_attributes)

    done = replay(node.controller, event, "alice")

    flowfile = done.flowfile
    assert len(c1) == waiting + 1 and c1.find(flowfile.uuid) == flowfile
    assert flowfile.uuid != event.flowfile_uuid and flowfile.content_claim == event.previous_content_claim
    assert node.content(flowfile) == b"hello"
    assert flowfile.lineage_start_date == event.lineage_start_date
    assert flowfile.entry_date == int(node.clock.time() * 1000)
    attributes = dict(flowfile.attributes)
    assert attributes.pop("flowfile.replay") == "true"
    stamp = attributes.pop("flowfile.replay.timestamp")
    assert time.strptime(stamp, "%a %b %d %H:%M:%S UTC %Y")
    assert attributes.pop("uuid") == flowfile.uuid
    original_attributes.pop("uuid")
    assert attributes == original_attributes
    assert node.storage.claims.count(event.previous_content_claim.resource_claim) == claims_before + 1

    replayed = done.event
    assert replayed.event_type is E.REPLAY and replayed.event_id > event.event_id
    assert (replayed.flowfile_uuid, replayed.parent_uuids, replayed.child_uuids) == (
        event.flowfile_uuid, (event.flowfile_uuid,), (flowfile.uuid,))
    assert (replayed.component_id, replayed.component_type, replayed.source_queue_id) == (
        "rewrite", event.component_type, "c1")
    assert replayed.details == "Replay requested by alice"
    assert replayed.attributes == dict(flowfile.attributes) and replayed.content_claim == flowfile.content_claim
    assert node.events(event_type=E.REPLAY) == [replayed]
    assert node.storage.verify().ok


def test_the_replayed_flowfile_goes_downstream_in_the_running_flow(node):
    node.controller.stop_processor("gen")
    node.run(2)
    c2 = node.controller.queue("c2")
    before = {f.uuid for f in c2.peek(100)}
    done = replay(node.controller, node.modified(), "alice")
    node.run(2)
    arrived = [f for f in c2.peek(100) if f.uuid not in before]
    assert [f.uuid for f in arrived] == [done.flowfile.uuid]
    assert node.content(arrived[0]) == b"HELLO WORLD" and arrived[0].attributes["flowfile.replay"] == "true"
    again = node.events(event_type=E.CONTENT_MODIFIED, flowfile_uuid=done.flowfile.uuid)
    assert len(again) == 1 and again[0].source_queue_id == "c1"


def test_replaying_the_output_of_an_event_without_input(node):
    """An event with no input content replays its output with the attributes it had after."""
    created = node.events(event_type=E.CREATE)[0]
    event = created._replace(event_type=E.RECEIVE, source_queue_id="c2")
    done = replay(node.controller, event, "bob")
    assert node.content(done.flowfile) == b"hello" and done.flowfile.attributes["tag"] == "t1"
    assert node.controller.queue("c2").find(done.flowfile.uuid) is not None


@pytest.mark.parametrize("case, reason", [
    ("join", "Cannot replay events that are created from multiple parents"),
    ("no source", "does not name the connection its FlowFile came from"),
    ("gone connection", "its source connection gone-queue no longer exists in the flow"),
    ("content gone", "its content is no longer available (claim default/"),
])
def test_refusals_say_why(node, case, reason):
    event = node.modified()
    if case == "join":
        event = event._replace(event_type=E.JOIN)
    elif case == "no source":
        event = node.events(event_type=E.CREATE)[0]
    elif case == "gone connection":
        event = event._replace(source_queue_id="gone-queue")
    else:
        node.storage.content.path(event.previous_content_claim.resource_claim).unlink()
    assert reason in replay_refusal(node.controller, event)
    waiting = len(node.controller.queue("c1"))
    with pytest.raises(ReplayRefusedError, match=reason.replace("(", r"\(")):
        replay(node.controller, event, "alice")
    assert len(node.controller.queue("c1")) == waiting


def test_a_replay_survives_a_restart(node):
    done = replay(node.controller, node.modified(), "alice")
    node.controller.stop_processor("rewrite")
    node.restart()
    queued = node.controller.queue("c1").find(done.flowfile.uuid)
    assert queued is not None and queued.attributes == done.flowfile.attributes
    assert node.content(queued) == b"hello"
    assert node.storage.verify().ok


def test_archived_content_comes_back_and_outlives_the_archive_age_off(drained_node):
    """The input of an event whose FlowFiles all left is archived; a replay brings it back to the
    live tree, so neither the archive's age-off nor a restart loses it while the FlowFile waits."""
    node = drained_node
    node.controller.stop_processor("rewrite")
    event = node.modified()
    resource = event.previous_content_claim.resource_claim
    content = node.storage.content
    node.archive()
    assert not content.path(resource).exists() and content.archive_path(resource).exists()
    assert node.storage.claims.count(resource) == 0

    done = replay(node.controller, event, "alice")
    assert content.path(resource).exists() and not content.archive_path(resource).exists()
    assert node.storage.claims.count(resource) == 1
    assert content.run_cleanup(now=time.time() + 30 * 24 * 3600).expired >= 1, "other archived content aged off"
    node.archive()
    node.restart()
    queued = node.controller.queue("c1").find(done.flowfile.uuid)
    assert node.content(queued) == b"hello"
    assert node.storage.verify().ok


def test_content_aged_off_from_the_archive_cannot_be_replayed(drained_node):
    node = drained_node
    event = node.modified()
    node.archive()
    node.age_off()
    with pytest.raises(ReplayRefusedError, match="its content is no longer available"):
        replay(node.controller, event, "alice")
    with pytest.raises(Exception, match="aged off or deleted: neither .* nor .*archive.* exists"):
        read_range(node.storage.content, event.previous_content_claim, 0, 10, "the input")


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EIO])
def test_a_replay_the_disk_refuses_leaves_nothing_behind(node, error):
    event = node.modified()
    resource = event.previous_content_claim.resource_claim
    counts = node.storage.claims.counts()
    c1 = node.controller.queue("c1")
    queued = c1.size()
    plan = FaultPlan(fail_at=1, errno=error, operations={"write"}, matches="flowfile_repository")
    with plan.installed(), pytest.raises(ReplayFailedError, match="nothing was replayed") as failure:
        replay(node.controller, event, "alice")
    assert plan.triggered
    assert "could not record the new FlowFile" in str(failure.value)
    assert c1.size() == queued
    assert node.storage.claims.counts() == counts and node.storage.claims.count(resource) == counts.get(resource, 0)
    assert node.events(event_type=E.REPLAY) == []
    node.controller.stop_processor("rewrite")
    node.controller.stop_processor("gen")
    node.restart()
    assert len(node.controller.queue("c1")) == queued.count, "no FlowFile of the failed replay was recovered"
    assert node.storage.verify().ok


def test_a_replay_event_can_itself_be_replayed(node):
    first = replay(node.controller, node.modified(), "alice")
    second = replay(node.controller, first.event, "bob")
    assert node.content(second.flowfile) == b"hello"
    assert second.event.parent_uuids == (first.event.flowfile_uuid,)


