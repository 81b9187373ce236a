"""Snapshots: the whole state of the log at a transaction id, written through ``.partial``.

Layout of ``snapshot`` (and of ``.partial`` while it is being written)::

    b"FSWALS2\\n", u32 length, u32 CRC32 of the header bytes,
    msgpack {"serde", "serde_version", "max_txn_id", "records", "journal"}
    frames: kind byte, u32 payload length, u32 CRC32, payload
        b"R"  msgpack array of up to 10,000 wire records
        b"S"  msgpack array of swap-file locations
        b"T"  msgpack map of transfer marks, key -> received-at ms (only when there are any, so
              a node without load balancing writes snapshots older versions still read)
        b"O"  msgpack map of outbox entries not yet settled, key -> value (only when there are any)
        b"E"  msgpack record count (the snapshot is complete only with this frame)

``journal`` names the journal opened when the snapshot's state was taken: the one whose
first transaction is ``max_txn_id + 1``. The snapshot is written to ``.partial``, synced and
renamed over ``snapshot`` (``fileops.AtomicFile``), so ``snapshot`` is always whole. Which file
recovery uses is ``engine.wal.recovery``'s decision. Version 1 snapshots (``FSWALS1``, no
header checksum, no journal name) are still read.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import msgpack

from engine import fileops
from engine.checksums import crc32

__all__ = [
    "PARTIAL_NAME", "SNAPSHOT_NAME", "SnapshotContents", "SnapshotCorruptionError", "promote_partial",
    "read_snapshot", "write_snapshot",
]

MAGIC = b"FSWALS2\n"
MAGIC_V1 = b"FSWALS1\n"
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
        self.reason = reason


@dataclass
class SnapshotContents:
    """What a snapshot holds (``journal`` is None in version 1 snapshots)."""

    max_txn_id: int = -1
    serde_version: int = 0
    records: list[Any] = field(default_factory=list)
    swap_locations: list[str] = field(default_factory=list)
    journal: str | None = None
    transfer_marks: dict[str, int] = field(default_factory=dict)
    outbox: dict[int, Any] = field(default_factory=dict)


def _frame(kind: bytes, payload: bytes) -> bytes:
    return _FRAME.pack(kind[0], len(payload), crc32(payload)) + payload


def write_snapshot(
    directory: Path,
    wire_records: Iterable[Any],
    swap_locations: Iterable[str],
    *,
    transfer_marks: Mapping[str, int] | None = None,
    outbox: Mapping[int, Any] | None = None,
    max_txn_id: int,
    record_count: int,
    serde_name: str,
    serde_version: int,
    journal: str,
) -> None:
    """Write the snapshot through ``.partial``: synced, renamed over ``snapshot``, directory synced."""
    header = msgpack.packb({
        "serde": serde_name, "serde_version": serde_version, "max_txn_id": max_txn_id, "records": record_count,
        "journal": journal,
    })
    packer = msgpack.Packer()
    written = 0
    with fileops.AtomicFile(directory / SNAPSHOT_NAME, directory / PARTIAL_NAME) as handle:
        handle.write(MAGIC + _U32.pack(len(header)) + _U32.pack(crc32(header)) + header)
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
        if transfer_marks:
            handle.write(_frame(b"T", packer.pack(dict(transfer_marks))))
        if outbox:
            handle.write(_frame(b"O", packer.pack(dict(outbox))))
        handle.write(_frame(b"E", packer.pack(written)))


def promote_partial(directory: Path) -> None:
    """Rename a complete ``.partial`` to ``snapshot`` and make the rename durable."""
    fileops.rename(directory / PARTIAL_NAME, directory / SNAPSHOT_NAME)
    fileops.sync_directory(directory)


def read_snapshot(path: Path) -> SnapshotContents:
    """Read a whole snapshot; raise :class:`SnapshotCorruptionError` if it is empty, incomplete
    or damaged anywhere (its header included)."""
    contents = SnapshotContents()
    with open(path, "rb", buffering=1 << 20) as handle:
        head = handle.read(len(MAGIC) + _U32.size)
        if not head:
            raise SnapshotCorruptionError(path, 0, "the file is empty")
        if head.startswith(MAGIC_V1) and len(head) == len(MAGIC) + _U32.size:
            (length,) = _U32.unpack_from(head, len(MAGIC))
            body = handle.read(length)
            offset = len(head) + length
        elif head.startswith(MAGIC) and len(head) == len(MAGIC) + _U32.size:
            (length,) = _U32.unpack_from(head, len(MAGIC))
            crc = handle.read(_U32.size)
            body = handle.read(length)
            if len(crc) < _U32.size or len(body) < length or crc32(body) != _U32.unpack(crc)[0]:
                raise SnapshotCorruptionError(path, 0, "the header is cut short or fails its checksum")
            offset = len(head) + _U32.size + length
        else:
            raise SnapshotCorruptionError(path, 0, "not a Flowsite snapshot header")
        try:
            header = msgpack.unpackb(body)
            contents.max_txn_id = header["max_txn_id"]
            contents.serde_version = header["serde_version"]
            contents.journal = header.get("journal")
        except (ValueError, KeyError, TypeError, msgpack.UnpackException):
            raise SnapshotCorruptionError(path, 0, "the header is unreadable") from None
        while True:
            frame = handle.read(_FRAME.size)
            if len(frame) < _FRAME.size:
                raise SnapshotCorruptionError(path, offset, "the snapshot ends before its end frame")
            kind, size, crc = _FRAME.unpack(frame)
            payload = handle.read(size)
            if len(payload) < size or crc32(payload) != crc:
                raise SnapshotCorruptionError(path, offset, "a frame is cut short or fails its checksum")
            value = msgpack.unpackb(payload, use_list=True, strict_map_key=False)
            if kind == ord("R"):
                contents.records.extend(value)
            elif kind == ord("S"):
                contents.swap_locations = value
            elif kind == ord("T"):
                if not isinstance(value, dict) or not all(
                    isinstance(k, str) and type(v) is int for k, v in value.items()
                ):
                    raise SnapshotCorruptionError(path, offset, "the transfer marks frame is not a map of key to time")
                contents.transfer_marks = value
            elif kind == ord("O"):
                if not isinstance(value, dict) or not all(type(k) is int for k in value):
                    raise SnapshotCorruptionError(path, offset, "the outbox frame is not a map of key to entry")
                contents.outbox = value
            elif kind == ord("E"):
                if value != len(contents.records):
                    raise SnapshotCorruptionError(
                        path, offset, f"the end frame counts {value} records, {len(contents.records)} were read"
                    )
                if handle.read(1):
                    raise SnapshotCorruptionError(path, offset + _FRAME.size + size, "bytes follow the end frame")
                return contents
            else:
                raise SnapshotCorruptionError(path, offset, f"unknown frame kind {kind!r}")
            offset += _FRAME.size + size
