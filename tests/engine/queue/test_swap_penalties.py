"""Swapping meets penalties and failures: no churn, exact order, and figures that tell the truth."""

from __future__ import annotations

import random
import shutil

import pytest

from engine.queue import FlowFileAvailability as A, FlowFileQueue, QueueSettings
from engine.queue.flowfile_queue import SWAP_RETRY_MS
from engine.queue.prioritizers import sort_key_function
from engine.repository.records import RepositoryRecord
from engine.storage import NodeStorage
from engine.testing.faults import FaultPlan
from tests.engine.queue.conftest import make

SWAP = "flowfile_repository/swap"  # not "swap": the test folders are named after the tests
SETTINGS = QueueSettings(swap_threshold=20, swap_batch_size=10, back_pressure_object_threshold=0)


@pytest.fixture
def storage(tmp_path):
    storage = NodeStorage(tmp_path / "node")
    storage.open(background=False)
    yield storage
    storage.close()


def enqueue(storage, queue, flowfiles):
    storage.flowfiles.update([RepositoryRecord.create(f, queue.identifier) for f in flowfiles])
    queue.put_all(flowfiles)


def take_all(queue, max_count=7):
    out = []
    while polled := queue.poll(max_count).flowfiles:
        out += polled
        queue.acknowledge(polled)
    return out


def test_an_all_penalized_queue_neither_swaps_in_nor_out_until_the_first_penalty_ends(storage, clock):
    queue = FlowFileQueue("q", SETTINGS, swapper=storage.flowfiles.swap, clock=clock)
    until = int(clock() * 1000) + 30_000
    flowfiles = [make(clock, penalty=until + i) for i in range(100)]
    enqueue(storage, queue, flowfiles)
    size = queue.size()
    assert size.swap_files == 8 and size.active_count == 20
    counting = FaultPlan(matches=SWAP)
    with counting.installed():
        for _ in range(20):
            assert queue.availability() is A.HEAD_OF_QUEUE_PENALIZED
            assert queue.poll(10) == ([], [])
            clock.advance(1)
    assert counting.count == 0, f"swap churn: {counting.calls}"
    assert queue.size() == size
    clock.advance(10)
    assert queue.availability() is A.FLOWFILE_AVAILABLE
    assert take_all(queue) == flowfiles[:1]
    clock.advance(1)
    assert take_all(queue) == flowfiles[1:]
    assert queue.availability() is A.ACTIVE_QUEUE_EMPTY


def test_penalized_swap_files_keep_the_exact_priority_order(storage, clock):
    settings = QueueSettings(prioritizers=("PriorityAttributePrioritizer",), swap_threshold=15, swap_batch_size=6,
                             back_pressure_object_threshold=0)
    queue = FlowFileQueue("q", settings, swapper=storage.flowfiles.swap, clock=clock)
    key = sort_key_function(settings.prioritizers)
    rng = random.Random(5)
    waiting: dict[int, object] = {}
    counting = FaultPlan(matches=SWAP)
    with counting.installed():
        for step in range(400):
            if step % 40 == 0:
                now = int(clock() * 1000)
                batch = [make(clock, priority=rng.randint(0, 50),
                              penalty=now + rng.choice([0, 0, 2_000, 5_000, 20_000])) for _ in range(30)]
                enqueue(storage, queue, batch)
                waiting.update((f.id, f) for f in batch)
            now = int(clock() * 1000)
            ready = [f for f in waiting.values() if f.penalty_expiration <= now]
            expected = A.FLOWFILE_AVAILABLE if ready else A.HEAD_OF_QUEUE_PENALIZED if waiting else A.ACTIVE_QUEUE_EMPTY
            assert queue.availability() is expected
            polled = queue.poll(1).flowfiles
            assert polled == ([min(ready, key=key)] if ready else [])
            queue.acknowledge(polled)
            for flowfile in polled:
                del waiting[flowfile.id]
            clock.advance(rng.choice([0, 0.1, 0.5, 1]))
            assert queue.size().count == len(waiting)
    swap_outs = sum(1 for operation, path in counting.calls if operation == "rename" and path.endswith(".swap"))
    swap_ins = sum(1 for operation, _ in counting.calls if operation == "unlink")
    assert swap_outs >= 5 and swap_ins <= swap_outs


def test_a_swap_file_that_cannot_be_read_now_waits_and_counts_as_penalized(storage, clock):
    queue = FlowFileQueue("q", SETTINGS, swapper=storage.flowfiles.swap, clock=clock)
    flowfiles = [make(clock) for _ in range(30)]
    enqueue(storage, queue, flowfiles)
    (swapped,) = queue.swapped_files()
    path = storage.flowfiles.swap.path(swapped.location)
    kept = path.with_name("kept")
    shutil.move(path, kept)
    path.mkdir()  # reading it fails with an OSError that is no damage
    assert take_all(queue) == flowfiles[:20]
    size = queue.size()
    assert (size.count, size.swapped_count, size.swap_files) == (10, 10, 1)
    assert queue.availability() is A.HEAD_OF_QUEUE_PENALIZED and not queue.is_full()
    assert queue.poll(5) == ([], []), "a waiting swap file is not retried before its time"
    assert not storage.damage.entries()
    path.rmdir()
    shutil.move(kept, path)
    clock.advance(SWAP_RETRY_MS / 1000)
    assert queue.availability() is A.FLOWFILE_AVAILABLE
    assert take_all(queue) == flowfiles[20:]
    assert not storage.flowfiles.swap_locations and storage.verify().ok


def test_a_swap_file_cut_while_running_gives_back_its_readable_chunks_at_once(storage, clock):
    storage.flowfiles.swap.chunk_records = 4
    queue = FlowFileQueue("q", SETTINGS, swapper=storage.flowfiles.swap, clock=clock)
    flowfiles = [make(clock) for _ in range(30)]
    enqueue(storage, queue, flowfiles)
    (swapped,) = queue.swapped_files()
    path = storage.flowfiles.swap.path(swapped.location)
    path.write_bytes(path.read_bytes()[:-10])  # the last chunk (2 FlowFiles) is cut
    assert take_all(queue, 25) == flowfiles[:28]
    assert queue.size().count == 0 and queue.availability() is A.ACTIVE_QUEUE_EMPTY
    (report,) = storage.damage.entries()
    assert report.path == str(path) and "2 FlowFile(s) of connection q lost, 8 swapped back in" in report.effect
    assert not path.exists() and "quarantine" in report.effect
    assert not storage.flowfiles.swap_locations
