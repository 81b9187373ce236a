"""Swap files: FlowFiles of a queue written out of memory, recorded in the write-ahead log.

Layout of ``swap/<millis>-<queue id>-<uuid>[.<partition>].swap`` (format 2)::

    b"FSSWAP2\\n"
    summary  u32 length, u32 CRC32 of the payload, msgpack map {queue, count, bytes, max_id, claims,
             min_queue_date, total_queue_date, order, ready_at}
    chunk    b"FSCK", u32 index, u32 record count, u32 payload length,
             u32 CRC32 of (index, count, length, payload) seeded with the CRC32 of the file's name,
             payload: msgpack array of that many FlowFile wire records
    ...      one chunk per 1,000 FlowFiles at most

``ready_at`` is the earliest end of a penalty (ms) when every FlowFile of the file is
penalized, else 0: a queue does not read the file back before then. Damage costs only the
FlowFiles of the damaged chunk: a reader skips a chunk that fails its checksum and finds the
next one by its marker. The checksum seed keeps a chunk-like byte run inside an attribute from
ever passing for a chunk of this file. Format 1 (``FSSWAP1\\n``, the same summary frame, then
one frame holding every record) is still read.

The partition in a name is the node a load-balanced connection's FlowFiles wait for (escaped so
that it holds no dot); the local partition's files have none. Data that moves to another
partition keeps its file under a new name (:meth:`SwapManager.move`, a SWAP_FILE_RENAMED
record); the chunk checksums are seeded with the name without its partition, so a rename never
breaks them.

A swap file is written to ``.swap.part``, synced and renamed before the SWAP_OUT records reach
the log (with a forced sync), so the log never names a swap file that is not whole; when the
log refuses them, the file is removed again. A ``.swap`` file that the log does not name was
written by a swap-out that never committed: it is ignored and removed at recovery, and its
FlowFiles are still in the log's records.

Damage is contained, never fatal: a logged swap file that is missing or whose summary cannot
be read at recovery gives back what its readable chunks hold; a body found damaged at swap-in
gives back its readable chunks; either way the FlowFiles of the damaged parts are reported lost
(a :class:`~engine.damage.Damage`), their claimants are given up, the file goes to the
quarantine and the log stops naming it. A log update that fails (``OSError``) is no damage:
the file and the log stay as they were and the caller may retry.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import struct
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence
from urllib.parse import quote, unquote

import msgpack

from engine import fileops
from engine.checksums import crc32
from engine.damage import Damage
from engine.flowfile import FlowFile, ResourceClaim
from engine.repository.records import FlowFileRecordSerde, RepositoryRecord
from engine.wal.serde import UpdateType

__all__ = [
    "CHUNK_RECORDS", "SwapContents", "SwapFileError", "SwapManager", "SwapSummary", "parse", "partition_of", "queue_of",
    "ready_at", "swap_name", "with_partition",
]

log = logging.getLogger(__name__)

MAGIC = b"FSSWAP2\n"
MAGIC_V1 = b"FSSWAP1\n"
CHUNK_MARKER = b"FSCK"
#: FlowFiles per chunk at most: what one damaged place can cost.
CHUNK_RECORDS = 1000
_FRAME = struct.Struct(">II")
_CHUNK = struct.Struct(">4sIIII")
_CHUNK_FIELDS = struct.Struct(">III")
_U32 = struct.Struct(">I")
_SUMMARY_AT = len(MAGIC)
_REMEDY = ("The node runs on without these FlowFiles; the damaged file is kept in the quarantine "
           "folder for analysis and can be deleted.")
_serde = FlowFileRecordSerde()


class SwapFileError(Exception):
    """A swap file that is missing, unknown to the log, or damaged."""


@dataclass(frozen=True)
class SwapSummary:
    """What a swap file holds, readable without loading its FlowFiles."""

    queue_id: str
    count: int
    bytes: int
    max_id: int
    claims: dict[ResourceClaim, int]
    min_queue_date: int
    total_queue_date: int
    order: Any = None
    ready_at: int = 0


@dataclass
class SwapContents:
    """What could be read of a swap file: its summary (None when unreadable), the FlowFiles of
    its readable parts, and each damaged place as (byte offset or None, what was found)."""

    summary: SwapSummary | None
    flowfiles: list[FlowFile] = field(default_factory=list)
    damage: list[tuple[int | None, str]] = field(default_factory=list)


def ready_at(flowfiles: Sequence[FlowFile], now: int) -> int:
    """The earliest end of a penalty when every FlowFile is penalized at ``now`` (ms), else 0."""
    earliest = min((f.penalty_expiration for f in flowfiles), default=0)
    return earliest if earliest > now else 0


def _frame(payload: bytes) -> bytes:
    return _FRAME.pack(len(payload), crc32(payload)) + payload


def _chunk(index: int, wires: list[Any], seed: int) -> bytes:
    payload = msgpack.packb(wires)
    fields = _CHUNK_FIELDS.pack(index, len(wires), len(payload))
    return CHUNK_MARKER + fields + _U32.pack(crc32(payload, crc32(fields, seed))) + payload


def _seed(location: str) -> int:
    match = _NAME.fullmatch(location)
    return crc32((match["base"] + ".swap" if match is not None else location).encode())


def _summary_from(raw: dict[str, Any]) -> SwapSummary:
    claims = {ResourceClaim(c, s, i): n for (c, s, i, n) in raw["claims"]}
    return SwapSummary(
        raw["queue"], raw["count"], raw["bytes"], raw["max_id"], claims, raw["min_queue_date"],
        raw["total_queue_date"], raw.get("order"), raw.get("ready_at", 0),
    )


def _read_summary(data: bytes) -> tuple[SwapSummary | None, int | None, str]:
    """The summary frame after the magic: (summary or None, where the frame ends if known, problem)."""
    head = data[_SUMMARY_AT:_SUMMARY_AT + _FRAME.size]
    if len(head) < _FRAME.size:
        return None, None, "the file ends inside the summary's frame header (truncated)"
    length, crc = _FRAME.unpack(head)
    start = _SUMMARY_AT + _FRAME.size
    end = start + length
    if end > len(data):
        return None, None, f"the summary frame claims {length} bytes, past the end of the file (truncated or damaged)"
    payload = data[start:end]
    if crc32(payload) != crc:
        return None, end, "the summary fails its checksum"
    try:
        return _summary_from(msgpack.unpackb(payload, use_list=True, strict_map_key=False)), end, ""
    except Exception as error:
        return None, end, f"the summary cannot be decoded ({error})"


def _chunk_at(data: bytes, pos: int, seed: int) -> tuple[list[FlowFile] | None, int, str]:
    """The chunk starting at ``pos``: (its FlowFiles or None when unreadable, its end, problem)."""
    if data[pos:pos + 4] != CHUNK_MARKER:
        return None, pos, "no chunk starts here"
    if pos + _CHUNK.size > len(data):
        return None, pos, "the file ends inside a chunk header (truncated)"
    _, index, count, length, crc = _CHUNK.unpack_from(data, pos)
    start = pos + _CHUNK.size
    end = start + length
    if end > len(data):
        return None, pos, (f"chunk {index} ({count} FlowFiles) claims {length} bytes, past the end of the file "
                           "(truncated or damaged)")
    payload = data[start:end]
    if crc32(payload, crc32(data[pos + 4:pos + 16], seed)) != crc:
        return None, pos, f"chunk {index} ({count} FlowFiles) fails its checksum"
    try:
        wires = msgpack.unpackb(payload, use_list=True, strict_map_key=False)
        if len(wires) != count:
            raise ValueError(f"{len(wires)} records instead of {count}")
        return [_serde.from_wire(wire, _serde.version).flowfile for wire in wires], end, ""
    except Exception as error:
        return None, pos, f"chunk {index} cannot be decoded ({error})"


def _read_chunks(data: bytes, pos: int, seed: int, damage: list[tuple[int | None, str]], *,
                 report_leading: bool) -> list[FlowFile]:
    """Every readable chunk from ``pos`` on; a damaged stretch is skipped to the next chunk marker."""
    flowfiles: list[FlowFile] = []
    bad: tuple[int, str] | None = None
    while pos < len(data):
        found, end, problem = _chunk_at(data, pos, seed)
        if found is None:
            if bad is None:
                bad = (pos, problem)
            following = data.find(CHUNK_MARKER, pos + 1)
            pos = following if following >= 0 else len(data)
            continue
        if bad is not None and (report_leading or flowfiles):
            damage.append(bad)
        bad = None
        flowfiles.extend(found)
        pos = end
    if bad is not None and (report_leading or flowfiles):
        damage.append(bad)
    return flowfiles


def _read_v1_body(data: bytes, pos: int | None, damage: list[tuple[int | None, str]]) -> list[FlowFile]:
    if pos is None:
        return []
    head = data[pos:pos + _FRAME.size]
    if len(head) < _FRAME.size:
        damage.append((pos, "the file ends before its FlowFile records (truncated)"))
        return []
    length, crc = _FRAME.unpack(head)
    payload = data[pos + _FRAME.size:pos + _FRAME.size + length]
    if len(payload) < length:
        damage.append((pos, "the FlowFile records run past the end of the file (truncated)"))
    elif crc32(payload) != crc:
        damage.append((pos, "the FlowFile records fail their checksum"))
    else:
        try:
            wires = msgpack.unpackb(payload, use_list=True, strict_map_key=False)
            return [_serde.from_wire(wire, _serde.version).flowfile for wire in wires]
        except Exception as error:
            damage.append((pos, f"the FlowFile records cannot be decoded ({error})"))
    return []


def parse(data: bytes, location: str) -> SwapContents:
    """Read what can be read of the bytes of swap file ``location`` (format 1 or 2)."""
    damage: list[tuple[int | None, str]] = []
    magic = data[:len(MAGIC)]
    if magic not in (MAGIC, MAGIC_V1):
        damage.append((0, f"no swap file header (found {magic!r})"))
    summary, end, problem = _read_summary(data)
    if problem:
        damage.append((_SUMMARY_AT, problem))
    if magic == MAGIC_V1:
        flowfiles = _read_v1_body(data, end, damage)
    else:
        start = end if summary is not None else _SUMMARY_AT
        flowfiles = _read_chunks(data, start, _seed(location), damage, report_leading=summary is not None)
    if summary is not None and not damage and len(flowfiles) != summary.count:
        damage.append((len(data), f"the file ends after {len(flowfiles)} of its {summary.count} FlowFiles "
                                  "(truncated at a chunk boundary)"))
    return SwapContents(summary, flowfiles, damage)


_NAME = re.compile(r"(?P<base>\d+-(?P<queue>.*)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
                   r"(?:\.(?P<partition>[^.]+))?\.swap")


def swap_name(queue_id: str, partition: str | None = None, millis: int | None = None) -> str:
    """A new swap file name: ``<millis>-<queue id>-<uuid>[.<partition>].swap``."""
    millis = int(time.time() * 1000) if millis is None else millis
    return with_partition(f"{millis}-{queue_id}-{uuid.uuid4()}.swap", partition)


def with_partition(location: str, partition: str | None) -> str:
    """``location`` renamed for ``partition`` (None: the local partition, no partition in the name)."""
    match = _NAME.fullmatch(location)
    if match is None:
        raise ValueError(f"{location!r} is not the name of a swap file")
    if partition is None:
        return match["base"] + ".swap"
    if not partition:
        raise ValueError("a partition name cannot be empty")
    # quote() keeps ".", "_", "-" and "~"; a dot would end the partition early.
    return f"{match['base']}.{quote(partition, safe='').replace('.', '%2E')}.swap"


def partition_of(location: str) -> str | None:
    """The partition in a swap file's name, or None (the local partition, or an older name)."""
    match = _NAME.fullmatch(location)
    return unquote(match["partition"]) if match is not None and match["partition"] else None


