"""Fault injection for the repositories' file operations (see ``engine.fileops``).

A :class:`FaultPlan` counts every file operation of the storage and makes the Nth one that
matches fail — with ENOSPC or EIO, optionally after part of a write reached the file — once,
or from then on until ``heal`` (a disk that stays full)::

    plan = FaultPlan(fail_at=12, errno=errno.ENOSPC, operations={"write", "sync"})
    with plan.installed():
        ...  # the 12th write or sync raises OSError(ENOSPC)

A plan with no ``fail_at`` only counts: run a workload once to learn how many operations it
makes, then once per failure point.
"""

from __future__ import annotations

import errno as errnos
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator

from engine import fileops

__all__ = ["ALL_OPERATIONS", "FaultPlan", "InjectedFault"]

ALL_OPERATIONS = frozenset({"open", "write", "sync", "truncate", "rename", "link", "unlink", "mkdir"})


class InjectedFault(OSError):
    """An error a fault plan raised (an ``OSError`` like the real one, so code treats it alike)."""


@dataclass
class FaultPlan:
    """Which file operation fails, and how (see the module docstring).

    ``operations`` and ``matches`` (a predicate on the path, or a substring of it) choose the
    operations that count; ``fail_at`` is the 1-based number of the counted operation that
    fails; ``persistent`` keeps failing every later counted operation until :meth:`heal`;
    ``partial`` makes a failing write put half of its bytes in the file first.
    """

    fail_at: int | None = None
    errno: int = errnos.ENOSPC
    operations: frozenset[str] = ALL_OPERATIONS
    matches: Callable[[str], bool] | str | None = None
    persistent: bool = False
    partial: bool = False
    calls: list[tuple[str, str]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.operations = frozenset(self.operations)
        unknown = self.operations - ALL_OPERATIONS
        if unknown:
            raise ValueError(f"unknown file operations {sorted(unknown)}")
        self._lock = threading.Lock()
        self._healed = False

    @property
    def count(self) -> int:
        """How many operations matched so far."""
        return len(self.calls)

    @property
    def triggered(self) -> bool:
        """True once an operation was made to fail."""
        return bool(self.failures)

    def heal(self) -> None:
        """Stop failing (the disk has room again)."""
        self._healed = True

    def _matches(self, operation: str, path: str) -> bool:
        if operation not in self.operations:
            return False
        if self.matches is None:
            return True
        if isinstance(self.matches, str):
            return self.matches in path
        return self.matches(path)

    def __call__(self, operation: str, path: str, size: int) -> int | None:
        if not self._matches(operation, path):
            return None
        with self._lock:
            self.calls.append((operation, path))
            number = len(self.calls)
            failing = (
                not self._healed
                and self.fail_at is not None
                and (number == self.fail_at or (self.persistent and number > self.fail_at))
            )
            if failing:
                self.failures.append((operation, path))
        if not failing:
            return None
        if operation == "write" and self.partial and size > 1 and self.errno == errnos.ENOSPC:
            return size // 2
        raise InjectedFault(self.errno, os.strerror(self.errno), path)

    @contextmanager
    def installed(self) -> Iterator[FaultPlan]:
        """Apply the plan to every file operation made inside the block (any thread)."""
        previous = fileops.set_fault_hook(self)
        try:
            yield self
        finally:
            fileops.set_fault_hook(previous)
