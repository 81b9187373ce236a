"""Damaged content never blocks a connection: a FlowFile whose claim file is deleted, cut short or
has a flipped byte is taken out (quarantined or dropped) and the others keep flowing."""

from __future__ import annotations

import gzip
import os

import pytest

from engine.damage import DAMAGED_QUEUE_ID
from engine.provenance.event import ProvenanceEventType as E
from engine.runtime import Outcome, RuntimeConfig
from engine.storage import NodeStorage
from engine.testing.runner import INPUT_ID, ProcessorTestRunner

BIG = 60 << 10  # past max_appendable_size: each such content gets a resource claim of its own


def _damage_three(runner: ProcessorTestRunner) -> list:
    """Enqueue three big FlowFiles, each alone in its file, and damage the files; then 50 good ones."""
    bad = [runner.enqueue(os.urandom(BIG), filename=f"bad-{i}") for i in range(3)]
    good = [runner.enqueue(b"good content %d " % i * 20, filename=f"good-{i}") for i in range(50)]
    paths = [runner.storage.content.path(f.content_claim.resource_claim) for f in bad]
    assert len(set(paths)) == 3 and not {runner.storage.content.path(g.content_claim.resource_claim) for g in good} & set(paths)
    os.unlink(paths[0])
    os.truncate(paths[1], BIG // 2)
    data = bytearray(paths[2].read_bytes())
    data[BIG // 3] ^= 0x40
    paths[2].write_bytes(data)
    return bad


def _run_until_input_is_empty(runner: ProcessorTestRunner) -> list[Outcome]:
    outcomes = []
    for _ in range(200):
        if not runner.input_flowfiles():
            break
        outcomes += runner.run(stop=False)
        assert runner.node.yield_expiration == 0.0, "the processor was administratively yielded"
    runner.stop()
    return outcomes


@pytest.mark.parametrize("processor, properties, relationship", [
    ("CompressContent", {"Mode": "compress", "Compression Format": "gzip"}, "success"),  # reads a stream
    ("ReplaceText", {"Evaluation Mode": "Entire text", "Regular Expression": "zzz",
                     "Replacement Value": "y"}, "success"),  # reads whole contents
])
def test_damaged_flowfiles_are_quarantined_and_the_others_flow(tmp_path, processor, properties, relationship):
    with ProcessorTestRunner(processor, tmp_path, properties) as runner:
        bad = _damage_three(runner)
        outcomes = _run_until_input_is_empty(runner)
        assert Outcome.FAILED not in outcomes
        out = runner.output(relationship)
        assert len(out) == 50
        if processor == "CompressContent":
            assert sorted(gzip.decompress(runner.content(f)) for f in out) == sorted(
                b"good content %d " % i * 20 for i in range(50))
        assert not runner.output("failure")
        quarantined = runner.controller.list_queue(DAMAGED_QUEUE_ID)
        assert sorted(f.uuid for f in quarantined) == sorted(f.uuid for f in bad)
        assert all(f.penalty_expiration == 0 for f in quarantined), "not penalized"
        assert runner.controller.status().node.orphaned_queues == {DAMAGED_QUEUE_ID: 3}
        damages = runner.storage.damage.entries()
        assert len(damages) == 3
        found = sorted(d.found for d in damages)
        assert found[0].startswith("checksum mismatch")
        assert "cut short" in found[1] and "missing" in found[2]
        for damage, flowfile in zip(sorted(damages, key=lambda d: d.effect), sorted(bad, key=lambda f: f.uuid)):
            assert damage.kind == "content claim"
            assert damage.offset == flowfile.content_claim.offset
            assert flowfile.uuid in damage.effect and f"connection {INPUT_ID}" in damage.effect
            assert DAMAGED_QUEUE_ID in damage.effect and repr(flowfile.attributes["filename"]) in damage.effect
        assert any("content claim" in message for message in
                   [b["message"] for b in (x.as_dict() for x in runner.controller.bulletins.recent())])
        assert runner.storage.verify().ok, runner.storage.verify().problems
        directory = runner.storage.data_dir
    # After a restart the quarantined FlowFiles are an orphaned queue of the controller.
    storage = NodeStorage(directory)
    recovered = storage.open(background=False)
    try:
        assert sorted(f.uuid for f in recovered.queues[DAMAGED_QUEUE_ID]) == sorted(f.uuid for f in bad)
        assert storage.verify().ok
    finally:
        storage.close()


def test_damaged_flowfiles_can_be_dropped_like_nifi_does(tmp_path):
    with ProcessorTestRunner("ReplaceText", tmp_path, {"Evaluation Mode": "Entire text", "Regular Expression": "q",
                                                       "Replacement Value": "y"},
                             config=RuntimeConfig(damaged_content="drop")) as runner:
        bad = _damage_three(runner)
        outcomes = _run_until_input_is_empty(runner)
        assert Outcome.FAILED not in outcomes
        assert len(runner.output("success")) == 50
        assert DAMAGED_QUEUE_ID not in runner.controller.orphans
        drops = runner.events(event_type=E.DROP)
        assert sorted(e.flowfile_uuid for e in drops) == sorted(f.uuid for f in bad)
        assert all(e.details.startswith("Content not found: ") and "content of" in e.details for e in drops)
        assert len(runner.storage.damage.entries()) == 3
        assert all("was dropped" in d.effect for d in runner.storage.damage.entries())
        assert runner.storage.verify().ok, runner.storage.verify().problems


def test_an_operator_can_empty_the_damaged_queue(tmp_path):
    with ProcessorTestRunner("ReplaceText", tmp_path, {"Evaluation Mode": "Entire text", "Regular Expression": "q",
                                                       "Replacement Value": "y"}) as runner:
        _damage_three(runner)
        _run_until_input_is_empty(runner)
        assert runner.controller.drop_queue(DAMAGED_QUEUE_ID).count == 3
        assert runner.controller.list_queue(DAMAGED_QUEUE_ID) == []
        assert runner.storage.verify().ok


def test_damaged_content_setting_is_checked():
    assert RuntimeConfig.from_mapping({"damaged-content": "DROP"}).damaged_content == "drop"
    with pytest.raises(ValueError, match="damaged_content"):
        RuntimeConfig.from_mapping({"damaged-content": "ignore"})
