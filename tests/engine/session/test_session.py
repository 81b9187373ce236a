import pytest

from engine.provenance.event import ProvenanceEventType as E
from engine.session import FlowFileHandlingError


def test_created_flowfile_is_committed_with_content_and_a_create_event(node):
    session = node.session(outgoing={"success": ["out"]})
    flowfile = session.create()
    flowfile = session.put_attribute(flowfile, "color", "red")
    flowfile = session.write_bytes(flowfile, b"hello")
    session.transfer(flowfile, "success")
    assert len(node.queue("out")) == 0, "nothing is visible before commit"
    session.commit()

    (queued,) = node.queue("out").peek(1)
    assert queued.uuid == flowfile.uuid and queued.attributes["color"] == "red"
    assert node.storage.content.read_bytes(queued.content_claim) == b"hello"
    assert queued.attributes["filename"] == queued.uuid and queued.attributes["path"] == "./"
    (event,) = node.events(flowfile_uuid=flowfile.uuid)
    assert event.event_type is E.CREATE and event.component_id == "proc"
    assert event.attributes["color"] == "red" and event.content_claim == queued.content_claim
    assert node.storage.verify().ok


def test_writing_content_is_copy_on_write(node):
    (original,) = node.seed("in", b"old content")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    flowfile = session.get()
    changed = session.write(flowfile, lambda out: out.write(b"new content"))
    session.transfer(changed, "success")
    session.commit()

    (queued,) = node.queue("out").peek(1)
    assert queued.content_claim != original.content_claim
    assert node.storage.content.read_bytes(original.content_claim) == b"old content"
    assert node.storage.content.read_bytes(queued.content_claim) == b"new content"
    event = node.events(flowfile_uuid=flowfile.uuid)[-1]
    assert event.event_type is E.CONTENT_MODIFIED
    assert event.previous_content_claim == original.content_claim and event.content_claim == queued.content_claim
    assert event.source_queue_id == "in"
    assert node.storage.verify().ok


def test_modify_streams_old_content_into_new(node):
    node.seed("in", b"abc" * 100_000)
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    flowfile = session.get()

    def upper(source, out):
        while chunk := source.read(4096):
            out.write(chunk.upper())

    session.transfer(session.modify(flowfile, upper), "success")
    session.commit()
    (queued,) = node.queue("out").peek(1)
    assert node.storage.content.read_bytes(queued.content_claim) == b"ABC" * 100_000


def test_rollback_puts_originals_back_and_drops_new_content(node):
    (original,) = node.seed("in", b"keep me", tag="x")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    flowfile = session.get()
    flowfile = session.put_attribute(session.write_bytes(flowfile, b"scratch"), "tag", "y")
    new_claim = flowfile.content_claim
    created = session.write_bytes(session.create(), b"also scratch")
    session.transfer(flowfile, "success")
    session.transfer(created, "success")
    session.rollback()

    assert node.queue("in").peek(5) == [original]
    assert len(node.queue("out")) == 0
    assert node.queue("in").size().unacknowledged_count == 0
    # only the original still references the (shared, appendable) resource claim
    assert new_claim.resource_claim == original.content_claim.resource_claim
    assert node.storage.claims.count(original.content_claim.resource_claim) == 1
    assert node.events(flowfile_uuid=created.uuid) == []
    assert node.storage.verify().ok


def test_rollback_with_penalty_penalizes_the_originals(node):
    node.seed("in", b"x")
    session = node.session(incoming=["in"])
    session.get()
    session.rollback(penalize=True)
    (back,) = node.queue("in").peek(1)
    assert back.penalty_expiration > 0


def test_clone_shares_content_and_records_clone(node):
    (original,) = node.seed("in", b"shared bytes")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    flowfile = session.get()
    copy = session.clone(flowfile)
    session.transfer(flowfile, "success")
    session.transfer(copy, "success")
    session.commit()
    first, second = node.queue("out").peek(2)
    assert first.content_claim == second.content_claim == original.content_claim
    assert first.uuid != second.uuid
    assert node.storage.claims.count(original.content_claim.resource_claim) >= 2
    clone_events = node.events(event_type=E.CLONE)
    assert [(e.flowfile_uuid, tuple(e.child_uuids)) for e in clone_events] == [(original.uuid, (copy.uuid,))]
    assert node.storage.verify().ok


def test_clone_of_a_range_points_into_the_parent_claim(node):
    (original,) = node.seed("in", b"line one\nline two\n")
    session = node.session(incoming=["in"], outgoing={"split": ["out"], "original": ["orig"]})
    flowfile = session.get()
    first = session.clone(flowfile, 0, 9)
    second = session.clone(flowfile, 9, 9)
    session.transfer(first, "split")
    session.transfer(second, "split")
    session.transfer(flowfile, "original")
    session.commit()
    parts = node.queue("out").peek(2)
    content = node.storage.content
    assert [content.read_bytes(p.content_claim) for p in parts] == [b"line one\n", b"line two\n"]
    assert all(p.content_claim.resource_claim == original.content_claim.resource_claim for p in parts)
    (fork,) = node.events(event_type=E.FORK)
    assert fork.flowfile_uuid == original.uuid and set(fork.child_uuids) == {first.uuid, second.uuid}
    assert node.storage.verify().ok