def queue_of(location: str) -> str:
    """The queue id in a swap file's name (``<millis>-<queue id>-<uuid>[.<partition>].swap``)."""
    match = _NAME.fullmatch(location)
    if match is not None:
        return match["queue"]
    stem = location.removesuffix(".swap")
    _, _, rest = stem.partition("-")
    return rest[:-37] if len(rest) > 37 and rest[-37] == "-" else rest


class SwapManager:
    """Writes, reads and recovers the swap files of a FlowFile repository.

    It remembers the summary of every swap file the log names, so that the claimants of a
    file found damaged later can still be given up exactly.
    """

    def __init__(self, repository) -> None:
        self.repository = repository
        self.directory = repository.directory / "swap"
        #: FlowFiles per chunk of the files written from now on.
        self.chunk_records = CHUNK_RECORDS
        self._summaries: dict[str, SwapSummary] = {}

    def path(self, location: str) -> Path:
        """The file of a swap location."""
        return self.directory / location

    # -- writing --------------------------------------------------------------------------

    def swap_out(self, queue_id: str, flowfiles: Sequence[FlowFile], order: Any = None, *,
                 now: int | None = None, partition: str | None = None) -> str:
        """Write ``flowfiles`` of ``queue_id`` to a new swap file and log it; return its location.

        ``order`` is kept in the summary as it is: the queue stores what it needs to place the
        file among its FlowFiles without reading it back. ``now`` (ms, default the wall clock)
        decides which FlowFiles count as penalized for ``ready_at``. ``partition`` (a node id)
        goes into the name of a remote partition's file. On failure nothing is left: the file
        written is removed and the FlowFiles stay in the log's records.
        """
        fileops.make_directory(self.directory)
        location = swap_name(queue_id, partition)
        path = self.path(location)
        now = int(time.time() * 1000) if now is None else now
        raw = self._summarize(queue_id, flowfiles, order, now)
        seed, size = _seed(location), self.chunk_records
        try:
            with fileops.AtomicFile(path, self.directory / (location + ".part")) as handle:
                handle.write(MAGIC)
                handle.write(_frame(msgpack.packb(raw)))
                for index, start in enumerate(range(0, len(flowfiles), size)):
                    wires = [_serde.to_wire(RepositoryRecord(UpdateType.CREATE, flowfile, queue_id))
                             for flowfile in flowfiles[start:start + size]]
                    handle.write(_chunk(index, wires, seed))
            self.repository.update(
                [RepositoryRecord(UpdateType.SWAP_OUT, f, queue_id, swap_location=location) for f in flowfiles],
                force_sync=True,
            )
        except BaseException:
            self._remove(path, "written by a swap-out that failed")
            raise
        self._summaries[location] = _summary_from(raw)
        return location

    def move(self, location: str, partition: str | None) -> str:
        """Give a logged swap file the name of ``partition`` (None: local) and log the rename.

        The file gets its new name as a second link before the log's SWAP_FILE_RENAMED record
        and loses the old one after it, so a crash leaves a whole file under the name the log
        holds (recovery removes the other as a stray). Returns the new location. Raises
        ``OSError`` when the disk or the log refuses: then the file keeps its old name.
        """
        if location not in self.repository.swap_locations:
            raise SwapFileError(f"swap file {location} is not known to the FlowFile repository")
        target = with_partition(location, partition)
        if target == location:
            return location
        fileops.link(self.path(location), self.path(target))
        try:
            fileops.sync_directory(self.directory)
            self.repository.update([RepositoryRecord(UpdateType.SWAP_FILE_RENAMED, None, swap_location=target,
                                                     original_swap_location=location)], force_sync=True)
        except BaseException:
            self._remove(self.path(target))
            raise
        self._remove(self.path(location))
        summary = self._summaries.pop(location, None)
        if summary is not None:
            self._summaries[target] = summary
        return target

    # -- reading --------------------------------------------------------------------------

    def read(self, location: str) -> SwapContents:
        """Everything readable of a swap file; damage is described, not raised.

        Raises ``OSError`` only when the file exists but cannot be read (a failing disk).
        """
        try:
            data = self.path(location).read_bytes()
        except FileNotFoundError:
            return SwapContents(None, [], [(None, "the file is missing")])
        return parse(data, location)

    def read_flowfiles(self, location: str) -> list[FlowFile]:
        """The readable FlowFiles of a swap file, leaving it and the log untouched."""
        return self.read(location).flowfiles

    def holds(self, location: str, uuid: str) -> bool:
        """Whether the swap file holds FlowFile ``uuid``; a file whose bytes lack the uuid's text
        (records are plain msgpack) is not decoded."""
        try:
            data = self.path(location).read_bytes()
        except FileNotFoundError:
            return False
        if uuid.encode() not in data:
            return False
        return any(flowfile.uuid == uuid for flowfile in parse(data, location).flowfiles)

    def read_summary(self, location: str) -> SwapSummary:
        """The summary of a swap file, without its FlowFiles; raises SwapFileError when unreadable."""
        path = self.path(location)
        try:
            with open(path, "rb") as handle:
                head = handle.read(_SUMMARY_AT + _FRAME.size)
                length = 0
                if len(head) == _SUMMARY_AT + _FRAME.size:
                    length = min(_FRAME.unpack(head[_SUMMARY_AT:])[0], os.fstat(handle.fileno()).st_size)
                data = head + handle.read(length)
        except FileNotFoundError:
            raise SwapFileError(f"swap file {path} named by the FlowFile repository is missing") from None
        if data[:_SUMMARY_AT] not in (MAGIC, MAGIC_V1):
            raise SwapFileError(f"{path} is not a swap file")
        summary, _, problem = _read_summary(data)
        if summary is None:
            raise SwapFileError(f"swap file {path}: {problem}")
        return summary

    # -- swapping in, deleting ------------------------------------------------------------

    def swap_in(self, location: str) -> list[FlowFile]:
        """Load the FlowFiles of a swap file back into the log's records and remove the file.

        A damaged file gives back the FlowFiles of its readable chunks; the others are reported
        lost, their claimants given up, and the file goes to the quarantine. Raises ``OSError``
        when the file cannot be read or the log refuses the update: then nothing changed.
        """
        if location not in self.repository.swap_locations:
            raise SwapFileError(f"swap file {location} is not known to the FlowFile repository")
        contents = self.read(location)
        summary = self._summaries.get(location) or contents.summary
        queue_id = summary.queue_id if summary is not None else queue_of(location)
        records = [RepositoryRecord(UpdateType.SWAP_IN, f, queue_id, swap_location=location)
                   for f in contents.flowfiles]
        if contents.damage:
            records.append(RepositoryRecord(UpdateType.SWAP_FILE_DELETED, None, swap_location=location))
        self.repository.update(records, force_sync=True)
        self._summaries.pop(location, None)
        if contents.damage:
            self._give_up(summary, contents.flowfiles)
            lost = f"{summary.count - len(contents.flowfiles):,}" if summary is not None else "an unknown number of"
            self._contain(location, contents, f"{lost} FlowFile(s) of connection {queue_id} lost, "
                                              f"{len(contents.flowfiles):,} swapped back in")
        else:
            self._remove(self.path(location))
        return contents.flowfiles

    def delete(self, location: str, contents: SwapContents | None = None, *,
               log_update: Callable[[list[RepositoryRecord]], object] | None = None) -> SwapContents:
        """Remove a swap file whose FlowFiles leave the node (a dropped queue): log it, give up
        its claimants, delete the file (a damaged one goes to the quarantine).

        ``contents`` is what the caller already read of it. Returns what could be read.
        ``log_update`` writes the deletion's records durably in place of the repository's own
        update (the caller's commit, which records the FlowFiles' DROP events in the same
        transaction). Raises ``OSError`` when the log refuses the update: then nothing changed.
        """
        if contents is None:
            contents = self.read(location)
        summary = self._summaries.get(location) or contents.summary
        log_update = log_update or functools.partial(self.repository.update, force_sync=True)
        log_update([RepositoryRecord(UpdateType.SWAP_FILE_DELETED, None, swap_location=location)])
        self._summaries.pop(location, None)
        self._give_up(summary, [])
        if contents.damage:
            queue_id = summary.queue_id if summary is not None else queue_of(location)
            count = f"{summary.count:,}" if summary is not None else "its"
            self._contain(location, contents, f"connection {queue_id} was being emptied: {count} FlowFile(s) dropped, "
                                              f"{len(contents.flowfiles):,} of them readable")
        else:
            self._remove(self.path(location))
        return contents

    # -- recovery -------------------------------------------------------------------------

    def recover(self, *, read_only: bool = False, keep_strays: bool = False) -> dict[str, list[tuple[str, SwapSummary]]]:
        """Summaries of the logged swap files per queue (oldest first); drops strays and parts.

        A logged file that is missing or whose summary cannot be read does not stop start-up:
        the FlowFiles of its readable chunks go back to the log's records (SWAP_IN), the file to
        the quarantine, and the damage is reported. ``read_only`` only reports it, and leaves
        strays and parts in place. ``keep_strays`` (a start that accepted a damaged log, which
        may have lost the record of a swap-out) moves swap files the log does not name to the
        quarantine instead of deleting them.
        """
        known = self.repository.swap_locations
        by_queue: dict[str, list[tuple[str, SwapSummary]]] = {}
        entries = sorted(self.directory.iterdir()) if self.directory.is_dir() and not read_only else []
        for entry in entries:
            if entry.name.endswith(".swap.part"):
                self._remove(entry, "left by a swap-out that never finished")
            elif entry.name.endswith(".swap") and entry.name not in known:
                if keep_strays:
                    log.warning("swap file %s is not named by the recovered log; kept in %s", entry,
                                self.repository.quarantine.move(entry))
                else:
                    self._remove(entry, "never recorded by the FlowFile repository")
        damaged = []
        for location in sorted(known):
            try:
                summary = self.read_summary(location)
            except SwapFileError:
                damaged.append(location)
                continue
            self._summaries[location] = summary
            by_queue.setdefault(summary.queue_id, []).append((location, summary))
        for location in damaged:
            self._recover_damaged(location, read_only)
        return by_queue

    def _recover_damaged(self, location: str, read_only: bool) -> None:
        contents = self.read(location)
        queue_id = contents.summary.queue_id if contents.summary is not None else queue_of(location)
        salvaged = contents.flowfiles
        if read_only:
            self.repository.damage.record(self._damage(
                location, contents,
                f"start-up gives back the {len(salvaged):,} readable FlowFile(s) of connection {queue_id} "
                "and moves the file to the quarantine; the FlowFiles of its damaged parts are lost",
            ))
            return
        records = [RepositoryRecord(UpdateType.SWAP_IN, f, queue_id, swap_location=location) for f in salvaged]
        records.append(RepositoryRecord(UpdateType.SWAP_FILE_DELETED, None, swap_location=location))
        self.repository.update(records, force_sync=True)
        if contents.summary is not None:
            lost = f"{contents.summary.count - len(salvaged):,} FlowFile(s) lost"
        else:
            lost = "how many were lost is unknown (the summary that counted them is unreadable)"
        self._contain(location, contents, f"{len(salvaged):,} FlowFile(s) of connection {queue_id} recovered from "
                                          f"its readable chunks, {lost}")

    # -- helpers --------------------------------------------------------------------------

    def _give_up(self, summary: SwapSummary | None, kept: list[FlowFile]) -> None:
        """Drop the claimants a file's summary counted, but those of the FlowFiles ``kept``."""
        if summary is None:
            return
        lost = Counter(summary.claims)
        lost.subtract(f.content_claim.resource_claim for f in kept if f.content_claim is not None)
        for claim, count in lost.items():
            if count > 0:
                self.repository.claim_manager.decrement(claim, count)

    def _contain(self, location: str, contents: SwapContents, effect: str) -> None:
        """Quarantine a damaged file (already dropped from the log) and report it."""
        path = self.path(location)
        if path.exists():
            try:
                target = self.repository.quarantine.move(path)
                effect += f"; the file was moved to the quarantine ({target})"
            except OSError as error:
                effect += f"; the file could not be moved to the quarantine ({error}) and goes at the next start"
        self.repository.damage.record(self._damage(location, contents, effect))

    def _damage(self, location: str, contents: SwapContents, effect: str) -> Damage:
        (offset, found), *more = contents.damage
        found = "; ".join([found, *(what if where is None else f"{what} (at byte {where})" for where, what in more)])
        return Damage("swap file", str(self.path(location)), offset, found, effect, _REMEDY)

    @staticmethod
    def _remove(path: Path, why: str = "") -> None:
        """Delete a swap file the log does not (or no longer) name; a failure leaves a stray
        that the next recovery removes."""
        try:
            if fileops.unlink(path, missing_ok=True) and why:
                log.info("removed swap file %s, %s", path, why)
        except OSError as error:
            log.warning("could not remove swap file %s: %s; it is removed at the next start", path, error)

    @staticmethod
    def _summarize(queue_id: str, flowfiles: Sequence[FlowFile], order: Any, now: int) -> dict[str, Any]:
        claims = Counter(f.content_claim.resource_claim for f in flowfiles if f.content_claim is not None)
        queue_dates = [f.last_queue_date for f in flowfiles]
        return {
            "queue": queue_id,
            "count": len(flowfiles),
            "bytes": sum(f.size for f in flowfiles),
            "max_id": max((f.id for f in flowfiles), default=-1),
            "claims": [(rc.container, rc.section, rc.identifier, n) for rc, n in claims.items()],
            "min_queue_date": min(queue_dates, default=0),
            "total_queue_date": sum(queue_dates),
            "order": order,
            "ready_at": ready_at(flowfiles, now),
        }
