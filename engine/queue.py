"""A first-in-first-out FlowFile queue (a connection's queue, without prioritizers or swapping)."""

from __future__ import annotations

import threading
from collections import deque
from typing import Iterable, NamedTuple

from engine.flowfile import FlowFile

__all__ = ["FlowFileQueue", "QueueSize"]


class QueueSize(NamedTuple):
    """Counts of a queue: waiting FlowFiles, and those handed to a session but not yet settled."""

    count: int
    bytes: int
    unacknowledged_count: int
    unacknowledged_bytes: int


class FlowFileQueue:
    """FlowFiles waiting in a connection, in arrival order.

    A polled FlowFile stays counted as *unacknowledged* until the session that took it commits
    or rolls back and calls ``acknowledge``.
    """

    def __init__(self, identifier: str) -> None:
        self.identifier = identifier
        self._items: deque[FlowFile] = deque()
        self._lock = threading.Lock()
        self._bytes = 0
        self._unacked_count = 0
        self._unacked_bytes = 0

    def put(self, flowfile: FlowFile) -> None:
        """Append one FlowFile."""
        with self._lock:
            self._items.append(flowfile)
            self._bytes += flowfile.size

    def put_all(self, flowfiles: Iterable[FlowFile]) -> None:
        """Append FlowFiles in order."""
        flowfiles = list(flowfiles)
        with self._lock:
            self._items.extend(flowfiles)
            self._bytes += sum(f.size for f in flowfiles)

    def poll(self, max_count: int = 1) -> list[FlowFile]:
        """Take up to ``max_count`` FlowFiles from the head; they become unacknowledged."""
        with self._lock:
            taken = []
            items = self._items
            while items and len(taken) < max_count:
                taken.append(items.popleft())
            size = sum(f.size for f in taken)
            self._bytes -= size
            self._unacked_count += len(taken)
            self._unacked_bytes += size
            return taken

    def acknowledge(self, flowfiles: Iterable[FlowFile]) -> None:
        """Settle FlowFiles taken by ``poll`` (committed elsewhere, or put back)."""
        flowfiles = list(flowfiles)
        with self._lock:
            self._unacked_count -= len(flowfiles)
            self._unacked_bytes -= sum(f.size for f in flowfiles)

    def size(self) -> QueueSize:
        """Current counts."""
        with self._lock:
            return QueueSize(len(self._items), self._bytes, self._unacked_count, self._unacked_bytes)

    def peek(self, count: int) -> list[FlowFile]:
        """The first ``count`` waiting FlowFiles, left in place."""
        with self._lock:
            return [self._items[i] for i in range(min(count, len(self._items)))]

    def __len__(self) -> int:
        return len(self._items)
