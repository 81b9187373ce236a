"""Journal files: an append-only sequence of framed transactions.

Layout of ``<first transaction id>.journal``::

    header      b"FSWALJ1\\n", u32 length, msgpack {"serde": name, "serde_version": n}
    transaction 0x40, u64 transaction id, u32 payload length, u32 CRC32 of id and payload,
                payload (msgpack array of the transaction's wire records)
    ...
    end         0x7F, written when the journal is closed cleanly

A transaction is applied on recovery only if it was read whole and its checksum matches. A
file that ends inside a transaction, or whose remaining bytes are all NUL (what a power loss
leaves past the end of a file), has a *torn tail*: the tail is discarded with a warning. Any
other damage raises :class:`JournalCorruptionError` naming the file and the offset, unless the
caller asks to skip it.
"""

from __future__ import annotations

import logging
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import msgpack

from engine import fileops
from engine.fileops import is_all_zero

__all__ = [
    "JournalCorruptionError",
    "JournalWriter",
    "JournalReadResult",
    "read_journal",
    "journal_path",
    "list_journals",
]

log = logging.getLogger(__name__)

MAGIC = b"FSWALJ1\n"
TRANSACTION = 0x40
END = 0x7F
_FRAME = struct.Struct(">BQII")  # marker, transaction id, payload length, crc32
_U32 = struct.Struct(">I")
_ID = struct.Struct(">Q")
_MARKER = bytes((TRANSACTION,))


class JournalCorruptionError(Exception):
    """A journal holds bytes that are neither a valid transaction nor a torn tail."""

    def __init__(self, path: Path, offset: int, reason: str) -> None:
        super().__init__(
            f"write-ahead log journal {path} is corrupt at byte offset {offset}: {reason}. "
            "Committed data may follow this point, so start-up is refused; restore the file, "
            "or start with the option that skips corrupt journal data to discard the rest of "
            "this journal."
        )
        self.path = path
        self.offset = offset
        self.reason = reason


def journal_path(directory: Path, first_txn_id: int) -> Path:
    """Path of the journal whose first transaction id is ``first_txn_id``."""
    return directory / f"{first_txn_id}.journal"


def list_journals(directory: Path) -> list[tuple[int, Path]]:
    """The journals in ``directory`` as (first transaction id, path), oldest first."""
    found = []
    if directory.is_dir():
        for entry in directory.iterdir():
            stem, dot, suffix = entry.name.partition(".")
            if suffix == "journal" and stem.isdigit():
                found.append((int(stem), entry))
    return sorted(found)


def encode_transaction(txn_id: int, payload: bytes) -> bytes:
    """The framed bytes of one transaction."""
    id_bytes = _ID.pack(txn_id)
    return b"".join((_MARKER, id_bytes, _U32.pack(len(payload)), _U32.pack(zlib.crc32(payload, zlib.crc32(id_bytes))), payload))


class JournalWriter:
    """Appends framed transactions to one journal file with unbuffered ``os.write`` calls.

    Each transaction reaches the kernel in the call that appends it, so it survives a kill of
    the process; ``sync()`` makes it survive a power loss. A journal opened with ``dsync``
    makes every write durable by itself (``O_DSYNC``): one system call instead of a write and
    a sync, and ``sync()`` has nothing left to do.
    """

    def __init__(self, path: Path, serde_name: str, serde_version: int, *, dsync: bool = False) -> None:
        self.path = path
        self.dsync = dsync
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | (os.O_DSYNC if dsync else 0)
        self.fd = fileops.open_fd(path, flags)
        header = msgpack.packb({"serde": serde_name, "serde_version": serde_version})
        self._write(MAGIC + _U32.pack(len(header)) + header)
        self.transactions = 0
        self.bytes_written = 0

    def _write(self, data: bytes) -> None:
        fileops.write_all(self.fd, data, self.path)

    def append(self, frame: bytes) -> None:
        """Append one framed transaction (see :func:`encode_transaction`)."""
        self._write(frame)
        self.transactions += 1
        self.bytes_written += len(frame)

    def append_frames(self, frames: list[bytes]) -> None:
        """Append several framed transactions with one write."""
        data = b"".join(frames)
        self._write(data)
        self.transactions += len(frames)
        self.bytes_written += len(data)

    def sync(self) -> None:
        """Make everything appended so far durable."""
        if not self.dsync:
            fileops.sync(self.fd, self.path, data_only=True)

    def close(self) -> None:
        """Write the end marker, sync and close."""
        try:
            self._write(bytes((END,)))
            fileops.sync(self.fd, self.path)
        finally:
            fileops.close(self.fd)


