"""A minimal serde so the write-ahead log can be tested apart from FlowFiles."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from engine.wal import UpdateType
from engine.wal.journal import FRAME_HEADER


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


def frame_offsets(journal: Path) -> list[int]:
    """The byte offset of every transaction frame of a journal (format 2)."""
    data = journal.read_bytes()
    (header_length,) = struct.unpack_from(">I", data, 8)
    offset, offsets = 16 + header_length, []
    while offset + FRAME_HEADER <= len(data) and data[offset] == 0x40:
        offsets.append(offset)
        (length,) = struct.unpack_from(">I", data, offset + 9)
        offset += FRAME_HEADER + length
    return offsets
