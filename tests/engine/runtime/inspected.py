"""A real node (storage on disk, real processors, a manual clock) for the inspection tests:
provenance events, their content, replay and queues.

``text_flow``: ``gen`` (GenerateFlowFile, "hello") → ``c1`` → ``rewrite`` (ReplaceText: "HELLO
WORLD") → ``c2`` → ``sink`` (LogAttribute, stopped, so ``c2`` holds what arrives). Every
content gets a resource-claim file of its own (``max_appendable_size`` 1 byte), so one content
can age off while another stays.
"""

from __future__ import annotations

import time
from pathlib import Path

from engine.config import StorageConfig
from engine.content.config import ContentConfig
from engine.flow import load_flow
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType as E
from engine.provenance.query import ProvenanceQuery
from engine.runtime import FlowController, ManualClock, RuntimeConfig
from engine.storage import NodeStorage
from engine.testing.flows import connection, flow, processor


def text_flow(*, sink_state: str = "ENABLED", gen_state: str = "RUNNING") -> dict:
    return flow(
        processors=[
            processor("gen", "GenerateFlowFile", {"Custom Text": "hello", "tag": "t1"}, schedulingPeriod="1 sec",
                      state=gen_state),
            processor("rewrite", "ReplaceText", {"Evaluation Mode": "Entire text", "Regular Expression": "hello",
                                                 "Replacement Value": "HELLO WORLD"}, auto_terminate=["failure"]),
            processor("sink", "LogAttribute", state=sink_state, auto_terminate=["success"]),
        ],
        connections=[connection("c1", "gen", "rewrite", backPressureObjectThreshold=0),
                     connection("c2", "rewrite", "sink", backPressureObjectThreshold=0)])


class Node:
    """A controller over ``directory`` running ``document``; ``restart`` closes and reopens it."""

    def __init__(self, directory: Path, document: dict, *, config: RuntimeConfig | None = None,
                 storage_config: StorageConfig | None = None) -> None:
        self.directory = directory
        self.document = document
        self.config = config or RuntimeConfig()
        self.storage_config = storage_config or StorageConfig(content_repository=ContentConfig(max_appendable_size=1))
        self.clock = ManualClock()
        self.controller: FlowController | None = None
        self._open()

    def _open(self) -> None:
        storage = NodeStorage(self.directory, self.storage_config)
        recovered = storage.open(background=False)
        self.controller = FlowController(storage, clock=self.clock, config=self.config)
        self.controller.load(load_flow(self.document), recovered)
        self.controller.start_components()

    @property
    def storage(self) -> NodeStorage:
        return self.controller.storage

    def run(self, rounds: int = 3) -> None:
        """Run what is due ``rounds`` times, a second apart."""
        for _ in range(rounds):
            self.controller.scheduler.run_due()
            self.clock.advance(1.0)

    def events(self, **criteria) -> list[ProvenanceEvent]:
        """Events matching ``criteria``, oldest first (the journals rolled over first)."""
        self.storage.provenance.rollover()
        return list(reversed(self.storage.provenance.query(ProvenanceQuery(limit=10_000, **criteria)).events))

    def modified(self) -> ProvenanceEvent:
        """The first CONTENT_MODIFIED event of ``rewrite``."""
        return self.events(event_type=E.CONTENT_MODIFIED, component_id="rewrite")[0]

    def archive(self) -> None:
        """Checkpoint: content no FlowFile holds any more moves to the archive."""
        self.storage.flowfiles.checkpoint()

    def age_off(self) -> None:
        """Run the archive cleanup a month from now: every archived content is deleted."""
        self.storage.content.run_cleanup(now=time.time() + 30 * 24 * 3600)

    def content(self, flowfile) -> bytes:
        return self.storage.content.read_bytes(flowfile.content_claim)

    def restart(self) -> None:
        self.close()
        self._open()

    def close(self) -> None:
        if self.controller is not None:
            self.controller.shutdown(timeout=2)
            self.controller.storage.close()
            self.controller = None


def drained(directory: Path) -> Node:
    """A ``text_flow`` node whose FlowFiles all left: the sink runs, ``gen`` stopped after two runs."""
    node = Node(directory, text_flow(sink_state="RUNNING"))
    node.run(2)
    node.controller.stop_processor("gen")
    node.run(2)
    return node