@dataclass
class JournalReadResult:
    """What reading a journal found besides its transactions."""

    path: Path
    serde_version: int = 0
    transactions: int = 0
    clean_end: bool = False
    torn_at: int | None = None
    skipped_corruption_at: int | None = None
    max_txn_id: int = -1


def _rest_is_zero(handle, chunk: int = 1 << 20) -> bool:
    while True:
        data = handle.read(chunk)
        if not data:
            return True
        if not is_all_zero(data):
            return False


def read_journal(
    path: Path, result: JournalReadResult, *, skip_corruption: bool = False
) -> Iterator[tuple[int, list[Any]]]:
    """Yield ``(transaction id, wire records)`` for each whole transaction of the journal.

    ``result`` is filled in as reading goes. A torn tail ends the iteration with a warning;
    corruption raises :class:`JournalCorruptionError` unless ``skip_corruption`` is set, in which
    case the rest of the journal is discarded with an error in the log.
    """
    with open(path, "rb", buffering=1 << 20) as handle:
        head = handle.read(len(MAGIC) + _U32.size)
        if len(head) < len(MAGIC) + _U32.size or not head.startswith(MAGIC):
            if is_all_zero(head) and _rest_is_zero(handle):
                result.torn_at = 0
                log.warning("journal %s has no complete header (empty or NUL bytes); ignoring it", path)
                return
            raise JournalCorruptionError(path, 0, "not a Flowsite journal header")
        (header_length,) = _U32.unpack_from(head, len(MAGIC))
        header_bytes = handle.read(header_length)
        if len(header_bytes) < header_length:
            result.torn_at = 0
            log.warning("journal %s ends inside its header; ignoring it", path)
            return
        header = msgpack.unpackb(header_bytes)
        result.serde_version = header["serde_version"]
        offset = len(head) + header_length
        while True:
            frame = handle.read(_FRAME.size)
            if not frame:
                return
            marker = frame[0]
            if marker == END:
                result.clean_end = True
                return
            if marker == TRANSACTION and len(frame) == _FRAME.size:
                _, txn_id, length, crc = _FRAME.unpack(frame)
                payload = handle.read(length)
                if len(payload) < length:
                    _torn(result, path, offset, "the last transaction is incomplete")
                    return
                if zlib.crc32(payload, zlib.crc32(_ID.pack(txn_id))) != crc:
                    if _ends_in_unwritten_pages(payload) and _rest_is_zero(handle):
                        _torn(result, path, offset, "the last transaction was never fully written")
                        return
                    _corrupt(result, path, offset, f"checksum mismatch in transaction {txn_id}", skip_corruption)
                    return
                result.transactions += 1
                result.max_txn_id = max(result.max_txn_id, txn_id)
                yield txn_id, msgpack.unpackb(payload, use_list=True, strict_map_key=False)
                offset += _FRAME.size + length
                continue
            if marker == TRANSACTION:
                _torn(result, path, offset, "the last transaction header is incomplete")
                return
            handle.seek(offset)
            if _rest_is_zero(handle):
                _torn(result, path, offset, "only NUL bytes follow")
                return
            _corrupt(result, path, offset, f"unexpected marker byte 0x{marker:02x}", skip_corruption)
            return


def _ends_in_unwritten_pages(payload: bytes) -> bool:
    # The last transaction of a file whose payload ends in a long run of NUL bytes is one whose
    # later pages never reached the disk before a power loss: a torn tail, not corruption.
    # Eight NULs: no valid record ends that way in practice (msgpack writes a 0 as one byte).
    stripped = payload.rstrip(b"\x00")
    return len(payload) - len(stripped) >= 8


def _torn(result: JournalReadResult, path: Path, offset: int, reason: str) -> None:
    result.torn_at = offset
    log.warning(
        "journal %s has a torn tail at byte offset %d (%s): discarding it; this is what a crash "
        "during a write leaves, and no committed transaction is lost",
        path,
        offset,
        reason,
    )


def _corrupt(result: JournalReadResult, path: Path, offset: int, reason: str, skip: bool) -> None:
    error = JournalCorruptionError(path, offset, reason)
    if not skip:
        raise error
    result.skipped_corruption_at = offset
    log.error("%s -- skipping the rest of this journal as the operator asked", error)
