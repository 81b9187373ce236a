"""Journal files: an append-only sequence of framed transactions.

Layout of ``<first transaction id>.journal`` (``<id>-<n>.journal`` when a journal that took no
transaction already has that name)::

    header       b"FSWALJ2\\n", u32 length, u32 CRC32 of the header bytes,
                 msgpack {"serde", "serde_version", "first_txn",
                          "previous": [name, last transaction id, length] or nil}
    transaction  0x40, u64 transaction id, u32 payload length,
                 u32 CRC32 of those 13 bytes, u32 CRC32 of the payload, payload
    ...
    end          0x7F, u64 last transaction id, u32 CRC32 of those 9 bytes (written when the
                 journal is closed cleanly; nothing may follow it)

Transaction ids are consecutive, from ``first_txn`` on and across journals. ``previous`` is
where the journal before this one ends: its name, its last transaction and the length of its
committed bytes (bytes after that length were written by a commit that failed and are
ignored). It is what lets recovery tell the unwritten end of the newest journal — a *torn
tail*, what a crash leaves — from damage: every other journal must end exactly where its
successor says, and a journal that ends early, a frame whose header or payload fails its
checksum with data after it, a false end marker or a gap in transaction ids is damage.

This module only writes and reads; what to make of what it reads is ``engine.wal.recovery``'s.
Version 1 journals (``FSWALJ1``: frames ``0x40, id, length, CRC32 of id and payload``, no
header checksum, no predecessor) written by earlier releases are still read.
"""

from __future__ import annotations

import logging
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterator, NamedTuple

import msgpack

from engine import fileops
from engine.checksums import crc32
from engine.fileops import is_all_zero

__all__ = [
    "JournalEnd",
    "JournalScan",
    "JournalWriter",
    "encode_transaction",
    "journal_name",
    "list_journals",
    "parse_journal_name",
    "read_transactions",
    "scan_journal",
]

log = logging.getLogger(__name__)

MAGIC = b"FSWALJ2\n"
MAGIC_V1 = b"FSWALJ1\n"
TRANSACTION = 0x40
END = 0x7F
_HEAD = struct.Struct(">BQI")  # marker, transaction id, payload length
_CRCS = struct.Struct(">II")  # CRC32 of the head, CRC32 of the payload
FRAME_HEADER = _HEAD.size + _CRCS.size
_END = struct.Struct(">BqI")  # marker, last transaction id (-1: none yet), CRC32 of the first 9 bytes
_END_BODY = struct.Struct(">Bq")
END_MARKER_SIZE = _END.size
_U32 = struct.Struct(">I")
_V1_FRAME = struct.Struct(">BQII")  # marker, transaction id, payload length, CRC32 of id and payload
_V1_ID = struct.Struct(">Q")
_TORN_NULS = 8


class JournalEnd(NamedTuple):
    """Where a journal ends: its name, its last transaction id and its committed length."""

    name: str
    last_txn: int
    length: int


def encode_transaction(txn_id: int, payload: bytes) -> bytes:
    """The frame of one transaction."""
    head = _HEAD.pack(TRANSACTION, txn_id, len(payload))
    return head + _CRCS.pack(crc32(head), crc32(payload)) + payload


def _encode_end(last_txn: int) -> bytes:
    body = _END_BODY.pack(END, last_txn)
    return body + _U32.pack(crc32(body))


def _encode_header(serde_name: str, serde_version: int, first_txn: int, previous: JournalEnd | None) -> bytes:
    header = msgpack.packb({
        "serde": serde_name, "serde_version": serde_version, "first_txn": first_txn,
        "previous": list(previous) if previous is not None else None,
    })
    return MAGIC + _U32.pack(len(header)) + _U32.pack(crc32(header)) + header


def journal_name(first_txn: int, sequence: int = 0) -> str:
    """The file name of a journal starting at ``first_txn`` (``sequence`` tells apart journals
    that share a first transaction because the earlier one never took any)."""
    return f"{first_txn}.journal" if sequence == 0 else f"{first_txn}-{sequence}.journal"


