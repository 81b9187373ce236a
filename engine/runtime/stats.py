"""Statistics of a component over a rolling five-minute window, plus totals since start."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, fields
from typing import Callable

__all__ = ["ComponentStats", "StatsSnapshot", "WINDOW_SECONDS"]

WINDOW_SECONDS = 300
_BUCKET_SECONDS = 5
_BUCKETS = WINDOW_SECONDS // _BUCKET_SECONDS


@dataclass
class StatsSnapshot:
    """Counts over a period: FlowFiles and bytes in and out, content read and written, tasks."""

    invocations: int = 0
    task_nanos: int = 0
    flowfiles_in: int = 0
    bytes_in: int = 0
    flowfiles_out: int = 0
    bytes_out: int = 0
    bytes_read: int = 0
    bytes_written: int = 0

    def add(self, other: StatsSnapshot) -> None:
        """Add ``other``'s counts to these."""
        for field in fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    def as_dict(self) -> dict[str, int]:
        """The counts by name, task time also in milliseconds."""
        values = {field.name: getattr(self, field.name) for field in fields(self)}
        values["task_millis"] = self.task_nanos // 1_000_000
        return values


class ComponentStats:
    """Counters kept in five-second buckets covering the last five minutes, and in totals."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: list[tuple[int, StatsSnapshot]] = [(-1, StatsSnapshot()) for _ in range(_BUCKETS)]
        self.totals = StatsSnapshot()

    def _bucket(self) -> StatsSnapshot:
        index = int(self._clock() // _BUCKET_SECONDS)
        slot = index % _BUCKETS
        stamp, bucket = self._buckets[slot]
        if stamp != index:
            bucket = StatsSnapshot()
            self._buckets[slot] = (index, bucket)
        return bucket

    def record(self, **counts: int) -> None:
        """Add counts (names of ``StatsSnapshot`` fields)."""
        with self._lock:
            bucket = self._bucket()
            totals = self.totals
            for name, value in counts.items():
                setattr(bucket, name, getattr(bucket, name) + value)
                setattr(totals, name, getattr(totals, name) + value)

    def window(self) -> StatsSnapshot:
        """The counts of the last five minutes."""
        with self._lock:
            now = int(self._clock() // _BUCKET_SECONDS)
            result = StatsSnapshot()
            for stamp, bucket in self._buckets:
                if stamp > now - _BUCKETS:
                    result.add(bucket)
            return result
