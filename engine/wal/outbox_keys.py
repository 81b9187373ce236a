"""The outbox keys taken and not settled, kept as runs of consecutive keys.

An OUTBOX record names the lower keys still open when its key was taken. Keys are taken from a
counter, so the open ones form a few runs even when many stay open for long (a provenance disk
that refuses writes keeps every entry open until it accepts them): the record carries the runs,
``(first, last, first, last, ...)``, not every key, and stays small.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterable, Sequence

__all__ = ["OpenKeys", "in_runs"]


def in_runs(runs: Sequence[int], key: int) -> bool:
    """Whether ``key`` lies in one of ``runs`` (flat, ascending ``(first, last, ...)`` pairs)."""
    position = bisect_right(runs, key)
    # Inside a run, or on its last key (bisect_right passes a last equal to the key).
    return position % 2 == 1 or (position > 0 and runs[position - 1] == key)


class OpenKeys:
    """Ascending keys as runs; ``add`` takes only keys above every key added before."""

    def __init__(self, keys: Iterable[int] = ()) -> None:
        self._firsts: list[int] = []
        self._lasts: list[int] = []
        for key in sorted(keys):
            self.add(key)

    def add(self, key: int) -> None:
        """Add ``key``, higher than every key added so far."""
        lasts = self._lasts
        if lasts and lasts[-1] == key - 1:
            lasts[-1] = key
        else:
            self._firsts.append(key)
            lasts.append(key)

    def discard(self, key: int) -> None:
        """Remove ``key`` if present."""
        firsts, lasts = self._firsts, self._lasts
        index = bisect_right(firsts, key) - 1
        if index < 0 or key > lasts[index]:
            return
        first, last = firsts[index], lasts[index]
        if first == last:
            del firsts[index], lasts[index]
        elif key == first:
            firsts[index] = key + 1
        elif key == last:
            lasts[index] = key - 1
        else:
            lasts[index] = key - 1
            firsts.insert(index + 1, key + 1)
            lasts.insert(index + 1, last)

    def runs(self) -> list[int]:
        """The runs, flat: ``[first, last, first, last, ...]``."""
        return [key for run in zip(self._firsts, self._lasts) for key in run]

    def __contains__(self, key: int) -> bool:
        index = bisect_right(self._firsts, key) - 1
        return index >= 0 and key <= self._lasts[index]