def parse_journal_name(name: str) -> tuple[int, int] | None:
    """(first transaction id, sequence) of a journal file name, or None for another file."""
    stem, _, suffix = name.partition(".")
    first, dash, sequence = stem.partition("-")
    if suffix == "journal" and first.isdigit() and (not dash or sequence.isdigit()):
        return int(first), int(sequence or 0)
    return None


def list_journals(directory: Path) -> list[tuple[int, Path]]:
    """The journals in ``directory`` as (first transaction id, path), oldest first."""
    found = []
    if directory.is_dir():
        for entry in directory.iterdir():
            parsed = parse_journal_name(entry.name)
            if parsed is not None:
                found.append((*parsed, entry))
    return [(first, path) for first, _, path in sorted(found)]


class JournalWriter:
    """Appends framed transactions to a new journal file with unbuffered writes.

    The header is written and synced when the journal is created, so a journal exists whole
    before any transaction relies on it. ``length`` and ``last_txn`` describe what was appended
    successfully; after a failed append, :meth:`cut_back` removes the partial bytes, and a
    writer that cannot be cut back is ``broken`` (the log moves on to a new journal whose
    header records where this one's committed bytes end).
    """

    def __init__(self, path: Path, serde_name: str, serde_version: int, first_txn: int,
                 previous: JournalEnd | None, *, dsync: bool = False) -> None:
        self.path = Path(path)
        self.dsync = dsync
        self.first_txn = first_txn
        self.last_txn = first_txn - 1
        self.broken = False
        self.transactions = 0
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | (os.O_DSYNC if dsync else 0)
        self.fd = fileops.open_fd(self.path, flags)
        header = _encode_header(serde_name, serde_version, first_txn, previous)
        try:
            fileops.write_all(self.fd, header, self.path)
            fileops.sync(self.fd, self.path)
            fileops.sync_directory(self.path.parent)
        except BaseException:
            fileops.close(self.fd)
            try:
                os.unlink(self.path)
            except OSError:
                pass
            raise
        self.length = len(header)

    @property
    def name(self) -> str:
        """The file name."""
        return self.path.name

    def end(self) -> JournalEnd:
        """Where this journal's committed bytes end now."""
        return JournalEnd(self.name, self.last_txn, self.length)

    def append(self, data: bytes, last_txn: int, count: int) -> None:
        """Append ``count`` framed transactions ending with ``last_txn``; on failure the file
        may hold part of ``data`` past ``length`` (see :meth:`cut_back`)."""
        fileops.write_all(self.fd, data, self.path)
        self.length += len(data)
        self.last_txn = last_txn
        self.transactions += count

    def sync(self) -> None:
        """Make everything appended so far durable (a no-op for an ``O_DSYNC`` journal)."""
        if not self.dsync:
            fileops.sync(self.fd, self.path, data_only=True)

    def cut_back(self) -> bool:
        """Remove whatever follows the committed bytes and sync; False (and ``broken``) when the
        file cannot be cut back."""
        try:
            fileops.truncate(self.fd, self.length, self.path)
            fileops.sync(self.fd, self.path)
        except OSError as error:
            log.error("could not cut journal %s back to its %d committed bytes after a failed write (%s); "
                      "the next commit opens a new journal", self.path, self.length, error)
            self.broken = True
            return False
        return True

    def close(self, *, end_marker: bool = True) -> None:
        """Write the end marker (unless broken or told not to), sync and close; a failure to
        write the marker is logged, not raised: the next journal records where this one ends."""
        try:
            if end_marker and not self.broken:
                fileops.write_all(self.fd, _encode_end(self.last_txn), self.path)
                fileops.sync(self.fd, self.path)
        except OSError as error:
            log.warning("could not write the end marker of journal %s (%s); its %d committed bytes are "
                        "recorded by the next journal", self.path, error, self.length)
        finally:
            fileops.close(self.fd)


