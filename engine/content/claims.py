"""Claimant counts of resource claims, and the claims that have fallen out of use."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from typing import Iterable

from engine.flowfile import ResourceClaim

__all__ = ["ResourceClaimManager"]

log = logging.getLogger(__name__)


class ResourceClaimManager:
    """Counts, per resource claim, the content claims that FlowFiles hold on it.

    A resource claim is *in use* while it is writable (a writer may still append to it) or its
    count is above zero. When it falls out of use it is queued as destructible; the FlowFile
    repository drains that queue at a checkpoint and releases the claims only after the
    checkpoint's snapshot is durable, so no FlowFile that might come back after a crash can
    point at deleted content.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[ResourceClaim] = Counter()
        self._writable: set[ResourceClaim] = set()
        self._destructible: list[ResourceClaim] = []

    def increment(self, claim: ResourceClaim, amount: int = 1) -> int:
        """Add ``amount`` claimants to ``claim`` and return the new count."""
        with self._lock:
            self._counts[claim] += amount
            return self._counts[claim]

    def increment_all(self, claims: Iterable[ResourceClaim]) -> None:
        """Add one claimant per occurrence of each claim in ``claims``."""
        with self._lock:
            self._counts.update(claims)

    def decrement(self, claim: ResourceClaim, amount: int = 1) -> int:
        """Remove ``amount`` claimants from ``claim`` and return the new count."""
        with self._lock:
            return self._decrement_locked(claim, amount)

    def decrement_all(self, claims: Iterable[ResourceClaim]) -> None:
        """Remove one claimant per occurrence of each claim in ``claims``."""
        with self._lock:
            for claim in claims:
                self._decrement_locked(claim, 1)

    def _decrement_locked(self, claim: ResourceClaim, amount: int) -> int:
        count = self._counts[claim] - amount
        if count < 0:
            log.error("claimant count of %s went below zero (%d); treating it as zero", claim, count)
            count = 0
        if count == 0:
            del self._counts[claim]
            if claim not in self._writable:
                self._destructible.append(claim)
        else:
            self._counts[claim] = count
        return count

    def count(self, claim: ResourceClaim) -> int:
        """Current claimant count of ``claim``."""
        with self._lock:
            return self._counts.get(claim, 0)

    def mark_writable(self, claim: ResourceClaim) -> None:
        """Note that a writer may append to ``claim``: it stays in use whatever its count."""
        with self._lock:
            self._writable.add(claim)

    def freeze(self, claim: ResourceClaim) -> None:
        """Note that no writer will append to ``claim`` again; queue it if nobody holds it."""
        with self._lock:
            self._writable.discard(claim)
            if self._counts.get(claim, 0) == 0:
                self._destructible.append(claim)

    def is_in_use(self, claim: ResourceClaim) -> bool:
        """True while ``claim`` is writable or referenced."""
        with self._lock:
            return claim in self._writable or self._counts.get(claim, 0) > 0

    def drain_destructible(self) -> list[ResourceClaim]:
        """Take the claims that fell out of use since the last drain (still unused ones only)."""
        with self._lock:
            drained = [
                claim
                for claim in dict.fromkeys(self._destructible)
                if claim not in self._writable and self._counts.get(claim, 0) == 0
            ]
            self._destructible.clear()
            return drained

    def requeue_destructible(self, claims: list[ResourceClaim]) -> None:
        """Put back claims taken by a drain whose checkpoint failed (they wait for the next one)."""
        with self._lock:
            self._destructible.extend(claims)

    def counts(self) -> dict[ResourceClaim, int]:
        """A copy of every non-zero count (for inspection and verification)."""
        with self._lock:
            return dict(self._counts)

    def writable(self) -> set[ResourceClaim]:
        """A copy of the set of writable claims."""
        with self._lock:
            return set(self._writable)
