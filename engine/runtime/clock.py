"""Time as the runtime sees it: a monotonic clock for scheduling and the wall clock for CRON.

Tests use ``ManualClock`` and step the scheduler themselves, so yields, penalties and CRON
fire times can be checked without waiting for them.
"""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["Clock", "ManualClock", "SystemClock"]


class Clock(Protocol):
    """Where the runtime reads the time."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (for delays)."""

    def time(self) -> float:
        """Seconds since the epoch (for CRON fire times)."""


class SystemClock:
    """The real clocks."""

    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()


class ManualClock:
    """A clock that moves only when told to; both readings move together. The wall clock
    starts at ``wall`` (the real time by default)."""

    def __init__(self, wall: float | None = None) -> None:
        self._monotonic = 1_000.0
        self._offset = (time.time() if wall is None else wall) - self._monotonic

    def monotonic(self) -> float:
        return self._monotonic

    def time(self) -> float:
        return self._monotonic + self._offset

    def advance(self, seconds: float) -> None:
        """Move both clocks forward."""
        if seconds < 0:
            raise ValueError("a clock cannot go back")
        self._monotonic += seconds
