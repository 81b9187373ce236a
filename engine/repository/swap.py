"""Swap files: FlowFiles of a queue written out of memory, recorded in the write-ahead log.

Layout of ``swap/<millis>-<queue id>-<uuid>.swap``::

    b"FSSWAP1\\n"
    u32 length, u32 CRC32, msgpack summary  {queue, count, bytes, max_id, claims, min_queue_date, total_queue_date,
                                             order}
    u32 length, u32 CRC32, msgpack array of FlowFile wire records

A swap file is written to ``.swap.part``, synced and renamed before the SWAP_OUT records reach
the log (with a forced sync), so the log never names a swap file that is not whole. A ``.swap``
file that the log does not name was written by a swap-out that never committed: it is ignored
and removed at recovery, and its FlowFiles are still in the log's records.
"""

from __future__ import annotations

import logging
import struct
import time
import uuid
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import msgpack

from engine.flowfile import FlowFile, ResourceClaim
from engine import fileops
from engine.repository.records import FlowFileRecordSerde, RepositoryRecord
from engine.wal.serde import UpdateType

__all__ = ["SwapSummary", "SwapFileError", "SwapManager"]

log = logging.getLogger(__name__)

MAGIC = b"FSSWAP1\n"
_FRAME = struct.Struct(">II")
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


def _frame(payload: bytes) -> bytes:
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def _read_frame(handle, path: Path) -> Any:
    head = handle.read(_FRAME.size)
    if len(head) < _FRAME.size:
        raise SwapFileError(f"swap file {path} is truncated")
    length, crc = _FRAME.unpack(head)
    payload = handle.read(length)
    if len(payload) < length or zlib.crc32(payload) != crc:
        raise SwapFileError(f"swap file {path} is truncated or fails its checksum")
    return msgpack.unpackb(payload, use_list=True, strict_map_key=False)


class SwapManager:
    """Writes, reads and recovers the swap files of a FlowFile repository."""

    def __init__(self, repository) -> None:
        self.repository = repository
        self.directory = repository.directory / "swap"

    def path(self, location: str) -> Path:
        """The file of a swap location."""
        return self.directory / location

    def swap_out(self, queue_id: str, flowfiles: Sequence[FlowFile], order: Any = None) -> str:
        """Write ``flowfiles`` of ``queue_id`` to a new swap file and log it; return its location.

        ``order`` is kept in the summary as it is: the queue stores what it needs to place the
        file among its FlowFiles without reading it back.
        """
        fileops.make_directory(self.directory)
        location = f"{int(time.time() * 1000)}-{queue_id}-{uuid.uuid4()}.swap"
        part = self.directory / (location + ".part")
        summary = self._summarize(queue_id, flowfiles, order)
        body = [_serde.to_wire(RepositoryRecord(UpdateType.CREATE, flowfile, queue_id)) for flowfile in flowfiles]
        with fileops.AtomicFile(self.path(location), part) as handle:
            handle.write(MAGIC)
            handle.write(_frame(msgpack.packb(summary)))
            handle.write(_frame(msgpack.packb(body)))
        records = [
            RepositoryRecord(UpdateType.SWAP_OUT, flowfile, queue_id, swap_location=location) for flowfile in flowfiles
        ]
        self.repository.update(records, force_sync=True)
        return location

    def swap_in(self, location: str) -> list[FlowFile]:
        """Load the FlowFiles of a swap file back into the log's records and remove the file."""
        if location not in self.repository.swap_locations:
            raise SwapFileError(f"swap file {location} is not known to the FlowFile repository")
        queue_id, flowfiles = self._read(location)
        self.repository.update(
            [RepositoryRecord(UpdateType.SWAP_IN, flowfile, queue_id, swap_location=location) for flowfile in flowfiles],
            force_sync=True,
        )
        fileops.unlink(self.path(location))
        return flowfiles

    def read_flowfiles(self, location: str) -> list[FlowFile]:
        """The FlowFiles of a swap file, leaving it and the log untouched."""
        return self._read(location)[1]

    def _read(self, location: str) -> tuple[str, list[FlowFile]]:
        path = self.path(location)
        with open(path, "rb") as handle:
            if handle.read(len(MAGIC)) != MAGIC:
                raise SwapFileError(f"{path} is not a swap file")
            summary = _read_frame(handle, path)
            body = _read_frame(handle, path)
        return summary["queue"], [_serde.from_wire(wire, _serde.version).flowfile for wire in body]

    def read_summary(self, location: str) -> SwapSummary:
        """The summary of a swap file, without its FlowFiles."""
        path = self.path(location)
        try:
            with open(path, "rb") as handle:
                if handle.read(len(MAGIC)) != MAGIC:
                    raise SwapFileError(f"{path} is not a swap file")
                raw = _read_frame(handle, path)
        except FileNotFoundError:
            raise SwapFileError(f"swap file {path} named by the FlowFile repository is missing") from None
        claims = {ResourceClaim(c, s, i): n for (c, s, i, n) in raw["claims"]}
        return SwapSummary(
            raw["queue"], raw["count"], raw["bytes"], raw["max_id"], claims, raw["min_queue_date"],
            raw["total_queue_date"], raw.get("order"),
        )

    def recover(self, *, read_only: bool = False) -> dict[str, list[tuple[str, SwapSummary]]]:
        """Summaries of the logged swap files per queue (oldest first); drops strays and parts.

        ``read_only`` leaves strays and parts in place.
        """
        known = self.repository.swap_locations
        by_queue: dict[str, list[tuple[str, SwapSummary]]] = {}
        entries = sorted(self.directory.iterdir()) if self.directory.is_dir() and not read_only else []
        for entry in entries:
            if entry.name.endswith(".swap.part"):
                log.info("removing %s, left by a swap-out that never finished", entry)
                fileops.unlink(entry)
            elif entry.name.endswith(".swap") and entry.name not in known:
                log.warning("removing swap file %s: the FlowFile repository never recorded it", entry)
                fileops.unlink(entry)
        for location in sorted(known):
            summary = self.read_summary(location)
            by_queue.setdefault(summary.queue_id, []).append((location, summary))
        return by_queue

    def delete(self, location: str) -> SwapSummary:
        """Remove a swap file whose FlowFiles leave the node (a dropped queue): log it, give up
        its claimants, delete the file. Returns its summary."""
        summary = self.read_summary(location)
        self.repository.update([RepositoryRecord(UpdateType.SWAP_FILE_DELETED, None, swap_location=location)],
                               force_sync=True)
        for claim, count in summary.claims.items():
            self.repository.claim_manager.decrement(claim, count)
        fileops.unlink(self.path(location), missing_ok=True)
        return summary

    @staticmethod
    def _summarize(queue_id: str, flowfiles: Sequence[FlowFile], order: Any = None) -> dict[str, Any]:
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
        }
