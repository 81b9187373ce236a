"""Swapping through the real FlowFile repository: bounded memory, exact order, nothing lost."""

from __future__ import annotations

import random

import pytest

from engine.config import StorageConfig
from engine.queue import FlowFileQueue, QueueSettings
from engine.session import ProcessSession, SessionComponent
from engine.storage import NodeStorage

SETTINGS = QueueSettings(prioritizers=("PriorityAttributePrioritizer",), swap_threshold=100, swap_batch_size=40,
                         back_pressure_object_threshold=0)


def open_storage(path) -> NodeStorage:
    storage = NodeStorage(path, StorageConfig())
    storage.open(background=False)
    return storage


def fill(storage: NodeStorage, queue: FlowFileQueue, priorities: list[int], batch: int = 50) -> None:
    component = SessionComponent("gen", "Generator", outgoing={"success": [queue]})
    for start in range(0, len(priorities), batch):
        session = ProcessSession(storage, component)
        for priority in priorities[start:start + batch]:
            flowfile = session.create()
            flowfile = session.put_attribute(flowfile, "priority", str(priority))
            session.transfer(session.write_bytes(flowfile, b"p%d" % priority), "success")
        session.commit()


def drain(storage: NodeStorage, queue: FlowFileQueue) -> list[int]:
    component = SessionComponent("sink", "Sink", incoming=[queue], auto_terminated=frozenset({"done"}))
    seen = []
    while True:
        session = ProcessSession(storage, component)
        flowfiles = session.get_batch(30)
        if not flowfiles:
            return seen
        for flowfile in flowfiles:
            assert session.read_bytes(flowfile) == b"p" + flowfile.attributes["priority"].encode()
            seen.append(int(flowfile.attributes["priority"]))
            session.transfer(flowfile, "done")
        session.commit()


@pytest.fixture
def priorities():
    return [random.Random(7).randint(0, 500) for _ in range(1000)]


def test_memory_stays_under_the_threshold_and_order_is_exact(tmp_path, priorities):
    storage = open_storage(tmp_path / "node")
    queue = FlowFileQueue("q", SETTINGS, swapper=storage.flowfiles.swap)
    fill(storage, queue, priorities)
    size = queue.size()
    assert size.count == 1000
    assert size.active_count <= SETTINGS.swap_threshold
    assert size.swapped_count == 1000 - size.active_count and size.swap_files >= 20
    assert len(storage.flowfiles.wal.records) == size.active_count, "swapped FlowFiles leave the log's memory"
    assert drain(storage, queue) == sorted(priorities)
    assert queue.size().count == 0 and not storage.flowfiles.swap_locations
    assert not list((tmp_path / "node" / "flowfile_repository" / "swap").glob("*.swap"))
    storage.close()


def test_swapped_flowfiles_survive_a_restart_in_order(tmp_path, priorities):
    storage = open_storage(tmp_path / "node")
    queue = FlowFileQueue("q", SETTINGS, swapper=storage.flowfiles.swap)
    fill(storage, queue, priorities)
    first = drain_some(storage, queue, 100)
    storage.close()

    storage = open_storage(tmp_path / "node")
    recovered = storage.recovered
    assert recovered.flowfile_count == 900
    queue = FlowFileQueue("q", SETTINGS, swapper=storage.flowfiles.swap)
    queue.restore(recovered.queues.get("q", []), recovered.swap_files.get("q", []))
    assert queue.size().count == 900
    assert storage.verify().ok
    assert first + drain(storage, queue) == sorted(priorities)
    storage.close()


def test_restore_with_other_prioritizers_reads_the_swap_files(tmp_path, priorities):
    storage = open_storage(tmp_path / "node")
    queue = FlowFileQueue("q", SETTINGS, swapper=storage.flowfiles.swap)
    fill(storage, queue, priorities)
    storage.close()
    storage = open_storage(tmp_path / "node")
    newest = QueueSettings(prioritizers=("NewestFlowFileFirstPrioritizer",), swap_threshold=100, swap_batch_size=40)
    queue = FlowFileQueue("q", newest, swapper=storage.flowfiles.swap)
    queue.restore(storage.recovered.queues.get("q", []), storage.recovered.swap_files.get("q", []))
    component = SessionComponent("sink", "Sink", incoming=[queue], auto_terminated=frozenset({"done"}))
    lineage = []
    while True:
        session = ProcessSession(storage, component)
        batch = session.get_batch(50)
        if not batch:
            break
        lineage += [(f.lineage_start_date, f.lineage_start_index) for f in batch]
        for flowfile in batch:
            session.transfer(flowfile, "done")
        session.commit()
    assert len(lineage) == 1000
    assert lineage == sorted(lineage, reverse=True)
    storage.close()


def drain_some(storage: NodeStorage, queue: FlowFileQueue, count: int) -> list[int]:
    component = SessionComponent("sink", "Sink", incoming=[queue], auto_terminated=frozenset({"done"}))
    session = ProcessSession(storage, component)
    flowfiles = session.get_batch(count)
    for flowfile in flowfiles:
        session.transfer(flowfile, "done")
    session.commit()
    return [int(f.attributes["priority"]) for f in flowfiles]
