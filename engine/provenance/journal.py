"""Rolling journal files: the write path of the provenance repository.

A *journal set* is ``journals/<first_id>.journal.<i>`` for ``i < journal_count``, where
``first_id`` is the first event id the set may hold. Each writer thread appends to its own file
of the current set (threads share files once there are more threads than files), so that
several threads append at once. A file starts with an 8-byte magic;
each batch is one frame::

    payload_length u32 | crc32 u32 | first_event_id u64 | count u32 | payload

``payload`` is the msgpack array ``[events, fragments, min_time, max_time]``: the ``count``
encoded events (see ``codec``) whose ids are ``first_event_id ..``, their index fragments and
the bounds of their times; the CRC covers the id, the count and the payload. Frames are written
with ``os.write`` on an ``O_APPEND`` descriptor, so once ``register_events`` returns the batch is
in the kernel and survives the death of the process; ``fsync`` (``always_sync``) is needed
only to survive a power loss. A torn tail (a frame cut short, a bad CRC, or the NUL bytes a
power loss leaves) is dropped on reading, with a warning naming the file and the offset.
"""

from __future__ import annotations

import logging
import os
import re
import struct
import threading
import zlib
from pathlib import Path
from typing import Iterator, NamedTuple, Sequence

import msgpack

from engine import fileops
from engine.fileops import is_all_zero

__all__ = [
    "Journal", "JournalSet", "JournalFrame", "encode_frame", "read_journal", "list_journal_sets", "MAGIC",
    "FRAME_OVERHEAD",
]

log = logging.getLogger(__name__)

MAGIC = b"FSPJRN2\n"
# Files of version 1 hold index fragments of an older layout; their frames are read with
# ``fragments`` None, for the caller to make again from the events.
_MAGIC_V1 = b"FSPJRN1\n"
_FRAME = struct.Struct("<IIQI")
FRAME_OVERHEAD = _FRAME.size
_CHECKED = struct.Struct("<QI")
_NAME = re.compile(r"^(\d+)\.journal\.(\d+)$")


class JournalFrame(NamedTuple):
    """One batch of a journal: ids ``first_id .. first_id + len(events) - 1``."""

    first_id: int
    events: Sequence[bytes]
    fragments: Sequence[str] | None
    min_time: int
    max_time: int


def encode_frame(first_id: int, count: int, payload: bytes) -> bytes:
    """The bytes of one frame holding the already packed ``payload``."""
    checked = _CHECKED.pack(first_id, count)
    crc = zlib.crc32(payload, zlib.crc32(checked))
    return _FRAME.pack(len(payload), crc, first_id, count) + payload


class Journal:
    """One append-only journal file; ``lock`` serialises the writers of this file."""

    def __init__(self, path: Path, generation: JournalSet, *, always_sync: bool) -> None:
        self.path = path
        self.generation = generation
        self.lock = threading.Lock()
        self.closed = False
        self._always_sync = always_sync
        self._fd: int | None = None
        self._size = 0

    @property
    def created(self) -> bool:
        """Whether the file exists: it is made by the first append."""
        return self._fd is not None

    def append(self, frame: bytes) -> None:
        """Append ``frame``; the caller holds ``lock``. On failure the file is cut back."""
        if self._fd is None:
            self._fd = fileops.open_fd(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            self._size = os.fstat(self._fd).st_size
            if self._size == 0:
                self._write_all(MAGIC)
        start = self._size
        try:
            self._write_all(frame)
            if self._always_sync:
                fileops.sync(self._fd, self.path)
        except OSError:
            # A partial frame would hide every later frame of this file from recovery.
            fileops.truncate(self._fd, start, self.path)
            self._size = start
            raise

    def close(self) -> None:
        """Close the file; the caller holds ``lock``."""
        if not self.closed:
            self.closed = True
            if self._fd is not None:
                os.close(self._fd)

    def _write_all(self, data: bytes) -> None:
        try:
            fileops.write_all(self._fd, data, self.path)
        except OSError as error:
            self._size += getattr(error, "written", 0)
            raise
        self._size += len(data)


class JournalSet:
    """The journals written between two rollovers; ids in it are ``>= first_id``.

    ``frames`` keeps what was appended, so a rollover of this set needs no reading back; only
    recovery reads the files. A file is created by its first append, and a writer thread keeps
    to one file of the set: the background rollover then opens, closes and deletes one file
    per writer thread, not ``count``. Each of those calls releases the GIL, and taking it back
    from busy writer threads can take a whole switch interval.
    """

    def __init__(self, directory: Path, first_id: int, count: int, *, always_sync: bool) -> None:
        self.first_id = first_id
        self.events = 0
        self.bytes = 0
        self.frames: list[JournalFrame] = []
        self.journals = [
            Journal(directory / f"{first_id}.journal.{i}", self, always_sync=always_sync)
            for i in range(count)
        ]

    @property
    def paths(self) -> list[Path]:
        """The files of this set created so far."""
        return [journal.path for journal in self.journals if journal.created]

    def close(self) -> None:
        """Wait for the writers of each file, then close it."""
        for journal in self.journals:
            with journal.lock:
                journal.close()


def list_journal_sets(directory: Path) -> list[tuple[int, list[Path]]]:
    """Journal files left in ``directory``, grouped by set, oldest set first."""
    sets: dict[int, list[Path]] = {}
    for entry in os.scandir(directory):
        match = _NAME.match(entry.name)
        if match:
            sets.setdefault(int(match.group(1)), []).append(Path(entry.path))
    return sorted(sets.items())


def read_journal(path: Path) -> Iterator[JournalFrame]:
    """The frames of one journal file, dropping a torn tail with a warning."""
    data = path.read_bytes()
    legacy = data[: len(MAGIC)] == _MAGIC_V1
    if data[: len(MAGIC)] != MAGIC and not legacy:
        if data and not is_all_zero(data):
            log.warning("provenance journal %s has no valid header; dropping its %d bytes at offset 0",
                        path, len(data))
        return
    offset = len(MAGIC)
    end = len(data)
    while offset < end:
        reason = None
        if end - offset < _FRAME.size:
            reason = "truncated frame header"
        else:
            length, crc, first_id, count = _FRAME.unpack_from(data, offset)
            body = offset + _FRAME.size
            if body + length > end:
                reason = "truncated frame"
            else:
                payload = data[body : body + length]
                expected = zlib.crc32(payload, zlib.crc32(_CHECKED.pack(first_id, count)))
                if crc != expected or length == 0:
                    reason = "checksum mismatch"
        if reason is not None:
            tail = data[offset:]
            kind = "NUL bytes" if is_all_zero(tail) else reason
            log.warning("dropping torn tail of provenance journal %s at offset %d (%d bytes: %s)",
                        path, offset, end - offset, kind)
            return
        events, fragments, min_time, max_time = msgpack.unpackb(payload, use_list=False)
        if len(events) != count or len(fragments) != count:
            log.warning("dropping torn tail of provenance journal %s at offset %d (%d bytes: %s)",
                        path, offset, end - offset, "event count mismatch")
            return
        yield JournalFrame(first_id, events, None if legacy else fragments, min_time, max_time)
        offset = body + length