def test_create_with_parents_records_fork_and_join(node):
    parents = node.seed("in", b"a", b"b", kind="doc")
    session = node.session(incoming=["in"], outgoing={"merged": ["out"], "original": ["done"]})
    taken = session.get_batch(2)
    merged = session.write_bytes(session.create(taken), b"ab")
    session.transfer(merged, "merged")
    for parent in taken:
        session.transfer(parent, "original")
    session.commit()
    (queued,) = node.queue("out").peek(1)
    assert queued.attributes["kind"] == "doc" and queued.uuid != parents[0].uuid
    assert queued.lineage_start_date == min(p.lineage_start_date for p in parents)
    (join,) = node.events(event_type=E.JOIN)
    assert join.flowfile_uuid == merged.uuid and set(join.parent_uuids) == {p.uuid for p in parents}


def test_relationship_with_two_connections_clones_for_the_second(node):
    node.seed("in", b"payload")
    session = node.session(incoming=["in"], outgoing={"success": ["a", "b"]})
    flowfile = session.get()
    session.transfer(flowfile, "success")
    session.commit()
    (in_a,), (in_b,) = node.queue("a").peek(1), node.queue("b").peek(1)
    assert in_a.uuid == flowfile.uuid and in_b.uuid != flowfile.uuid
    assert in_a.content_claim == in_b.content_claim
    (clone,) = node.events(event_type=E.CLONE)
    assert clone.flowfile_uuid == flowfile.uuid and list(clone.child_uuids) == [in_b.uuid]
    assert node.storage.verify().ok


def test_auto_terminated_and_removed_flowfiles_get_drop_events(node):
    node.seed("in", b"1", b"2", **{"discard.reason": "not needed"})
    session = node.session(incoming=["in"], auto_terminated=["success"])
    first, second = session.get_batch(2)
    session.transfer(first, "success")
    session.remove(second)
    session.commit()
    drops = {e.flowfile_uuid: e.details for e in node.events(event_type=E.DROP)}
    assert drops == {first.uuid: "Auto-Terminated by success Relationship", second.uuid: "not needed"}
    assert len(node.queue("in")) == 0
    assert node.storage.flowfiles.live_flowfiles() == []
    assert node.storage.verify().ok


def test_created_then_removed_leaves_no_trace(node):
    session = node.session()
    flowfile = session.write_bytes(session.create(), b"temp")
    session.remove(flowfile)
    session.commit()
    assert node.events(flowfile_uuid=flowfile.uuid) == []
    assert node.storage.verify().ok


def test_unconnected_relationship_fails_the_commit_and_rolls_back(node):
    (original,) = node.seed("in", b"x")
    session = node.session(incoming=["in"], outgoing={"success": []})
    session.transfer(session.get(), "success")
    with pytest.raises(FlowFileHandlingError, match="neither connected nor auto-terminated"):
        session.commit()
    assert node.queue("in").peek(1) == [original]


def test_unknown_relationship_is_refused(node):
    node.seed("in", b"x")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    with pytest.raises(FlowFileHandlingError, match="no relationship 'sucess'"):
        session.transfer(session.get(), "sucess")


def test_commit_refuses_a_flowfile_left_unhandled(node):
    node.seed("in", b"x")
    session = node.session(incoming=["in"])
    session.get()
    with pytest.raises(FlowFileHandlingError, match="neither transferred nor removed"):
        session.commit()
    assert len(node.queue("in")) == 1


def test_a_stale_version_is_refused(node):
    session = node.session(outgoing={"success": ["out"]})
    flowfile = session.create()
    session.put_attribute(flowfile, "a", "1")
    with pytest.raises(FlowFileHandlingError, match="not the latest version"):
        session.transfer(flowfile, "success")


def test_attribute_change_alone_records_attributes_modified(node):
    node.seed("in", b"x", color="red")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    flowfile = session.put_attribute(session.get(), "color", "blue")
    flowfile = session.remove_attribute(flowfile, "path")
    session.transfer(flowfile, "success")
    session.commit()
    event = node.events(flowfile_uuid=flowfile.uuid)[-1]
    assert event.event_type is E.ATTRIBUTES_MODIFIED
    assert event.previous_attributes["color"] == "red"
    assert event.updated_attributes == {"color": "blue", "path": None}
    assert "path" not in event.attributes


def test_uuid_attribute_cannot_be_changed(node):
    session = node.session(outgoing={"success": ["out"]})
    flowfile = session.put_attribute(session.create(), "uuid", "forged")
    assert flowfile.attributes["uuid"] == flowfile.uuid


