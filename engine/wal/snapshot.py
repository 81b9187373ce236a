"""Snapshots: the whole state of the log at a transaction id, written through ``.partial``.

Layout of ``snapshot`` (and of ``.partial`` while it is being written)::

    b"FSWALS1\\n", u32 length, msgpack {"serde", "serde_version", "max_txn_id", "records"}
    frames: kind byte, u32 payload length, u32 CRC32, payload
        b"R"  msgpack array of up to 10,000 wire records
        b"S"  msgpack array of swap-file locations
        b"E"  msgpack record count (the snapshot is complete only with this frame)

Recovery follows seed 001: with both files, the snapshot is kept and ``.partial`` deleted
(the crash came while writing it); with only ``.partial``, it is renamed to ``snapshot`` (the
crash came between removing the old snapshot and the rename).
"""

from __future__ import annotations

import logging
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import msgpack

from engine import fileops

__all__ = ["SnapshotCorruptionError", "SnapshotContents", "read_snapshot", "load_snapshot"]

log = logging.getLogger(__name__)

MAGIC = b"FSWALS1\n"
SNAPSHOT_NAME = "snapshot"
PARTIAL_NAME = ".partial"
BLOCK_RECORDS = 10_000
_FRAME = struct.Struct(">BII")
_U32 = struct.Struct(">I")


class SnapshotCorruptionError(Exception):
    """A snapshot file that cannot be read whole."""

    def __init__(self, path: Path, offset: int, reason: str) -> None:
        super().__init__(f"write-ahead log snapshot {path} is unreadable at byte offset {offset}: {reason}")
        self.path = path
        self.offset = offset


@dataclass
class SnapshotContents:
    """What a snapshot holds."""

    max_txn_id: int = -1
    serde_version: int = 0
    records: list[Any] = field(default_factory=list)
    swap_locations: list[str] = field(default_factory=list)


def _frame(kind: bytes, payload: bytes) -> bytes:
    return _FRAME.pack(kind[0], len(payload), zlib.crc32(payload)) + payload


def write_snapshot(
    directory: Path,
    wire_records: Iterable[Any],
    swap_locations: Iterable[str],
    *,
    max_txn_id: int,
    record_count: int,
    serde_name: str,
    serde_version: int,
) -> None:
    """Write the snapshot through ``.partial``: synced, renamed over ``snapshot``, directory synced."""
    header = msgpack.packb(
        {"serde": serde_name, "serde_version": serde_version, "max_txn_id": max_txn_id, "records": record_count}
    )
    packer = msgpack.Packer()
    written = 0
    with fileops.AtomicFile(directory / SNAPSHOT_NAME, directory / PARTIAL_NAME) as handle:
        handle.write(MAGIC + _U32.pack(len(header)) + header)
        block: list[Any] = []
        for wire in wire_records:
            block.append(wire)
            if len(block) == BLOCK_RECORDS:
                handle.write(_frame(b"R", packer.pack(block)))
                written += len(block)
                block = []
        if block:
            handle.write(_frame(b"R", packer.pack(block)))
            written += len(block)
        handle.write(_frame(b"S", packer.pack(sorted(swap_locations))))
        handle.write(_frame(b"E", packer.pack(written)))


def _promote_partial(directory: Path) -> None:
    fileops.rename(directory / PARTIAL_NAME, directory / SNAPSHOT_NAME)
    fileops.sync_directory(directory)


def load_snapshot(directory: Path, *, read_only: bool = False) -> SnapshotContents | None:
    """Apply the seed's ``snapshot``/``.partial`` rule and read the snapshot to recover from.

    With both files the snapshot is kept and ``.partial`` deleted. With only ``.partial``, it is
    promoted to ``snapshot`` when complete; an incomplete one can only come from a crash during
    the very first checkpoint, before any journal was removed, so it is deleted and recovery
    uses the journals alone. ``read_only`` makes the same choice without touching the files.
    """
    snapshot = directory / SNAPSHOT_NAME
    partial = directory / PARTIAL_NAME
    if snapshot.exists():
        if partial.exists() and not read_only:
            log.info("found %s beside %s: a checkpoint was interrupted; keeping the snapshot", partial, snapshot)
            fileops.unlink(partial)
            fileops.sync_directory(directory)
        return read_snapshot(snapshot)
    if not partial.exists():
        return None
    try:
        contents = read_snapshot(partial)
    except SnapshotCorruptionError as error:
        if read_only:
            return None
        log.warning("deleting %s: %s; the first checkpoint was interrupted and the journals are intact", partial, error)
        fileops.unlink(partial)
        fileops.sync_directory(directory)
        return None
    if not read_only:
        log.info("found only %s: promoting it to %s", partial, snapshot)
        _promote_partial(directory)
    return contents


def read_snapshot(path: Path) -> SnapshotContents:
    """Read a whole snapshot; raise :class:`SnapshotCorruptionError` if it is incomplete or damaged."""
    contents = SnapshotContents()
    if path.stat().st_size == 0:
        log.warning("snapshot %s is empty; treating it as no snapshot", path)
        return contents
    with open(path, "rb", buffering=1 << 20) as handle:
        head = handle.read(len(MAGIC) + _U32.size)
        if not head.startswith(MAGIC) or len(head) < len(MAGIC) + _U32.size:
            raise SnapshotCorruptionError(path, 0, "not a Flowsite snapshot header")
        (length,) = _U32.unpack_from(head, len(MAGIC))
        header = msgpack.unpackb(handle.read(length))
        contents.max_txn_id = header["max_txn_id"]
        contents.serde_version = header["serde_version"]
        offset = len(head) + length
        while True:
            frame = handle.read(_FRAME.size)
            if len(frame) < _FRAME.size:
                raise SnapshotCorruptionError(path, offset, "the snapshot ends before its end frame")
            kind, size, crc = _FRAME.unpack(frame)
            payload = handle.read(size)
            if len(payload) < size or zlib.crc32(payload) != crc:
                raise SnapshotCorruptionError(path, offset, "a frame is truncated or fails its checksum")
            value = msgpack.unpackb(payload, use_list=True, strict_map_key=False)
            if kind == ord("R"):
                contents.records.extend(value)
            elif kind == ord("S"):
                contents.swap_locations = value
            elif kind == ord("E"):
                if value != len(contents.records):
                    raise SnapshotCorruptionError(path, offset, f"end frame counts {value} records, read {len(contents.records)}")
                return contents
            else:
                raise SnapshotCorruptionError(path, offset, f"unknown frame kind {kind!r}")
            offset += _FRAME.size + size
