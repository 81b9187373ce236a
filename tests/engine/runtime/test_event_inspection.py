"""Provenance events as a user reaches them on a real node: scope, the full event, its content as
it was at the event (later changes, age-off and damage), and lineage through a split and a merge."""

from __future__ import annotations

import json

import pytest

from engine.content.reader import ContentChecksumError, ContentNotFoundError
from engine.provenance.event import ProvenanceEventType as E
from engine.provenance.event_data import event_summary
from engine.runtime.event_inspection import (
    UnknownEventError, describe_event, event_content, event_lineage, find_event,
)
from engine.testing.flows import connection, flow, processor
from tests.engine.runtime.inspected import Node

ALL = {"gen", "rewrite", "sink", "split", "merge"}


def test_an_event_outside_the_scope_is_answered_as_an_unknown_one(node):
    event = node.modified()
    provenance = node.storage.provenance
    assert find_event(provenance, event.event_id, {"rewrite"}) == event
    with pytest.raises(UnknownEventError) as outside:
        find_event(provenance, event.event_id, {"gen", "sink"})
    with pytest.raises(UnknownEventError) as unknown:
        find_event(provenance, 999_999, {"rewrite"})
    assert str(outside.value) == str(unknown.value).replace("999999", str(event.event_id))


def test_the_full_event_has_every_field_and_what_can_be_done_with_it(node):
    event = node.modified()
    data = describe_event(node.controller, event)
    json.dumps(data)
    assert data["id"] == event.event_id and data["type"] == "CONTENT_MODIFIED"
    assert data["component_id"] == "rewrite" and data["source_queue_id"] == "c1"
    assert data["file_size"] == 11 and data["previous_file_size"] == 5
    assert data["input_claim"]["length"] == 5 and data["output_claim"]["length"] == 11
    assert set(data["input_claim"]) == {"container", "section", "identifier", "offset", "length"}
    assert data["input_content_available"] and data["output_content_available"]
    assert data["content_equal"] is False
    assert data["replay_available"] and data["replay_explanation"] is None
    names = {a["name"]: a for a in data["attributes"]}
    assert names["tag"] == {"name": "tag", "value": "t1", "previous_value": "t1"}
    assert data["previous_attributes"]["tag"] == "t1"
    assert set(event_summary(event)) <= set(data)
    assert "attributes" not in event_summary(event) and "input_claim" not in event_summary(event)

    created = describe_event(node.controller, node.events(event_type=E.CREATE)[0])
    assert created["input_claim"] is None and not created["input_content_available"]
    assert not created["replay_available"] and "does not name the connection" in created["replay_explanation"]


def test_content_later_modified_still_shows_the_old_version_at_the_old_event(node):
    event = node.modified()
    assert event_content(node.controller, event, "input", 0, 1 << 20) == (5, b"hello")
    assert event_content(node.controller, event, "output", 0, 1 << 20) == (11, b"HELLO WORLD")
    assert event_content(node.controller, event, "output", 6, 3) == (11, b"WOR")
    created = node.events(event_type=E.CREATE, flowfile_uuid=event.flowfile_uuid)[0]
    assert event_content(node.controller, created, "output", 0, 100) == (5, b"hello")
    with pytest.raises(LookupError, match=f"provenance event {created.event_id} has no input content"):
        event_content(node.controller, created, "input", 0, 100)
    with pytest.raises(ValueError, match="offset 12 is past the end"):
        event_content(node.controller, event, "output", 12, 1)


def test_content_that_aged_off_is_no_longer_available_and_says_why(drained_node):
    node = drained_node
    event = node.modified()
    node.archive()
    assert event_content(node.controller, event, "input", 0, 10) == (5, b"hello"), "read from the archive"
    node.age_off()
    data = describe_event(node.controller, event)
    assert not data["input_content_available"] and not data["output_content_available"]
    assert "content is no longer available" in data["replay_explanation"]
    claim = event.previous_content_claim
    with pytest.raises(ContentNotFoundError) as gone:
        event_content(node.controller, event, "input", 0, 10)
    message = str(gone.value)
    assert message.startswith(f"content no longer available: the input content of provenance event "
                              f"{event.event_id} (claim {claim.resource_claim}, offset {claim.offset}, 5 bytes)")
    assert str(node.storage.content.path(claim.resource_claim)) in message
    assert str(node.storage.content.archive_path(claim.resource_claim)) in message