def test_send_is_written_at_once_and_survives_rollback(node):
    node.seed("in", b"sent bytes", stage="before")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    flowfile = session.get()
    session.provenance.send(flowfile, "http://example.invalid/upload")
    session.put_attribute(flowfile, "stage", "after")
    session.rollback()
    (send,) = node.events(event_type=E.SEND)
    assert send.transit_uri == "http://example.invalid/upload"
    assert send.attributes["stage"] == "before"


def test_send_keeps_the_attributes_it_was_reported_with(node):
    node.seed("in", b"x", stage="before")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    flowfile = session.get()
    session.provenance.send(flowfile, "sftp://host/dir", force=False)
    flowfile = session.put_attribute(flowfile, "stage", "after")
    session.provenance.route(flowfile, "success")
    session.transfer(flowfile, "success")
    session.commit()
    events = {e.event_type: e for e in node.events(flowfile_uuid=flowfile.uuid)}
    assert events[E.SEND].attributes["stage"] == "before"
    assert events[E.ROUTE].attributes["stage"] == "after"


def test_reported_receive_is_completed_with_committed_state(node):
    session = node.session(outgoing={"success": ["out"]})
    flowfile = session.create()
    session.provenance.receive(flowfile, "http://source/x", source_system_flowfile_id="abc")
    flowfile = session.put_attribute(session.write_bytes(flowfile, b"data"), "mime.type", "text/plain")
    session.transfer(flowfile, "success")
    session.commit()
    (event,) = node.events(flowfile_uuid=flowfile.uuid)
    assert event.event_type is E.RECEIVE, "no extra CREATE when a creation event was reported"
    assert event.attributes["mime.type"] == "text/plain" and event.content_claim == flowfile.content_claim
    assert event.source_system_flowfile_id == "abc"


def test_setting_alternate_identifier_records_associate(node):
    node.seed("in", b"x")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    flowfile = session.put_attribute(session.get(), "alternate.identifier", "order-17")
    session.transfer(flowfile, "success")
    session.commit()
    (associate,) = node.events(event_type=E.ASSOCIATE)
    assert associate.alternate_identifier == "order-17" and associate.flowfile_uuid == flowfile.uuid


def test_transfer_without_relationship_returns_to_the_source_queue(node):
    node.seed("in", b"x")
    session = node.session(incoming=["in"])
    flowfile = session.penalize(session.get())
    session.transfer(flowfile)
    session.commit()
    (back,) = node.queue("in").peek(1)
    assert back.uuid == flowfile.uuid and back.penalty_expiration == flowfile.penalty_expiration > 0


def test_committed_flowfiles_survive_a_restart(node, tmp_path):
    node.seed("in", b"durable", name="kept")
    node.storage.close()
    from engine.storage import NodeStorage

    again = NodeStorage(tmp_path / "node")
    recovered = again.open(background=False)
    try:
        (flowfile,) = recovered.queues["in"]
        assert flowfile.attributes["name"] == "kept"
        assert again.content.read_bytes(flowfile.content_claim) == b"durable"
        assert again.verify().ok
    finally:
        again.close()
        node.storage = again  # the fixture closes it again harmlessly


def test_rollback_callbacks_run_on_rollback_and_failed_commit_but_not_on_commit(node):
    calls = []
    node.seed("in", b"x")
    session = node.session(incoming=["in"], outgoing={"success": ["out"]})
    session.on_commit(lambda: calls.append("commit"))
    session.on_rollback(lambda: calls.append("rollback"))
    session.transfer(session.get(), "success")
    session.commit()
    assert calls == ["commit"]

    session.on_rollback(lambda: calls.append("rollback 2"))
    session.rollback()
    assert calls == ["commit", "rollback 2"]
    session.rollback()
    assert calls == ["commit", "rollback 2"], "callbacks run once, for the session's next ending only"

    failing = node.session(outgoing={"success": []})
    failing.on_commit(lambda: calls.append("never"))
    failing.on_rollback(lambda: calls.append("failed commit"))
    failing.transfer(failing.create(), "success")
    with pytest.raises(FlowFileHandlingError):
        failing.commit()
    assert calls == ["commit", "rollback 2", "failed commit"]


def test_write_all_bytes_puts_several_contents_in_one_claim(node):
    session = node.session(outgoing={"success": ["out"]})
    flowfiles = [session.create() for _ in range(3)]
    written = session.write_all_bytes([(flowfiles[0], b"alpha"), (flowfiles[1], b""), (flowfiles[2], b"gamma!")])
    for flowfile in written:
        session.transfer(flowfile, "success")
    session.commit()
    queued = node.queue("out").peek(3)
    assert [node.storage.content.read_bytes(f.content_claim) for f in queued] == [b"alpha", b"", b"gamma!"]
    (resource,) = {f.content_claim.resource_claim for f in queued}
    assert node.storage.claims.count(resource) == 3
    assert node.storage.verify().ok