@dataclass
class JournalProblem:
    """Where reading a journal stopped early: ``torn`` when what follows looks like the
    unwritten end a crash leaves (a cut frame or NUL bytes to the end), else damage."""

    offset: int
    reason: str
    torn: bool


@dataclass
class JournalScan:
    """What a structural read of a journal found (payloads checked, not decoded).

    ``header_problem`` is set when the header is unreadable (``header_torn`` when the file is
    only a cut or NUL-filled header: a journal created by a crash-interrupted open). Frames
    are read from ``header_end`` to ``valid_end``: ``transactions`` of them, ids
    ``first_frame_txn`` to ``last_txn``. ``problem`` says why reading stopped before the end
    of the file, if it did; ``end_marker`` tells a cleanly closed journal.
    """

    path: Path
    version: int = 2
    serde_version: int = 0
    first_txn: int | None = None
    previous: JournalEnd | None = None
    header_end: int = 0
    header_problem: str | None = None
    header_torn: bool = False
    transactions: int = 0
    first_frame_txn: int | None = None
    last_txn: int | None = None
    valid_end: int = 0
    size: int = 0
    end_marker: bool = False
    problem: JournalProblem | None = None
    salvaged: list[tuple[int, int, int | None, int | None]] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The file name."""
        return self.path.name


def scan_journal(path: Path, *, stop_at: int | None = None, resync: bool = False) -> JournalScan:
    """Read a journal's header and frames, checking every checksum, decoding nothing.

    Reading stops at the first problem, or at byte ``stop_at`` (the length its successor
    recorded: what follows was never committed). With ``resync``, reading goes on after a
    damaged frame from the next offset where a whole frame checks out; each run of frames
    read after a problem is listed in ``salvaged`` as (start, end, first txn, last txn).
    """
    scan = JournalScan(Path(path))
    scan.size = os.path.getsize(path)
    limit = scan.size if stop_at is None else min(stop_at, scan.size)
    with open(path, "rb", buffering=1 << 20) as handle:
        if not _read_header(handle, scan):
            return scan
        offset = scan.valid_end = scan.header_end
        if stop_at is not None and stop_at < scan.header_end:
            scan.problem = JournalProblem(stop_at, "the length recorded by the next journal ends inside the header",
                                          torn=False)
            return scan
        expected = scan.first_txn
        read_frame = _read_frame if scan.version == 2 else _read_frame_v1
        while offset < limit:
            frame = read_frame(handle, offset)
            if isinstance(frame, _EndMarker):
                problem = _check_end_marker(scan, handle, offset, frame, stop_at)
                if problem is None:
                    scan.end_marker = True
                    return scan
                frame = problem
            elif not isinstance(frame, JournalProblem) and frame[1] > limit:
                frame = JournalProblem(offset, f"the length {limit} recorded by the next journal falls inside "
                                               f"transaction {frame[0]}", torn=False)
            elif not isinstance(frame, JournalProblem) and expected is not None and frame[0] != expected:
                frame = JournalProblem(offset, f"transaction {frame[0]} where {expected} was expected", torn=False)
            if isinstance(frame, JournalProblem):
                if scan.problem is None:
                    scan.problem = frame
                if not resync or frame.torn:
                    return scan
                found = _resync(handle, offset + 1, limit, read_frame)
                if found is None:
                    return scan
                offset, expected = found, None
                scan.salvaged.append((found, found, None, None))
                continue
            txn_id, end = frame
            if scan.salvaged:
                start, _, first, _ = scan.salvaged[-1]
                scan.salvaged[-1] = (start, end, txn_id if first is None else first, txn_id)
            else:
                scan.valid_end = end
                scan.transactions += 1
                if scan.first_frame_txn is None:
                    scan.first_frame_txn = txn_id
                scan.last_txn = txn_id
            expected = txn_id + 1 if scan.version == 2 else None
            offset = end
    return scan


class _EndMarker(NamedTuple):
    last_txn: int | None
    size: int


def _check_end_marker(scan: JournalScan, handle: BinaryIO, offset: int, marker: _EndMarker,
                      stop_at: int | None) -> JournalProblem | None:
    if os.fstat(handle.fileno()).st_size != offset + marker.size:
        return JournalProblem(offset, "bytes follow the end marker", torn=False)
    if stop_at is not None and stop_at != offset:
        return JournalProblem(offset, f"the journal ends at byte {offset}, before the length {stop_at} "
                                      "recorded by the next journal", torn=False)
    last = scan.last_txn if scan.last_txn is not None else (scan.first_txn or 0) - 1
    if marker.last_txn is not None and marker.last_txn != last:
        return JournalProblem(offset, f"the end marker names transaction {marker.last_txn}, the last one read "
                                      f"is {last}", torn=False)
    return None


def _read_header(handle: BinaryIO, scan: JournalScan) -> bool:
    head = handle.read(len(MAGIC) + _U32.size)
    if head.startswith(MAGIC_V1) and len(head) == len(MAGIC) + _U32.size:
        (length,) = _U32.unpack_from(head, len(MAGIC))
        body = handle.read(length)
        try:
            header = msgpack.unpackb(body) if len(body) == length else None
        except (ValueError, msgpack.UnpackException):
            header = None
        if not isinstance(header, dict):
            scan.header_problem = "the version 1 header is cut short or unreadable"
            scan.header_torn = len(body) < length
            return False
        scan.version, scan.serde_version = 1, header.get("serde_version", 0)
        scan.header_end = len(head) + length
        return True
    if not head.startswith(MAGIC) or len(head) < len(MAGIC) + _U32.size:
        scan.header_torn = MAGIC.startswith(head[: len(MAGIC)]) or (is_all_zero(head) and _zero_to_end(handle))
        scan.header_problem = "the file is empty or its header was never written" if scan.header_torn \
            else "not a Flowsite journal header"
        return False
    (length,) = _U32.unpack_from(head, len(MAGIC))
    rest = handle.read(_U32.size + length)
    if len(rest) < _U32.size + length:
        scan.header_torn = True
        scan.header_problem = "the header is cut short"
        return False
    (crc,) = _U32.unpack_from(rest)
    body = rest[_U32.size:]
    if crc32(body) != crc:
        scan.header_torn = is_all_zero(body[-_TORN_NULS:]) and _zero_to_end(handle)
        scan.header_problem = "the header fails its checksum"
        return False
    header = msgpack.unpackb(body)
    scan.serde_version = header["serde_version"]
    scan.first_txn = header["first_txn"]
    previous = header.get("previous")
    scan.previous = JournalEnd(*previous) if previous else None
    scan.header_end = len(head) + _U32.size + length
    return True


def _read_frame(handle: BinaryIO, offset: int) -> tuple[int, int] | JournalProblem:
    """The frame at ``offset`` as (transaction id, end offset), or why it cannot be read."""
    handle.seek(offset)
    head = handle.read(FRAME_HEADER)
    if not head:
        return JournalProblem(offset, "end of file", torn=True)
    if head[0] == END:
        if len(head) >= _END.size:
            _, last, crc = _END.unpack_from(head)
            if crc32(head[: _END_BODY.size]) == crc:
                return _EndMarker(last, _END.size)
        return JournalProblem(offset, "an end marker that fails its checksum", torn=_torn_here(handle, offset, head))
    if head[0] not in (TRANSACTION, 0):
        return JournalProblem(offset, "unexpected marker byte 0x%02x" % head[0], torn=False)
    if len(head) < FRAME_HEADER:
        return JournalProblem(offset, "the file ends inside a transaction header", torn=_torn_here(handle, offset, head))
    _, txn_id, length = _HEAD.unpack_from(head)
    head_crc, payload_crc = _CRCS.unpack_from(head, _HEAD.size)
    if crc32(head[: _HEAD.size]) != head_crc:
        reason = "NUL bytes where a transaction was expected" if head[0] == 0 else \
            "a transaction header fails its checksum (its length field cannot be trusted)"
        return JournalProblem(offset, reason, torn=_torn_here(handle, offset, head))
    payload = handle.read(length)
    if len(payload) < length:
        return JournalProblem(offset, f"the file ends inside transaction {txn_id}", torn=True)
    if crc32(payload) != payload_crc:
        torn = len(payload) - len(payload.rstrip(b"\0")) >= _TORN_NULS and _zero_to_end(handle)
        return JournalProblem(offset, f"transaction {txn_id} fails its checksum", torn=torn)
    return txn_id, offset + FRAME_HEADER + length


def _read_frame_v1(handle: BinaryIO, offset: int) -> tuple[int, int] | JournalProblem:
    handle.seek(offset)
    head = handle.read(_V1_FRAME.size)
    if not head:
        return JournalProblem(offset, "end of file", torn=True)
    if head[0] == END:
        return _EndMarker(None, 1)
    if head[0] != TRANSACTION:
        return JournalProblem(offset, "unexpected marker byte 0x%02x" % head[0], torn=_torn_here(handle, offset, head))
    if len(head) < _V1_FRAME.size:
        return JournalProblem(offset, "the last transaction's header is cut short", torn=True)
    _, txn_id, length, crc = _V1_FRAME.unpack(head)
    payload = handle.read(length)
    if len(payload) < length:
        return JournalProblem(offset, f"transaction {txn_id} is cut short", torn=True)
    if crc32(payload, crc32(_V1_ID.pack(txn_id))) != crc:
        torn = len(payload) - len(payload.rstrip(b"\0")) >= _TORN_NULS and _zero_to_end(handle)
        return JournalProblem(offset, f"transaction {txn_id} fails its checksum", torn=torn)
    return txn_id, offset + _V1_FRAME.size + length


def _torn_here(handle: BinaryIO, offset: int, head: bytes) -> bool:
    """True when the bytes from ``offset`` are what an interrupted append leaves: NUL bytes to
    the end of the file, or the start of a frame (its marker first) cut off inside its header
    by the end of the file or by NUL bytes that run to the end of the file."""
    handle.seek(offset + len(head))
    if not _zero_to_end(handle):
        return False
    written = len(head.rstrip(b"\0"))
    return written == 0 or (head[0] in (TRANSACTION, END) and written < FRAME_HEADER)


def _zero_to_end(handle: BinaryIO, chunk: int = 1 << 20) -> bool:
    while True:
        data = handle.read(chunk)
        if not data:
            return True
        if not is_all_zero(data):
            return False


def _resync(handle: BinaryIO, start: int, limit: int, read_frame) -> int | None:
    """The next offset at or after ``start`` where a whole frame checks out, or None."""
    marker = bytes((TRANSACTION,))
    position = start
    while position < limit:
        handle.seek(position)
        window = handle.read(1 << 20)
        if not window:
            return None
        index = window.find(marker)
        while index >= 0:
            candidate = position + index
            if not isinstance(read_frame(handle, candidate), JournalProblem):
                return candidate
            index = window.find(marker, index + 1)
        position += len(window)
    return None


def read_transactions(scan: JournalScan) -> Iterator[tuple[int, list[Any]]]:
    """Decode the transactions a scan found readable: ``(id, wire records)``, in file order."""
    runs = [(scan.header_end, scan.valid_end)] + [(start, end) for start, end, first, _ in scan.salvaged if first is not None]
    head_size = FRAME_HEADER if scan.version == 2 else _V1_FRAME.size
    with open(scan.path, "rb", buffering=1 << 20) as handle:
        for start, end in runs:
            handle.seek(start)
            offset = start
            while offset < end:
                head = handle.read(head_size)
                if scan.version == 2:
                    _, txn_id, length = _HEAD.unpack_from(head)
                else:
                    _, txn_id, length, _ = _V1_FRAME.unpack(head)
                payload = handle.read(length)
                yield txn_id, msgpack.unpackb(payload, use_list=True, strict_map_key=False)
                offset += head_size + length
