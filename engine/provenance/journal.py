"""Rolling journal files: the write path of the provenance repository.

A *journal set* is ``journals/<first_id>.journal.<i>`` for ``i < journal_count``, where
``first_id`` is the first event id the set may hold. Each writer thread appends to its own file
of the current set (threads share files once there are more threads than files), so that
several threads append at once. A file starts with an 8-byte magic; each batch is one frame
(see ``frames``) whose payload is the batch's record (``codec.encode_record``): the bounds of
its times and the stored bytes of its ``count`` events, whose ids are ``first_event_id ..``.
Their index fragments are not journaled: the set keeps them in memory for the rollover, and
recovery makes them again from the events. Frames are written with ``os.write`` on an
``O_APPEND`` descriptor, so once ``register_events`` returns the batch is in the kernel and
survives the death of the process; ``fsync`` (``always_sync``) is needed only to survive a
power loss. A write that fails is cut back, so a file never holds half a frame before a whole
one.

Reading tells a torn tail from damage. Only the end of a file may be torn: a frame cut short,
or NUL bytes to the end; it is dropped with a warning. A bad frame with a valid frame after it
(or a whole frame whose checksum fails) is damage: it is reported (:class:`JournalDamage`),
and reading resynchronises on the next frame whose header and CRC check out, so every event
after it is kept.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple, Sequence

import msgpack

from engine import fileops
from engine.fileops import is_all_zero
from engine.provenance import codec, frames
from engine.provenance.frames import BadFrame, Frame, encode as encode_frame

__all__ = [
    "Held", "Journal", "JournalSet", "JournalFrame", "JournalDamage", "JournalContents", "encode_frame", "read_journal",
    "list_journal_sets", "MAGIC", "FRAME_OVERHEAD", "Settle",
]

log = logging.getLogger(__name__)

MAGIC = b"FSPJRN4\n"
# Version 3 frames hold ``[events, fragments, min_time, max_time]``: each event's stored bytes
# and its index fragment. Versions 1 and 2 are laid out alike with fragments of an older layout
# (version 2: keys of the text as written, not lower-cased); their frames are read with
# ``fragments`` None, for the caller to make again from the events, as for version 4.
_V3_MAGIC = b"FSPJRN3\n"
_LEGACY_MAGICS = (b"FSPJRN1\n", b"FSPJRN2\n")
FRAME_OVERHEAD = frames.OVERHEAD
_NAME = re.compile(r"^(\d+)\.journal\.(\d+)$")


class JournalFrame(NamedTuple):
    """One batch of a journal: ids ``first_id .. first_id + len(events) - 1``; ``fragments`` is
    None when read from a file that does not hold them."""

    first_id: int
    events: Sequence[bytes]
    fragments: Sequence[str] | None
    min_time: int
    max_time: int


Settle = Callable[[], None]


class Held(NamedTuple):
    """A batch its journal refused (see ``backlog``): the frame, its encoded bytes, and what to
    call once it is in a journal or a shard (None: nothing)."""

    frame: JournalFrame
    data: bytes
    settle: Settle | None


class Journal:
    """One append-only journal file; ``lock`` serialises the writers of this file."""

    def __init__(self, path: Path, generation: JournalSet, *, always_sync: bool) -> None:
        self.path = path
        self.generation = generation
        self.lock = threading.Lock()
        self.closed = False
        #: Set when a failed write could not be cut back: nothing more is appended after it.
        self.broken = False
        self._always_sync = always_sync
        self._fd: int | None = None
        self._size = 0

    @property
    def created(self) -> bool:
        """Whether the file exists: it is made by the first append."""
        return self._fd is not None

    def append(self, frame: bytes) -> None:
        """Append ``frame``; the caller holds ``lock``. On failure the file is cut back and the
        ``OSError`` raised."""
        if self.broken:
            raise OSError(errno.EIO, "an earlier failed write could not be cut back", str(self.path))
        if self._fd is None:
            self._fd = fileops.open_fd(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            self._size = os.fstat(self._fd).st_size
        start = self._size
        try:
            # The magic goes with the first frame: a failed first write leaves an empty file.
            self._write_all(MAGIC + frame if start == 0 else frame)
            if self._always_sync:
                fileops.sync(self._fd, self.path)
        except OSError:
            try:
                fileops.truncate(self._fd, start, self.path)
            except OSError:
                self.broken = True
            else:
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

    ``frames`` keeps every batch registered in this set, so a rollover of it needs no reading
    back; only recovery reads the files. ``backlog`` holds the encoded frames whose append
    failed (they are in ``frames`` too): a later append to the set writes them, else the
    rollover stores them from memory. A file is created by its first append, and a writer
    thread keeps to one file of the set: the background rollover then opens, closes and deletes
    one file per writer thread, not ``count``. Each of those calls releases the GIL, and taking
    it back from busy writer threads can take a whole switch interval.
    """

    def __init__(self, directory: Path, first_id: int, count: int, *, always_sync: bool) -> None:
        self.first_id = first_id
        self.events = 0
        self.bytes = 0
        self.frames: list[JournalFrame] = []
        self.backlog: list[Held] = []
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


