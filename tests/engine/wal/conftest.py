"""A minimal serde so the write-ahead log can be tested apart from FlowFiles."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from engine.wal import UpdateType


class Rec(NamedTuple):
    kind: UpdateType
    id: int | None
    value: str | None = None
    location: str | None = None
    original_location: str | None = None


class RecSerde:
    name = "test"
    version = 1

    def to_wire(self, record: Rec) -> Any:
        return tuple(record)

    def from_wire(self, wire: Any, version: int) -> Rec:
        kind, *rest = wire
        return Rec(UpdateType(kind), *rest)

    def record_id(self, record: Rec) -> int | None:
        return record.id

    def update_type(self, record: Rec) -> UpdateType:
        return record.kind

    def swap_location(self, record: Rec) -> str | None:
        return record.location

    def original_swap_location(self, record: Rec) -> str | None:
        return record.original_location


@pytest.fixture
def serde() -> RecSerde:
    return RecSerde()
