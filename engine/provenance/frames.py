"""Checksummed frames: the unit of both rolling journals and shard segments.

A frame is::

    length u32 | crc32 u32 | first_event_id u64 | count u32 | payload (length bytes)

little-endian; the CRC covers the id, the count and the payload. A journal frame holds one
registered batch, a segment frame one compressed block. Reading tells a *torn tail* (the end
of a file cut short, or the NUL bytes a power loss leaves) from *damage* (a bad frame with
data after it) with :func:`parse` and :func:`resync`.
"""

from __future__ import annotations

import struct
from typing import Iterable, NamedTuple, Sequence

from engine.checksums import crc32

__all__ = ["HEADER", "OVERHEAD", "Frame", "BadFrame", "encode", "parse", "resync", "find_next", "describe_ids",
           "describe_ranges"]

HEADER = struct.Struct("<IIQI")
OVERHEAD = HEADER.size
_CHECKED = struct.Struct("<QI")
_MAX_ID = 1 << 48
# No real frame ends in this many NUL bytes (msgpack and zstd end otherwise): a frame that
# does, with only NULs after it, is one whose last pages never reached the disk.
_UNWRITTEN = 8


class Frame(NamedTuple):
    """A frame that checks out: ``payload`` sits at ``offset + OVERHEAD``; the next frame at ``end``."""

    offset: int
    first_id: int
    count: int
    payload: bytes
    end: int


class BadFrame(NamedTuple):
    """Why the bytes at ``offset`` are no frame; ``torn`` when they look like a cut end of file.

    ``first_id``/``count``/``end`` are what the header claims (None when it is cut short).
    """

    offset: int
    reason: str
    torn: bool
    first_id: int | None = None
    count: int | None = None
    end: int | None = None


def encode(first_id: int, count: int, payload: bytes) -> bytes:
    """The bytes of one frame holding ``payload``."""
    crc = crc32(payload, crc32(_CHECKED.pack(first_id, count)))
    return HEADER.pack(len(payload), crc, first_id, count) + payload


def parse(data: bytes, offset: int) -> Frame | BadFrame:
    """The frame at ``offset`` of ``data``, or why there is none."""
    size = len(data)
    header = size - offset >= OVERHEAD
    if header:
        length, crc, first_id, count = HEADER.unpack_from(data, offset)
        body = offset + OVERHEAD
        end = body + length
        payload = data[body:end]
        if end <= size and length and count and crc32(payload, crc32(_CHECKED.pack(first_id, count))) == crc:
            return Frame(offset, first_id, count, payload, end)
    if _zero_from(data, offset):
        return BadFrame(offset, "only NUL bytes follow", True)
    if not header:
        return BadFrame(offset, "truncated frame header", True)
    if end > size:
        return BadFrame(offset, "truncated frame", True, first_id, count, end)
    if payload.endswith(b"\0" * _UNWRITTEN) and _zero_from(data, end):
        return BadFrame(offset, "the last frame was never fully written", True, first_id, count, end)
    return BadFrame(offset, "checksum mismatch", False, first_id, count, end)


def _zero_from(data: bytes, offset: int) -> bool:
    return data.count(0, offset) == len(data) - offset


def resync(data: bytes, bad: BadFrame) -> Frame | None:
    """The next valid frame after ``bad``: where its header says it ends, when a frame starts
    there (a damaged payload), else the first one a scan finds (a damaged header)."""
    if bad.end is not None and bad.end < len(data):
        found = parse(data, bad.end)
        if isinstance(found, Frame):
            return found
    return find_next(data, bad.offset + 1)


def find_next(data: bytes, start: int) -> Frame | None:
    """The first frame at or after ``start`` whose header and CRC check out (a resynchronisation)."""
    unpack = HEADER.unpack_from
    checked = _CHECKED.pack
    last = len(data) - OVERHEAD
    for offset in range(start, last):
        length, crc, first_id, count = unpack(data, offset)
        # Plausible headers only: garbage rarely has a length that fits and an id below 2**48.
        if not (0 < length <= last - offset and count and first_id < _MAX_ID):
            continue
        body = offset + OVERHEAD
        payload = data[body : body + length]
        if crc32(payload, crc32(checked(first_id, count))) == crc:
            return Frame(offset, first_id, count, payload, body + length)
    return None


def describe_ids(ids: Iterable[int]) -> str:
    """Ascending ``ids`` as ranges: ``3–7, 9``."""
    ranges: list[list[int]] = []
    for event_id in ids:
        if ranges and event_id == ranges[-1][1] + 1:
            ranges[-1][1] = event_id
        else:
            ranges.append([event_id, event_id])
    return describe_ranges(ranges)


def describe_ranges(ranges: Sequence[Sequence[int]], most: int | None = None) -> str:
    """Inclusive (first, last) id ranges as ``3–7, 9``, the first ``most`` of them at most."""
    shown = ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in ranges[:most]) or "none"
    hidden = len(ranges) - most if most is not None and len(ranges) > most else 0
    return shown + (f" and {hidden} more ranges" if hidden else "")
