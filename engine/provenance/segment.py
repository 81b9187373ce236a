"""Segment files: the compressed blocks of events a shard stores, one file per rollover.

A block is the msgpack ``[ids, events]`` of up to ``BLOCK_EVENTS`` consecutive events (event
bytes as made by ``codec``), zstd-compressed unless compression is ``none``, so reading one
event decompresses one small block.

Format 2 (``SEGMENT_VERSION``): the magic ``FSPSEG2\\n``, then each block in a frame (see
``frames``) carrying the block's first id, its number of events and a CRC32 of both and the
block's bytes; an index row points at the frame. A block that fails its checksum,
decompression or decoding is known as damaged instead of being read as wrong events, and a
segment can be walked block by block without its index (:func:`walk`).

Format 1 (segments written before format 2): the blocks back to back with no framing; an index
row points at the compressed bytes. They are still read through the index, and walked by
their zstd frames (or their msgpack objects when uncompressed) to rebuild an index.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Iterator, NamedTuple, Sequence

import msgpack
import zstandard

from engine import fileops
from engine.fileops import is_all_zero
from engine.provenance import frames
from engine.provenance.frames import Frame

__all__ = [
    "BLOCK_EVENTS", "SEGMENT_VERSION", "MAGIC", "BlockError", "Block", "Unreadable", "write", "read_block",
    "frame_chain", "frame_checks_out", "is_framed", "remove_partial", "walk",
]

BLOCK_EVENTS = 256
SEGMENT_VERSION = 2
MAGIC = b"FSPSEG2\n"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_PARTIAL = ".partial"
_MSGPACK_PAIR = b"\x92"  # the [ids, events] array of an uncompressed block
_local = threading.local()


class BlockError(Exception):
    """A block failed its checksum, decompression or decoding."""


class Block(NamedTuple):
    """A readable block of a segment: its frame (or bytes) at ``offset``, ``length`` bytes of data."""

    offset: int
    length: int
    ids: tuple[int, ...]
    events: tuple[bytes, ...]


class Unreadable(NamedTuple):
    """A damaged place in a segment; ``ids`` when its frame header could be trusted."""

    offset: int
    found: str
    ids: range | None


def write(path: Path, ids: Sequence[int], blobs: Sequence[bytes], compression: str) -> list[tuple[int, int, int]]:
    """Write a format-2 segment of ``ids``/``blobs``, whole or not at all, and sync it; returns
    ``(first id, offset, length)`` per block."""
    starts = range(0, len(ids), BLOCK_EVENTS)
    chunks = [
        msgpack.packb([ids[start : start + BLOCK_EVENTS], blobs[start : start + BLOCK_EVENTS]], use_bin_type=True)
        for start in starts
    ]
    if compression == "zstd":
        # One call for every block: the GIL is released and retaken once, not once per block,
        # which matters when it has to be won back from busy writer threads.
        compressed = zstandard.ZstdCompressor(level=1).multi_compress_to_buffer(chunks)
        chunks = [segment_bytes.tobytes() for segment_bytes in compressed]
    rows = []
    parts = [MAGIC]
    offset = len(MAGIC)
    for start, data in zip(starts, chunks):
        count = min(BLOCK_EVENTS, len(ids) - start)
        rows.append((ids[start], offset, len(data)))
        parts.append(frames.encode(ids[start], count, data))
        offset += frames.OVERHEAD + len(data)
    # Under a temporary name until whole and synced: a rollover killed half-way leaves no
    # truncated segment to be taken for damage (its journals still hold the events).
    fileops.write_atomically(path, b"".join(parts), _partial(path))
    return rows


def _partial(path: Path) -> Path:
    return path.with_name(path.name + _PARTIAL)


def remove_partial(directory: Path) -> list[str]:
    """Delete the segments a killed rollover left half-written in ``directory``; returns their names."""
    names = [entry.name for entry in os.scandir(directory) if entry.name.endswith(_PARTIAL)]
    for name in names:
        fileops.unlink(directory / name, missing_ok=True)
    return names


def frame_chain(path: Path) -> dict[int, tuple[int, int]]:
    """The frames of a format-2 segment found by hopping from header to header, ``{offset:
    (length, first id)}``, up to a header that cannot be one. Reads only the headers, to
    check an index against the segment."""
    chain: dict[int, tuple[int, int]] = {}
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        offset = len(MAGIC)
        while offset + frames.OVERHEAD <= size:
            handle.seek(offset)
            length, _, first_id, _ = frames.HEADER.unpack(handle.read(frames.OVERHEAD))
            if not 0 < length <= size - offset - frames.OVERHEAD:
                break
            chain[offset] = (length, first_id)
            offset += frames.OVERHEAD + length
    return chain


def frame_checks_out(path: Path, offset: int) -> bool:
    """Whether a whole frame whose CRC matches starts at ``offset``."""
    with open(path, "rb") as handle:
        handle.seek(offset)
        header = handle.read(frames.OVERHEAD)
        if len(header) < frames.OVERHEAD:
            return False
        data = header + handle.read(frames.HEADER.unpack(header)[0])
    found = frames.parse(data, 0)
    return isinstance(found, Frame) and found.end == len(data)


def read_block(
    path: Path, offset: int, length: int, first_id: int, framed: bool
) -> tuple[tuple[int, ...], tuple[bytes, ...]]:
    """The ids and event bytes of the block an index row points at; raises BlockError."""
    size = length + frames.OVERHEAD if framed else length
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read(size)
    except OSError as error:
        raise BlockError(f"cannot read the segment: {error}") from error
    if framed:
        found = frames.parse(data, 0)
        if not isinstance(found, Frame) or found.end != size:
            raise BlockError(found.reason if not isinstance(found, Frame) else "frame length differs from the index")
        data = found.payload
    elif len(data) < length:
        raise BlockError("the segment ends inside the block")
    block_ids, blobs = _decode(data, checked=framed)
    if block_ids[0] != first_id:
        raise BlockError(f"the block starts with event {block_ids[0]}, the index says {first_id}")
    return block_ids, blobs


def _decode(data: bytes, checked: bool = False) -> tuple[tuple[int, ...], tuple[bytes, ...]]:
    """The ids and event bytes of a block; ``checked`` when a CRC vouched for ``data``, else
    the decoded values are checked too (format 1 has no checksum)."""
    try:
        if data[:4] == _ZSTD_MAGIC:
            data = _decompressor().decompress(data)
        block_ids, blobs = msgpack.unpackb(data, use_list=False)
        valid = type(block_ids) is tuple and type(blobs) is tuple and 0 < len(block_ids) == len(blobs)
        if valid and not checked:
            valid = (
                all(type(i) is int for i in block_ids)
                and all(a < b for a, b in zip(block_ids, block_ids[1:]))
                and all(type(blob) is bytes for blob in blobs)
            )
    except (zstandard.ZstdError, ValueError, TypeError, msgpack.UnpackException) as error:
        raise BlockError(f"cannot decode the block: {error}") from error
    if not valid:
        raise BlockError("the block does not hold ascending ids and their events")
    return block_ids, blobs


def _decompressor() -> zstandard.ZstdDecompressor:
    decompressor = getattr(_local, "zstd", None)
    if decompressor is None:
        decompressor = _local.zstd = zstandard.ZstdDecompressor()
    return decompressor


def is_framed(data: bytes) -> bool:
    """Whether segment bytes are of format 2; format 1 starts with a zstd frame or a msgpack array,
    so a damaged magic is still known as format 2."""
    return data[: len(MAGIC)] == MAGIC or not (data[:4] == _ZSTD_MAGIC or data[:1] == _MSGPACK_PAIR)


def walk(path: Path) -> Iterator[Block | Unreadable]:
    """Every block of a segment in file order, and every damaged place between them."""
    data = path.read_bytes()
    if is_framed(data):
        yield from _walk_framed(data)
    elif data[:4] == _ZSTD_MAGIC:
        yield from _walk_zstd(data)
    else:
        yield from _walk_msgpack(data)


def _walk_framed(data: bytes) -> Iterator[Block | Unreadable]:
    if data[: len(MAGIC)] != MAGIC and not is_all_zero(data):
        yield Unreadable(0, "not a segment header", None)
    offset = len(MAGIC)
    while offset < len(data):
        found = frames.parse(data, offset)
        if isinstance(found, Frame):
            try:
                block_ids, blobs = _decode(found.payload)
                if block_ids[0] != found.first_id or len(block_ids) != found.count:
                    raise BlockError("the block differs from its frame header")
            except BlockError as error:
                yield Unreadable(offset, str(error), range(found.first_id, found.first_id + found.count))
            else:
                yield Block(offset, len(found.payload), block_ids, blobs)
            offset = found.end
            continue
        following = frames.resync(data, found)
        resume = following.offset if following is not None else len(data)
        trusted = found.first_id is not None and found.end == resume
        yield Unreadable(offset, found.reason, range(found.first_id, found.first_id + found.count) if trusted else None)
        offset = resume


def _walk_zstd(data: bytes) -> Iterator[Block | Unreadable]:
    offset = 0
    while offset < len(data):
        decompressor = zstandard.ZstdDecompressor().decompressobj()
        try:
            plain = decompressor.decompress(data[offset:])
            if not decompressor.eof:
                raise BlockError("the segment ends inside a zstd frame")
            length = len(data) - offset - len(decompressor.unused_data)
            block_ids, blobs = _decode(plain)
        except (zstandard.ZstdError, BlockError) as error:
            resume = data.find(_ZSTD_MAGIC, offset + 1)
            yield Unreadable(offset, str(error), None)
            if resume < 0:
                return
            offset = resume
            continue
        yield Block(offset, length, block_ids, blobs)
        offset += length


def _walk_msgpack(data: bytes) -> Iterator[Block | Unreadable]:
    unpacker = msgpack.Unpacker(use_list=False, max_buffer_size=max(len(data), 1 << 20))
    unpacker.feed(data)
    offset = 0
    while offset < len(data):
        try:
            unpacker.skip()
            end = unpacker.tell()
            block_ids, blobs = _decode(data[offset:end])
        except (ValueError, TypeError, msgpack.UnpackException, BlockError) as error:
            # Uncompressed format-1 blocks have nothing to resynchronise on.
            yield Unreadable(offset, f"cannot decode the block: {error}", None)
            return
        yield Block(offset, end - offset, block_ids, blobs)
        offset = end
