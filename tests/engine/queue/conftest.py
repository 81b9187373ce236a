from __future__ import annotations

import itertools

import pytest

from engine.flowfile import ContentClaim, FlowFile, ResourceClaim


class FakeClock:
    """Wall-clock seconds that only move when a test says so."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


_ids = itertools.count(1)


def make(clock: FakeClock | None = None, size: int = 0, penalty: int = 0, lineage: int | None = None,
         entry: int | None = None, **attributes) -> FlowFile:
    """A FlowFile queued now (queue date and index increase with every call)."""
    ff_id = next(_ids)
    now = int((clock() if clock else 1_700_000_000.0) * 1000)
    claim = ContentClaim(ResourceClaim("default", 0, "c"), 0, size) if size else None
    return FlowFile(ff_id, f"uuid-{ff_id}", {k: str(v) for k, v in attributes.items()}, claim,
                    now if entry is None else entry, now if lineage is None else lineage, ff_id,
                    now, ff_id, penalty)
