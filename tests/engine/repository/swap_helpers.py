"""A node's storage with one swapping queue, filled and drained through real sessions."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import msgpack

from engine.config import StorageConfig
from engine.queue import FlowFileAvailability, FlowFileQueue, QueueSettings
from engine.repository.swap import CHUNK_MARKER
from engine.session import ProcessSession, SessionComponent
from engine.storage import NodeStorage
from tests.engine.queue.conftest import FakeClock as Clock

SETTINGS = QueueSettings(swap_threshold=40, swap_batch_size=60, back_pressure_object_threshold=0)


@dataclass
class Node:
    """Open storage and the queue ``q`` restored from it."""

    storage: NodeStorage
    queue: FlowFileQueue
    clock: Clock = field(default_factory=Clock)

    @classmethod
    def open(cls, path: Path, clock: Clock | None = None, chunk_records: int | None = None,
             settings: QueueSettings = SETTINGS) -> Node:
        clock = clock or Clock()
        storage = NodeStorage(path, StorageConfig())
        storage.open(background=False)
        if chunk_records is not None:
            storage.flowfiles.swap.chunk_records = chunk_records
        queue = FlowFileQueue("q", settings, swapper=storage.flowfiles.swap, clock=clock)
        recovered = storage.recovered
        queue.restore(recovered.queues.get("q", []), recovered.swap_files.get("q", []))
        return cls(storage, queue, clock)

    def fill(self, indexes: range) -> list[int]:
        """Create one FlowFile per index in one session; returns the indexes it committed."""
        component = SessionComponent("gen", "Generator", outgoing={"success": [self.queue]}, clock=self.clock)
        session = ProcessSession(self.storage, component)
        for index in indexes:
            flowfile = session.create()
            flowfile = session.put_all_attributes(flowfile, {"index": str(index), "filename": f"f{index}"})
            session.transfer(session.write_bytes(flowfile, content(index)), "success")
        try:
            session.commit()
        except OSError:
            return []
        return list(indexes)

    def take(self, count: int) -> list[int]:
        """One session that takes up to ``count`` FlowFiles and ends them; the indexes it committed."""
        component = SessionComponent("sink", "Sink", incoming=[self.queue], auto_terminated=frozenset({"done"}),
                                     clock=self.clock)
        session = ProcessSession(self.storage, component)
        try:
            flowfiles = session.get_batch(count)
            for flowfile in flowfiles:
                check(flowfile, session.read_bytes(flowfile))
                session.transfer(flowfile, "done")
            session.commit()
        except OSError:
            return []
        return [int(f.attributes["index"]) for f in flowfiles]

    def drain(self) -> list[int]:
        """Take everything the queue hands out; the queue must then be empty."""
        seen: list[int] = []
        while batch := self.take(25):
            seen += batch
        queue = self.queue
        assert queue.availability() is FlowFileAvailability.ACTIVE_QUEUE_EMPTY, "a FlowFile is stuck in the queue"
        size = queue.size()
        assert (size.count, size.bytes, size.swap_files, size.unacknowledged_count) == (0, 0, 0, 0), size
        return seen

    def close(self) -> None:
        self.storage.close()


def content(index: int) -> bytes:
    return b"content of FlowFile %d" % index


def check(flowfile, data: bytes) -> None:
    """A FlowFile came back exactly: its attributes and its content."""
    index = int(flowfile.attributes["index"])
    assert flowfile.attributes["filename"] == f"f{index}"
    assert data == content(index)


def swap_files(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "flowfile_repository" / "swap").glob("*.swap"))


@dataclass
class Layout:
    """Where the frames of a format-2 swap file lie, and which FlowFiles each chunk holds."""

    size: int
    summary_end: int
    chunks: list[tuple[int, int, list[int]]]  # (start, end, indexes)

    @property
    def frame_starts(self) -> list[int]:
        return [0, 8] + [start for start, _, _ in self.chunks]

    def frame_start(self, offset: int) -> int:
        """The start of the frame holding byte ``offset``."""
        return max(start for start in self.frame_starts if start <= offset)

    def indexes(self) -> set[int]:
        return {index for _, _, indexes in self.chunks for index in indexes}

    def chunk_indexes(self, offset: int) -> set[int]:
        """The FlowFiles of the chunk holding byte ``offset`` (none for the header and summary)."""
        return {i for start, end, indexes in self.chunks if start <= offset < end for i in indexes}

    def indexes_from(self, offset: int) -> set[int]:
        """The FlowFiles of every chunk that does not end before ``offset``."""
        return {i for _, end, indexes in self.chunks if end > offset for i in indexes}


def layout(path: Path) -> Layout:
    """Read the layout the module docstring of ``engine.repository.swap`` documents."""
    data = path.read_bytes()
    assert data[:8] == b"FSSWAP2\n"
    (length,) = struct.unpack_from(">I", data, 8)
    pos = summary_end = 16 + length
    chunks = []
    while pos < len(data):
        marker, number, count, length, _ = struct.unpack_from(">4sIIII", data, pos)
        assert marker == CHUNK_MARKER and number == len(chunks)
        end = pos + 20 + length
        wires = msgpack.unpackb(data[pos + 20:end])
        assert len(wires) == count
        chunks.append((pos, end, [int(wire[1][2]["index"]) for wire in wires]))
        pos = end
    return Layout(len(data), summary_end, chunks)
