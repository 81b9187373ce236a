"""A full or failing disk under swap-out and swap-in: nothing lost, nothing duplicated.

Every file operation of the workload on swap files, and every write to the FlowFile
repository's journals, is made to fail in turn (ENOSPC, EIO); the node then restarts and its
queue is drained: what sessions committed as created and not as consumed comes back once.
"""

from __future__ import annotations

import errno


from engine.queue import QueueSettings
from engine.queue.flowfile_queue import SWAP_RETRY_MS
from engine.testing.faults import FaultPlan
from tests.engine.repository.swap_helpers import Node, swap_files

SETTINGS = QueueSettings(swap_threshold=20, swap_batch_size=15, back_pressure_object_threshold=0)
JOURNALS = "flowfile_repository/journals"
SWAP = "flowfile_repository/swap"  # not "swap": the test folders are named after the tests


def workload(node: Node, plan: FaultPlan | None = None) -> tuple[list[int], list[int]]:
    """Fill and drain in rounds that swap out and in; returns (created, consumed) as committed."""
    created: list[int] = []
    consumed: list[int] = []
    for round_ in range(3):
        created += node.fill(range(round_ * 40, round_ * 40 + 40))
        consumed += node.take(30)
        node.clock.advance(SWAP_RETRY_MS / 1000)
        if plan is not None and round_ == 1:
            plan.heal()
    return created, consumed


def run(path, plan: FaultPlan) -> None:
    node = Node.open(path, chunk_records=5, settings=SETTINGS)
    with plan.installed():
        created, consumed = workload(node, plan)
    node.close()
    assert len(consumed) == len(set(consumed)) and set(consumed) <= set(created)

    node = Node.open(path, settings=SETTINGS)
    try:
        assert not node.storage.damage.entries(), "a failing disk is no damage"
        verification = node.storage.verify()
        assert verification.ok, verification.problems
        rest = node.drain()
        assert len(rest) == len(set(rest)), "a FlowFile came out twice"
        assert not set(rest) & set(consumed), "a consumed FlowFile came back"
        assert set(rest) | set(consumed) == set(created), f"lost: {sorted(set(created) - set(rest) - set(consumed))}"
        verification = node.storage.verify()
        assert verification.ok, verification.problems
        assert not swap_files(path)
    finally:
        node.close()


def operations(tmp_path, matches: str, kinds: frozenset[str]) -> int:
    counting = FaultPlan(matches=matches, operations=kinds)
    node = Node.open(tmp_path / "count", chunk_records=5, settings=SETTINGS)
    with counting.installed():
        created, consumed = workload(node)
    node.close()
    assert created == list(range(120)) and len(consumed) == 90
    return counting.count


def test_every_swap_file_operation_may_fail(tmp_path):
    kinds = frozenset({"open", "write", "sync", "rename", "unlink", "mkdir"})
    count = operations(tmp_path, SWAP, kinds)
    assert count >= 30
    for point in range(1, count + 1):
        for code in (errno.ENOSPC, errno.EIO):
            run(tmp_path / f"{point}-{code}", FaultPlan(fail_at=point, errno=code, operations=kinds, matches=SWAP))


def test_a_disk_that_stays_full_for_swap_files_loses_nothing(tmp_path):
    for point in (1, 4, 9):
        run(tmp_path / f"{point}", FaultPlan(fail_at=point, operations={"open", "write", "sync", "rename", "mkdir"},
                                             matches=SWAP, persistent=True))


def test_every_journal_write_of_the_workload_may_fail(tmp_path):
    count = operations(tmp_path, JOURNALS, frozenset({"write", "sync"}))
    for point in range(1, count + 1):
        for code, partial in ((errno.ENOSPC, False), (errno.ENOSPC, True), (errno.EIO, False)):
            run(tmp_path / f"{point}-{code}-{partial}", FaultPlan(fail_at=point, errno=code, partial=partial,
                                                                  operations={"write", "sync"}, matches=JOURNALS))