class JournalDamage(NamedTuple):
    """A damaged place in a journal: what was found at ``offset`` and, when the frame's header
    can be trusted (its length leads exactly to the next valid frame or the end), its ids."""

    offset: int
    found: str
    lost: range | None


@dataclass
class JournalContents:
    """What :func:`read_journal` found: the valid frames, the damage, and where a torn tail began."""

    frames: list[JournalFrame] = field(default_factory=list)
    damage: list[JournalDamage] = field(default_factory=list)
    torn_at: int | None = None


def read_journal(path: Path) -> JournalContents:
    """The frames of one journal file, resynchronising after damage and dropping a torn tail."""
    data = path.read_bytes()
    contents = JournalContents()
    head = data[: len(MAGIC)]
    version = _VERSIONS.get(head)
    if version is None:
        if is_all_zero(data) or MAGIC.startswith(data):
            if data:
                contents.torn_at = 0
                log.warning("provenance journal %s has no complete header (%d bytes); ignoring it", path, len(data))
            return contents
        contents.damage.append(JournalDamage(0, "not a provenance journal header", None))
        version = 0  # unknown: each frame is tried as a record, then in the older layout
    offset = len(MAGIC)
    while offset < len(data):
        found = frames.parse(data, offset)
        if isinstance(found, Frame):
            frame = _decode(found, version)
            if frame is not None:
                contents.frames.append(frame)
                offset = found.end
                continue
            found = BadFrame(offset, "undecodable payload", False, found.first_id, found.count, found.end)
        following = None if found.reason == "only NUL bytes follow" else frames.resync(data, found)
        while following is not None and _decode(following, version) is None:
            following = frames.find_next(data, following.offset + 1)
        if following is None and found.torn:
            contents.torn_at = offset
            log.warning("dropping torn tail of provenance journal %s at offset %d (%d bytes: %s)",
                        path, offset, len(data) - offset, found.reason)
            break
        resume = following.offset if following is not None else len(data)
        trusted = found.first_id is not None and found.end == resume
        lost = range(found.first_id, found.first_id + found.count) if trusted else None
        contents.damage.append(JournalDamage(offset, found.reason, lost))
        offset = resume
    return contents


_VERSIONS = {MAGIC: 4, _V3_MAGIC: 3, **{magic: 1 for magic in _LEGACY_MAGICS}}


def _decode(frame: Frame, version: int) -> JournalFrame | None:
    if version in (0, 4):
        try:
            min_time, max_time, blobs = codec.decode_record(frame.payload)
        except (ValueError, TypeError, msgpack.UnpackException):
            blobs = None
        if blobs is not None and len(blobs) == frame.count:
            return JournalFrame(frame.first_id, blobs, None, min_time, max_time)
        if version == 4:
            return None
    try:
        events, fragments, min_time, max_time = msgpack.unpackb(frame.payload, use_list=False)
        if len(events) != frame.count or len(fragments) != frame.count:
            return None
    except (ValueError, TypeError, msgpack.UnpackException):
        return None
    return JournalFrame(frame.first_id, events, fragments if version == 3 else None, min_time, max_time)
