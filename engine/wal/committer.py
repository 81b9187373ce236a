"""Group commit: concurrent committers share one write and one sync, and each learns its fate.

A committer queues its :class:`Commit` and either becomes the *leader* (nobody is writing) or
sleeps on a gate of its own. The leader takes everything queued, hands it to the log's
``write_batch`` — which writes it, syncs it and applies it, or fails every commit of the batch
— and wakes exactly the committers that batch settled; it goes on for a few rounds while more
queue up, then hands the lead to the oldest waiting committer. Each committer sleeps on its own
lock, so a sync wakes only the threads it finished and none of them fights for a shared lock on
the way out: in a Python process, thread hand-overs, not the disk, bound commits from many
threads.

``pause`` waits for the running batch to end and keeps new ones from starting (checkpoints and
close use it); ``resume`` lets them go on. ``fail_queued`` settles every waiting commit with an
error (the log is closing).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

__all__ = ["Commit", "GroupCommitter"]

_LEADER_ROUNDS = 8


class Commit:
    """One update waiting to be written: its records, their encoded payload, and its outcome."""

    __slots__ = ("records", "payload", "force", "txn_id", "error", "done", "_gate")

    def __init__(self, records: list[Any], payload: bytes, force: bool) -> None:
        self.records = records
        self.payload = payload
        self.force = force
        self.txn_id = -1
        self.error: BaseException | None = None
        self.done = False
        self._gate: threading.Lock | None = None

    def settle(self, txn_id: int = -1, error: BaseException | None = None) -> None:
        """Record the outcome (called by ``write_batch`` for every commit of its batch)."""
        self.txn_id = txn_id
        self.error = error
        self.done = True


class GroupCommitter:
    """Runs ``write_batch`` over queued commits, one batch at a time (see the module docstring).

    ``write_batch(commits)`` must settle every commit it is given and must not raise.
    ``max_batch`` caps how many commits one batch takes (1 gives every commit its own write).
    """

    def __init__(self, write_batch: Callable[[list[Commit]], None], max_batch: int | None = None) -> None:
        self._write_batch = write_batch
        self._max_batch = max_batch
        self._lock = threading.Lock()  # taken directly on the hot path: a Condition's ``with`` is slower
        self._cond = threading.Condition(self._lock)
        self._queue: list[Commit] = []
        self._busy = False
        self._pausing = 0

    def submit(self, commit: Commit) -> None:
        """Queue ``commit`` and return once it is settled."""
        with self._lock:
            if not self._busy and not self._pausing:
                # Nobody writes: lead at once, with this commit as the first batch.
                self._busy = True
                batch = [commit]
            else:
                batch = None
                self._queue.append(commit)
                gate = commit._gate = threading.Lock()
                gate.acquire()
        if batch is None:
            gate.acquire()  # released once settled, or to hand us the lead
            if commit.done:
                return
        self._lead(commit, batch)

    def _lead(self, own: Commit, batch: list[Commit] | None) -> None:
        rounds = 0
        while True:
            if batch is not None:
                self._write_batch(batch)
                for commit in batch:
                    if commit is not own and commit._gate is not None:
                        commit._gate.release()
                rounds += 1
            with self._lock:
                if self._pausing and not own.done:
                    # Wait for ``resume`` like any queued commit; it hands the lead back.
                    gate = own._gate = threading.Lock()
                    gate.acquire()
                    self._busy = False
                    self._cond.notify_all()
                else:
                    gate = None
                    if self._pausing or not self._queue or (own.done and rounds >= _LEADER_ROUNDS):
                        self._hand_over()
                        return
                    size = len(self._queue) if self._max_batch is None else min(self._max_batch, len(self._queue))
                    batch = self._queue[:size]
                    del self._queue[:size]
            if gate is not None:
                gate.acquire()
                batch = None
                if own.done:
                    return

    def _hand_over(self) -> None:
        """Give the lead to the oldest waiting commit, or stop being busy; the lock is held."""
        if self._queue and not self._pausing:
            self._queue[0]._gate.release()
            return
        self._busy = False
        if self._pausing:
            self._cond.notify_all()

    def pause(self) -> None:
        """Wait for the running batch to end; no batch starts until :meth:`resume`."""
        with self._lock:
            self._pausing += 1
            while self._busy:
                self._cond.wait()
            self._busy = True

    def resume(self) -> None:
        """Let batches start again."""
        with self._lock:
            self._pausing -= 1
            self._busy = False
            if self._queue and not self._pausing:
                self._busy = True
                self._queue[0]._gate.release()
            else:
                self._cond.notify_all()

    def fail_queued(self, error: BaseException) -> None:
        """Settle every queued commit with ``error``."""
        with self._lock:
            queued, self._queue = self._queue, []
        for commit in queued:
            commit.settle(error=error)
            if commit._gate is not None:
                commit._gate.release()
