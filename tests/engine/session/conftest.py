from __future__ import annotations

import pytest

from engine.config import StorageConfig
from engine.provenance.event import ProvenanceEvent
from engine.provenance.query import ProvenanceQuery
from engine.queue import FlowFileQueue
from engine.session import ProcessSession, SessionComponent
from engine.storage import NodeStorage


class Node:
    """A node's storage with a few queues, for driving sessions in tests."""

    def __init__(self, storage: NodeStorage) -> None:
        self.storage = storage
        self.queues: dict[str, FlowFileQueue] = {}

    def queue(self, name: str) -> FlowFileQueue:
        return self.queues.setdefault(name, FlowFileQueue(name))

    def component(self, name="proc", incoming=(), outgoing=None, auto_terminated=()) -> SessionComponent:
        return SessionComponent(
            name, "TestProcessor",
            incoming=[self.queue(q) for q in incoming],
            outgoing={rel: [self.queue(q) for q in queues] for rel, queues in (outgoing or {}).items()},
            auto_terminated=frozenset(auto_terminated),
        )

    def session(self, **component) -> ProcessSession:
        return ProcessSession(self.storage, self.component(**component))

    def events(self, **criteria) -> list[ProvenanceEvent]:
        """Events matching ``criteria``, oldest first (rolls the provenance journals over first)."""
        self.storage.provenance.rollover()
        result = self.storage.provenance.query(ProvenanceQuery(limit=10_000, **criteria))
        return list(reversed(result.events))

    def seed(self, queue: str, *contents: bytes, **attributes) -> list:
        """Commit FlowFiles with ``contents`` into ``queue``; return them as queued."""
        session = self.session(name="seeder", outgoing={"success": [queue]})
        for data in contents:
            flowfile = session.put_all_attributes(session.create(), attributes)
            session.transfer(session.write_bytes(flowfile, data), "success")
        session.commit()
        return self.queue(queue).peek(len(self.queue(queue)))


@pytest.fixture
def node(tmp_path):
    storage = NodeStorage(tmp_path / "node", StorageConfig())
    storage.open(background=False)
    yield Node(storage)
    storage.close()