def test_damaged_content_names_the_file_and_the_offset(node):
    event = node.modified()
    claim = event.content_claim
    path = node.storage.content.path(claim.resource_claim)
    data = bytearray(path.read_bytes())
    data[claim.offset] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ContentChecksumError) as damaged:
        event_content(node.controller, event, "output", 0, 1 << 20)
    message = str(damaged.value)
    assert message.startswith(f"content damaged: the output content of provenance event {event.event_id}")
    assert f"{path} at offset {claim.offset}" in message and "checksum mismatch" in message
    assert event_content(node.controller, event, "output", 0, 4)[1] == b"\xb7ELL", "a part is not checked"


def split_merge_flow() -> dict:
    return flow(
        processors=[
            processor("gen", "GenerateFlowFile", {"Custom Text": "a\nb\nc"}, schedulingPeriod="1 hour"),
            processor("split", "SplitText", {"Line Split Count": "1"}, auto_terminate=["original", "failure"]),
            processor("merge", "MergeContent", {"Merge Strategy": "Defragment"},
                      auto_terminate=["original", "failure"]),
            processor("sink", "LogAttribute", state="ENABLED", auto_terminate=["success"]),
        ],
        connections=[connection("c1", "gen", "split"), connection("c2", "split", "merge", ["splits"]),
                     connection("c3", "merge", "sink", ["merged"])])


@pytest.fixture
def merged(tmp_path):
    running = Node(tmp_path / "split", split_merge_flow())
    running.run(4)
    fork = running.events(event_type=E.FORK)
    join = running.events(event_type=E.JOIN)
    assert len(fork) == 1 and len(join) == 1, "one FlowFile split in three, merged again"
    yield running, fork[0], join[0]
    running.close()


def test_lineage_of_a_split_and_merged_flowfile_is_the_whole_graph(merged):
    node, fork, join = merged
    parent, splits, child = fork.flowfile_uuid, set(fork.child_uuids), join.flowfile_uuid
    assert set(join.parent_uuids) == splits and len(splits) == 3
    provenance = node.storage.provenance
    for root in (parent, child, next(iter(splits))):
        events, truncated = event_lineage(provenance, ALL, uuid=root)
        assert not truncated
        ids = {e.event_id for e in events}
        assert {fork.event_id, join.event_id} <= ids
        uuids = {u for e in events for u in (e.flowfile_uuid, *e.parent_uuids, *e.child_uuids)}
        assert {parent, child} <= uuids
    events, _ = event_lineage(provenance, ALL, uuid=child)
    assert splits <= {e.flowfile_uuid for e in events}, "every split's own events are in the merged one's lineage"
    from_event, _ = event_lineage(provenance, ALL, event=join)
    assert from_event == events


def test_expanding_parents_and_children(merged):
    node, fork, join = merged
    provenance = node.storage.provenance
    parents, truncated = event_lineage(provenance, ALL, event=join, direction="parents")
    assert not truncated
    assert {e.flowfile_uuid for e in parents} >= set(join.parent_uuids)
    assert all(e.event_time <= join.event_time for e in parents) and fork in parents
    children, _ = event_lineage(provenance, ALL, event=fork, direction="children")
    assert join in children and all(e.event_time >= fork.event_time for e in children)
    assert {e.flowfile_uuid for e in children} >= set(fork.child_uuids)
    created = node.events(event_type=E.CREATE)[0]
    with pytest.raises(ValueError, match="is a CREATE event, so its children cannot be expanded"):
        event_lineage(provenance, ALL, event=created, direction="children")
    capped, truncated = event_lineage(provenance, ALL, event=fork, direction="children", max_events=2)
    assert truncated and len(capped) == 2


def test_lineage_leaves_out_events_outside_the_scope_and_does_not_go_through_them(merged):
    node, fork, join = merged
    events, _ = event_lineage(node.storage.provenance, {"gen", "merge"}, uuid=join.flowfile_uuid)
    assert {e.component_id for e in events} <= {"gen", "merge"}
    assert fork not in events and join in events
    assert not any(e.component_id == "gen" for e in events), "the parent is reached only through the FORK of split"
