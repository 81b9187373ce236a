"""A node's storage under write failures, as a whole.

For every failure point of a workload of session commits (with content), swaps, checkpoints
and provenance rollovers — every file operation of the three repositories, failing once with
ENOSPC (after half a write) or EIO — right after the failure and after a restart: every
acknowledged commit is there with its content, no failed commit is, provenance holds events
for exactly the commits that succeeded, and ``verify()`` is clean.
"""

from __future__ import annotations

import errno
import hashlib
from pathlib import Path

import pytest

from engine.config import StorageConfig
from engine.provenance.query import ProvenanceQuery
from engine.queue import FlowFileQueue, QueueSettings
from engine.session import ProcessSession, SessionComponent
from engine.storage import NodeStorage
from engine.testing.faults import FaultPlan

CONFIG = {
    "content_repository": {"sections": 4, "max_appendable_size": "2 KB"},
    "provenance_repository": {"journal_count": 2},
}
QUEUE_SETTINGS = QueueSettings(swap_threshold=10, swap_batch_size=5, back_pressure_object_threshold=0)
STEPS = 14


class Workload:
    """A node's storage driven by sessions; ``model`` holds what the acknowledged commits made."""

    def __init__(self, path: Path) -> None:
        self.storage = NodeStorage(path, StorageConfig.from_mapping(CONFIG))
        recovered = self.storage.open(background=False)
        swapper = self.storage.flowfiles.swap
        self.queues = {name: FlowFileQueue(name, QUEUE_SETTINGS, swapper=swapper) for name in ("in", "out")}
        for name, queue in self.queues.items():
            queue.restore(recovered.queues.get(name, []), recovered.swap_files.get(name, []))
        self.model: dict[str, tuple[str, str]] = {}
        self.failed_uuids: set[str] = set()
        self.acknowledged_uuids: set[str] = set()
        self.actions = [
            (self.component("gen", (), {"success": "in"}), self.generate),
            (self.component("work", ("in",), {"success": "out"}), self.work),
            (self.component("drain", ("out",), {}), self.drain),
        ]

    def component(self, name: str, incoming: tuple[str, ...], outgoing: dict[str, str]) -> SessionComponent:
        return SessionComponent(name, "Campaign", incoming=[self.queues[q] for q in incoming],
                                outgoing={rel: [self.queues[q]] for rel, q in outgoing.items()},
                                auto_terminated=frozenset({"done"}))

    def run(self, steps: int = STEPS) -> None:
        for step in range(steps):
            for action in self.actions:
                self._commit(action, step)
            if step % 5 == 4:
                self._tolerate(self.storage.flowfiles.checkpoint)
            if step % 4 == 3:
                self._tolerate(self.storage.provenance.rollover)

    @staticmethod
    def _tolerate(operation) -> None:
        try:
            operation()
        except OSError:
            pass

    def _commit(self, action, step: int) -> None:
        component, work = action
        session = ProcessSession(self.storage, component)
        changes: dict[str, tuple[str, str] | None] = {}
        created: list[str] = []
        try:
            work(session, step, changes, created)
            session.commit()
        except OSError:
            session.rollback()  # as the framework does when a task fails (a no-op after a failed commit)
            self.failed_uuids.update(created)
            return
        self.acknowledged_uuids.update(created)
        for uuid, value in changes.items():
            if value is None:
                self.model.pop(uuid, None)
            else:
                self.model[uuid] = value

    def generate(self, session: ProcessSession, step: int, changes: dict, created: list) -> None:
        for index in range(3):
            data = (b"%d-%d:" % (step, index)) * (40 + 90 * index)
            flowfile = session.write_bytes(session.create(), data)
            session.transfer(flowfile, "success")
            changes[flowfile.uuid] = ("in", hashlib.sha256(data).hexdigest())
            created.append(flowfile.uuid)

    def work(self, session: ProcessSession, step: int, changes: dict, created: list) -> None:
        for position, flowfile in enumerate(session.get_batch(4)):
            if position == 0:
                data = b"modified %d " % step * 30
                flowfile = session.write_bytes(flowfile, data)
                changes[flowfile.uuid] = ("out", hashlib.sha256(data).hexdigest())
                session.transfer(flowfile, "success")
            elif position == 1:
                data = session.read_bytes(flowfile)
                child = session.clone(flowfile, 2, len(data) - 2)
                session.transfer(child, "success")
                changes[child.uuid] = ("out", hashlib.sha256(data[2:]).hexdigest())
                created.append(child.uuid)
                session.transfer(flowfile, "success")
                changes[flowfile.uuid] = ("out", hashlib.sha256(data).hexdigest())
            elif position == 2:
                session.remove(flowfile)
                changes[flowfile.uuid] = None
            else:
                session.transfer(flowfile, "success")
                changes[flowfile.uuid] = ("out", self.model[flowfile.uuid][1])

    def drain(self, session: ProcessSession, step: int, changes: dict, created: list) -> None:
        for flowfile in session.get_batch(2 + step % 3):
            session.transfer(flowfile, "done")
            changes[flowfile.uuid] = None

    def durable_state(self) -> dict[str, tuple[str, str]]:
        """What the repositories hold: every FlowFile, in memory or swapped, with its content."""
        flowfiles = self.storage.flowfiles
        found = list(flowfiles.live_flowfiles())
        for location in flowfiles.swap_locations:
            summary = flowfiles.swap.read_summary(location)
            found += [(summary.queue_id, f) for f in flowfiles.swap.read_flowfiles(location)]
        content = self.storage.content
        return {f.uuid: (queue, hashlib.sha256(content.read_bytes(f.content_claim) if f.content_claim else b"")
                         .hexdigest()) for queue, f in found}

    def check(self, where: str) -> None:
        assert self.durable_state() == self.model, where
        sizes = {name: queue.size() for name, queue in self.queues.items()}
        for name, size in sizes.items():
            assert size.count == sum(1 for queue, _ in self.model.values() if queue == name), (where, name)
            assert size.unacknowledged_count == 0, (where, name)
        verification = self.storage.verify()
        assert verification.ok, (where, verification.problems)
        self.storage.provenance.rollover()
        events = self.storage.provenance.query(ProvenanceQuery(limit=100_000)).events
        created = {uuid for event in events for uuid in (event.flowfile_uuid, *event.child_uuids)}
        assert self.acknowledged_uuids <= created, (where, "events missing for acknowledged commits")
        assert not self.failed_uuids & created, (where, "events for commits that failed")


def restart(path: Path, previous: Workload) -> Workload:
    previous.storage.close()
    again = Workload(path)
    again.model = previous.model
    again.acknowledged_uuids, again.failed_uuids = previous.acknowledged_uuids, previous.failed_uuids
    return again


def count_operations(tmp_path: Path) -> int:
    workload = Workload(tmp_path / "count")
    plan = FaultPlan()
    with plan.installed():
        workload.run()
    workload.storage.close()
    return plan.count


@pytest.mark.slow
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_every_failure_point_keeps_exactly_the_acknowledged_commits(tmp_path, code):
    total = count_operations(tmp_path)
    assert total > 100
    for point in range(1, total + 1):
        path = tmp_path / f"{code}-{point}"
        workload = Workload(path)
        plan = FaultPlan(fail_at=point, errno=code, partial=code == errno.ENOSPC)
        with plan.installed():
            workload.run()
        assert plan.triggered
        where = f"failure {point}/{total} ({errno.errorcode[code]} at {plan.failures})"
        workload.check(where + ", after the failure")
        workload.run(2)  # the node goes on
        workload.check(where + ", after more work")
        workload = restart(path, workload)
        workload.check(where + ", after a restart")
        workload.storage.close()
