"""The timer-driven scheduler: a bounded pool of worker threads running components' tasks when due.

Each running component has one *slot* per concurrent task (one for serial-only processors).
A slot is either waiting in a heap ordered by when it is due, or being run by a worker, so a
component never runs more tasks at once than it has slots, and the node never runs more tasks
at once than it has workers (``max_timer_driven_threads``). After a task, the component says
when its slot is due again (run schedule, bored yield, yield, administrative yield or the next
CRON fire time).

CPU-bound tasks (every component but processors that wait on other systems, see
``Processor.waits_on_io``) also need one of the node's *CPU lanes* (``cpu_bound_tasks``, 1 by
default). Python runs one thread at a time in a process: two CPU-bound tasks at once only
take turns at the interpreter lock, and each turn hands it over between threads, which on
this machine made ten threads 0.7 × as fast as one; their writes also land beside each other's
synchronous log writes, which slows file creation on the same disk threefold. One lane runs
CPU-bound work as one thread would, while tasks that wait on a network peer run on the other
threads beside it. A task keeps its lane through its session's commit, syncs included: lending
it while the commit waits on the disk was measured, and on the disk it let the next task's file
creation run beside the sync, which cost 2.5 × the CPU per FlowFile and 0.4 × the rate.

Tests drive the same logic without threads: ``run_due`` runs, in the calling thread, every slot
that is due by the clock the scheduler was given.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.runtime.connectable import Outcome

if TYPE_CHECKING:
    from engine.runtime.clock import Clock
    from engine.runtime.connectable import Connectable

__all__ = ["Scheduler"]

log = logging.getLogger(__name__)


@dataclass(eq=False)
class _Slot:
    node: Connectable
    index: int
    cpu_bound: bool = True
    cancelled: bool = False
    runs: int = field(default=0)


class Scheduler:
    """Runs the tasks of scheduled components on at most ``max_threads`` worker threads, the
    CPU-bound ones on at most ``cpu_lanes`` of them at once."""

    def __init__(self, clock: Clock, max_threads: int = 10, cpu_lanes: int = 1) -> None:
        if cpu_lanes < 1:
            raise ValueError("a scheduler needs at least one CPU lane")
        self.clock = clock
        self._max_threads = max_threads
        self._cpu_lanes = cpu_lanes
        self._cond = threading.Condition()
        self._cpu_heap: list[tuple[float, int, _Slot]] = []
        self._io_heap: list[tuple[float, int, _Slot]] = []
        #: Workers running a CPU-bound task, each holding one lane.
        self._lane_holders: set[int] = set()
        self._sequence = itertools.count()
        self._slots: dict[Connectable, list[_Slot]] = {}
        self._workers: set[int] = set()
        self._threads: list[threading.Thread] = []
        self._running = False
        self._names = itertools.count(1)

    # -- what runs ------------------------------------------------------------------------

    def add(self, node: Connectable) -> None:
        """Schedule ``node``: its concurrent tasks become due at once (or at the next CRON fire)."""
        count = 1 if getattr(node, "serial_only", False) else max(1, node.concurrent_tasks)
        cpu_bound = node.cpu_bound
        with self._cond:
            if node in self._slots:
                return
            now = self.clock.monotonic()
            due = node.first_run(now)
            slots = self._slots[node] = [_Slot(node, index, cpu_bound) for index in range(count)]
            for slot in slots:
                self._push(due, slot)
            self._cond.notify_all()

    def remove(self, node: Connectable) -> None:
        """Stop scheduling ``node``; its running tasks finish on their own."""
        with self._cond:
            for slot in self._slots.pop(node, ()):
                slot.cancelled = True
            self._cond.notify_all()

    def is_scheduled(self, node: Connectable) -> bool:
        """True while ``node`` has slots."""
        with self._cond:
            return node in self._slots

    def next_due(self) -> float | None:
        """When the earliest slot is due (monotonic seconds), or None when nothing is scheduled."""
        with self._cond:
            self._drop_cancelled()
            heads = [heap[0][0] for heap in (self._cpu_heap, self._io_heap) if heap]
            return min(heads) if heads else None

    # -- threads --------------------------------------------------------------------------

    @property
    def max_threads(self) -> int:
        """The bound on tasks running at once."""
        return self._max_threads

    @property
    def cpu_lanes(self) -> int:
        """The bound on CPU-bound tasks running at once."""
        return self._cpu_lanes

    def set_max_threads(self, count: int) -> None:
        """Change the bound; extra workers leave after their current task."""
        if count < 1:
            raise ValueError("a scheduler needs at least one thread")
        with self._cond:
            self._max_threads = count
            if self._running:
                while len(self._workers) < count:
                    self._spawn()
            self._cond.notify_all()

    def start(self) -> None:
        """Start the worker threads."""
        with self._cond:
            if self._running:
                return
            self._running = True
            while len(self._workers) < self._max_threads:
                self._spawn()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the workers; wait up to ``timeout`` seconds for running tasks to end."""
        with self._cond:
            self._running = False
            self._cond.notify_all()
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)

    def abandon(self, thread_id: int) -> None:
        """Give up a worker stuck in a terminated task: it no longer counts and is replaced."""
        with self._cond:
            self._release_lane(thread_id)
            if thread_id in self._workers:
                self._workers.discard(thread_id)
                self._threads = [t for t in self._threads if t.ident != thread_id]
                if self._running:
                    self._spawn()

    def active_workers(self) -> int:
        """Worker threads that count towards the bound."""
        with self._cond:
            return len(self._workers)

    def _spawn(self) -> None:
        # Called holding the condition: the new worker cannot look at ``_workers`` before its
        # ident is in it.
        thread = threading.Thread(target=self._work, name=f"timer-driven-{next(self._names)}", daemon=True)
        thread.start()
        self._workers.add(thread.ident)
        self._threads.append(thread)

    def _work(self) -> None:
        me = threading.get_ident()
        lanes = self._lane_holders
        while True:
            with self._cond:
                slot = self._take(me)
                if slot is None:
                    return
            due = self._execute(slot)
            with self._cond:
                if me not in self._workers:
                    self._release_lane(me)
                    return  # abandoned while the task ran
                lanes.discard(me)
                if not slot.cancelled:
                    self._push(due, slot)
                    # This worker takes the next due task itself; another one is woken only
                    # when it could run something beside it.
                    if not slot.cpu_bound or self._cpu_lanes > 1:
                        self._cond.notify()

    def _release_lane(self, thread_id: int) -> None:
        """Free the lane of a worker that leaves, and wake a worker that may take it; the lock
        is held."""
        if thread_id in self._lane_holders:
            self._lane_holders.discard(thread_id)
            self._cond.notify()

    def _push(self, due: float, slot: _Slot) -> None:
        heapq.heappush(self._cpu_heap if slot.cpu_bound else self._io_heap, (due, next(self._sequence), slot))

    def _take(self, me: int) -> _Slot | None:
        lanes = self._lane_holders
        while True:
            if not self._running or me not in self._workers:
                return None
            if len(self._workers) > self._max_threads:
                self._workers.discard(me)
                self._cond.notify()  # what this worker would have taken next
                return None
            self._drop_cancelled()
            now = self.clock.monotonic()
            heap = self._next_heap(lane_free=len(lanes) < self._cpu_lanes)
            if heap is None:
                self._cond.wait()
            elif heap[0][0] <= now:
                slot = heapq.heappop(heap)[2]
                if slot.cpu_bound:
                    lanes.add(me)
                return slot
            else:
                self._cond.wait(heap[0][0] - now)

    def _next_heap(self, *, lane_free: bool) -> list[tuple[float, int, _Slot]] | None:
        """The heap whose head runs next: the one due first, the CPU-bound one only while a lane
        is free; None when neither has anything to run."""
        cpu = self._cpu_heap if lane_free and self._cpu_heap else None
        io = self._io_heap or None
        if cpu is None or io is None:
            return cpu if cpu is not None else io
        return cpu if cpu[0][:2] < io[0][:2] else io

    def _drop_cancelled(self) -> None:
        for heap in (self._cpu_heap, self._io_heap):
            while heap and heap[0][2].cancelled:
                heapq.heappop(heap)

    def _execute(self, slot: _Slot) -> float:
        node = slot.node
        try:
            outcome = node.run_task()
        except Exception:
            log.exception("task of %s failed outside its processor", node.describe())
            outcome = Outcome.FAILED
        slot.runs += 1
        return node.next_run(outcome, self.clock.monotonic())

    # -- stepping (tests) -----------------------------------------------------------------

    def run_due(self) -> int:
        """Run every slot due now in the calling thread, each once; return how many ran."""
        with self._cond:
            self._drop_cancelled()
            now = self.clock.monotonic()
            due_now = []
            for heap in (self._cpu_heap, self._io_heap):
                while heap and heap[0][0] <= now:
                    due_now.append(heapq.heappop(heap))
            due_now = [slot for _, _, slot in sorted(due_now, key=lambda entry: entry[:2]) if not slot.cancelled]
        for slot in due_now:
            due = self._execute(slot)
            with self._cond:
                if not slot.cancelled:
                    self._push(due, slot)
        return len(due_now)
