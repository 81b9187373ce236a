"""The provenance repository: rolling journals in front of compressed, indexed, time-sharded storage.

Layout under the repository directory::

    journals/<first_id>.journal.<i>     the rolling journal sets (see ``journal``)
    shards/<first_time>-<first_id>/     long-term storage (see ``shard``, ``segment``)
    id-floor                            highest id ever stored, kept when shards age off

Write path: ``register_events`` gives the batch the next contiguous ids and appends it as one
compact frame to one journal of the current set; the set keeps the frames, with the index
fragments of their events, in memory for its rollover. Event ids are handed out under the same
lock that swaps journal sets, so every id of one set is below every id of the next: rolling
sets over in order keeps shards in id order, and a set rolled over again after a crash is
recognised by its ids (those not above the highest stored id are skipped), so recovery neither
loses nor duplicates events. A batch the disk refuses waits in memory (see ``backlog``):
registering never fails for lack of disk.

Rollover (every ``rollover_time`` on the background thread, early once the current set passes
``rollover_size``, or on ``rollover()``/``flush()``): a new set takes the writers, the old one
is sorted by id and appended to the current shard (or a new one when the current shard spans
``shard_duration``, has reached ``effective_shard_size``, has an older segment format or a
damaged index); only after that append is durable are the old journals deleted. A failed
rollover is retried by the next one, in order, reusing the shard directory it may have
begun. Events are searchable once rolled over, as in NiFi's rolling design: queries and
lineage read shards only, never the journals; ``get_events`` also finds an event still waiting
for rollover (the journal sets keep their frames in memory until then).

Damage never stops the repository from opening: a damaged journal frame, segment block or
index is recorded in the ``DamageLog`` (and the file kept in the quarantine when it is
replaced), and every event outside the damaged place is kept and found.

Retention (``run_maintenance``): shards whose newest event is older than ``max_storage_time``
are deleted, then the oldest shards while the shards exceed ``max_storage_size``. The shard
being written is never deleted for size (``effective_shard_size`` keeps it to a quarter of the
limit, and it closes when it gets there); it is deleted for age once all its events are too old.
Maintenance also rebuilds the indexes found damaged while running.
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
import threading
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, NamedTuple, Sequence

from engine import fileops
from engine.damage import DamageLog, Quarantine
from engine.flowfile import ContentClaim
from engine.provenance import codec
from engine.provenance.backlog import Backlog
from engine.provenance.config import ProvenanceConfig
from engine.provenance.event import ProvenanceEvent
from engine.provenance.index import connect_read_only
from engine.provenance.journal import (
    FRAME_OVERHEAD, JournalFrame, JournalSet, Settle, encode_frame, list_journal_sets,
)
from engine.provenance.lineage import LineageGraph, compute_lineage
from engine.provenance.query import ProvenanceQuery, QueryResult, mentions
from engine.provenance.recovery import WaitingSet, load_shards, read_id_floor, read_journal_sets
from engine.provenance.search import run_query
from engine.provenance.segment import SEGMENT_VERSION
from engine.provenance.shard import Shard
from engine.units import format_data_size

__all__ = ["ContentNotAvailableError", "EncodedEvents", "ProvenanceRepository", "ProvenanceStats",
           "describe_directory"]

log = logging.getLogger(__name__)

_ID_FLOOR = "id-floor"


class EncodedEvents(NamedTuple):
    """A batch of events in stored form (``encode``): each event's bytes, the index fragments,
    and the batch's time range."""

    blobs: list[bytes]
    fragments: list[str]
    min_time: int
    max_time: int


class ContentNotAvailableError(LookupError):
    """The content an event points at cannot be read any more (or the event has no such claim)."""


@dataclass(frozen=True)
class ProvenanceStats:
    """A summary of the repository for inspection tools; times in ms, None when empty."""

    shard_count: int
    event_count: int
    bytes_on_disk: int
    oldest_event_time: int | None
    newest_event_time: int | None
    pending_journal_events: int
    max_event_id: int
    #: Events held in memory because the disk refused them (see ``backlog``).
    backlog_events: int = 0


class ProvenanceRepository:
    """Stores, indexes, ages off and searches a node's provenance events; thread-safe.

    Use as a context manager or call ``open()``/``close()``; ``start()`` runs rollover and
    retention on a background thread.
    """

    def __init__(self, directory: Path | str, config: ProvenanceConfig | None = None, *,
                 damage: DamageLog | None = None, quarantine: Quarantine | None = None) -> None:
        self.directory = Path(directory)
        self.config = config or ProvenanceConfig()
        self.damage = damage or DamageLog()
        self.quarantine = quarantine or Quarantine(self.directory.parent)
        self._journal_dir = self.directory / "journals"
        self._shard_dir = self.directory / "shards"
        self.backlog = Backlog(self.config.max_backlog_events, self.damage, self._journal_dir)
        self._lock = threading.RLock()  # the shard list and the highest stored id
        self._id_lock = threading.Lock()  # id assignment and the swap of journal sets
        self._rollover_lock = threading.Lock()  # one rollover or maintenance pass at a time
        self._shards: list[Shard] = []
        self._stored_max_id = 0
        self._next_id = 1
        self._generation: JournalSet | None = None
        self._unmerged: list[WaitingSet] = []
        self._slots = itertools.count()  # each writer thread's journal in a set
        self._thread_slot = threading.local()
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._opened = False

    # -- life cycle -------------------------------------------------------------------------

    def open(self) -> ProvenanceRepository:
        """Load the shards, roll over journals left by the last run, and accept events.

        Damage is recorded, never raised; journals that cannot be stored yet (a full disk)
        wait for the next rollover.
        """
        fileops.make_directory(self._journal_dir)
        fileops.make_directory(self._shard_dir)
        self._stored_max_id = read_id_floor(self.directory / _ID_FLOOR, self.damage)
        self._shards = load_shards(self._shard_dir, self.config, self.damage, self.quarantine)
        self._stored_max_id = max([self._stored_max_id, *(shard.max_id for shard in self._shards)])
        self._unmerged, highest = read_journal_sets(
            self._journal_dir, self.config, self._stored_max_id, self.damage, self.quarantine
        )
        self._next_id = highest + 1
        self._generation = self._new_generation(self._next_id)
        self._opened = True
        with self._rollover_lock:
            try:
                self._merge_unmerged()
            except Exception:
                log.exception("provenance: could not roll over the journals left by the last run; "
                              "retrying at the next rollover")
        return self

    def start(self) -> None:
        """Run rollover and maintenance on a background thread until ``close``."""
        if self._thread is None:
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name="provenance-maintenance", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop the background thread, roll the journals over, release files.

        Events still held in memory that cannot be stored now are reported as dropped. A final
        rollover that fails (a full disk) is raised once every file is released: the journals
        are kept and rolled over at the next start.
        """
        if not self._opened:
            return
        if self._thread is not None:
            self._stopping = True
            self._wake.set()
            self._thread.join()
            self._thread = None
        with self._id_lock:
            generation, self._generation = self._generation, None
        if generation is not None:
            generation.close()
            if generation.events:
                self._unmerged.append(WaitingSet.of(generation))
            else:
                for path in generation.paths:
                    fileops.unlink(path, missing_ok=True)
        failure: Exception | None = None
        with self._rollover_lock:
            try:
                self._merge_unmerged()
            except Exception as error:
                failure = error
                self.backlog.drop((frame for rolled in self._unmerged for frame in rolled.held),
                                  "the repository closed before the disk accepted them")
            self._unmerged = []
            self.backlog.report(force=True)
        with self._lock:
            for shard in self._shards:
                shard.close()
            self._shards = []
        self._opened = False
        if failure is not None:
            raise failure

    def __enter__(self) -> ProvenanceRepository:
        if not self._opened:
            self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- write path -------------------------------------------------------------------------

    def register_events(self, events: Sequence[ProvenanceEvent]) -> list[ProvenanceEvent]:
        """Give ``events`` the next contiguous ids and journal them; return them with their ids
        (``append_events`` does the same without making the returned events)."""
        if not events:
            return []
        first_id = self.append_events(events)
        make = tuple.__new__
        return [make(ProvenanceEvent, event[:-1] + (first_id + i,)) for i, event in enumerate(events)]

    def append_events(self, events: Sequence[ProvenanceEvent]) -> int:
        """Give ``events`` the next contiguous ids and journal them; return the first id.

        A batch the journal cannot take (a full disk, an I/O error) is held in memory and
        written later (see ``backlog``); this raises only when the repository is not open.
        """
        if not events:
            return self._next_id
        return self.append_encoded(self.encode(events))

    def encode(self, events: Sequence[ProvenanceEvent]) -> EncodedEvents:
        """``events`` (at least one) in their stored form, ready for ``append_encoded``."""
        return self._encoded(events, codec.encode_events(events))

    def encoded_from_stored(self, blobs: Sequence[bytes]) -> EncodedEvents:
        """Events in stored form again (the bytes of an outbox entry), as ``encode`` made them:
        registered as they are, they stay byte for byte what ``holding`` finds."""
        return self._encoded([codec.event_from_wire(codec.decode_wire(blob), -1) for blob in blobs], list(blobs))

    def _encoded(self, events: Sequence[ProvenanceEvent], blobs: list[bytes]) -> EncodedEvents:
        times = [event.event_time for event in events]
        # The index fragments are made now, while the events are in the processor's cache: the
        # rollover would read them back from memory, and keeping them alive until then
        # burdens the collector.
        return EncodedEvents(blobs, codec.index_fragments(events, self.config.indexed_attributes), min(times), max(times))

    def append_encoded(self, encoded: EncodedEvents, settle: Settle | None = None) -> int:
        """Journal events made by ``encode`` under the next contiguous ids; return the first id
        (see ``append_events``).

        ``settle`` is called once the events are in a journal: before this returns, or, for a
        batch held in the backlog, when the backlog writes it or a rollover stores it (or when
        it is dropped from a full backlog). It is not called when the repository closes first.
        """
        blobs, fragments, min_time, max_time = encoded
        count = len(blobs)
        payload = codec.encode_record(blobs, min_time, max_time)
        slot = getattr(self._thread_slot, "value", None)
        if slot is None:
            slot = self._thread_slot.value = next(self._slots)
        while True:
            generation = self._generation
            if generation is None:
                raise RuntimeError("the provenance repository is not open")
            journals = generation.journals
            journal = journals[slot % len(journals)]
            with journal.lock:
                if journal.closed:
                    continue
                with self._id_lock:
                    if journal.generation is not self._generation:
                        continue
                    first_id = self._next_id
                    self._next_id += count
                    generation.events += count
                    generation.bytes += len(payload) + FRAME_OVERHEAD
                    due = generation.bytes >= self.config.rollover_size
                frame = JournalFrame(first_id, blobs, fragments, min_time, max_time)
                data = encode_frame(first_id, count, payload)
                try:
                    journal.append(data)
                except OSError as error:
                    if self.backlog.hold(generation, frame, data, error, settle):
                        settle = None  # the backlog settles it
                    # A journal that could not be cut back takes no more frames: start a new set.
                    due = due or journal.broken
                else:
                    generation.frames.append(frame)
                    if generation.backlog:
                        self.backlog.write(generation, journal)
            break
        if settle is not None:
            settle()
        if due:
            self._request_rollover()
        return first_id

    def rollover(self) -> int:
        """Move journaled events into shards now; return how many were stored."""
        with self._rollover_lock:
            with self._id_lock:
                current = self._generation
                swap = current is not None and current.events > 0
                if swap:
                    self._generation = self._new_generation(self._next_id)
            if swap:
                current.close()
                with self._id_lock:
                    self._unmerged.append(WaitingSet.of(current))
            try:
                return self._merge_unmerged()
            finally:
                self.backlog.report()

    flush = rollover

    def _merge_unmerged(self) -> int:
        """Store the waiting journal sets in order; the first that fails stops the others."""
        stored = 0
        while self._unmerged:
            rolled = self._unmerged[0]
            stored += self._merge(rolled.frames, rolled.paths)
            with self._id_lock:
                self._unmerged.pop(0)
            self.backlog.stored(rolled.held)
        return stored

    def _request_rollover(self) -> None:
        if self._thread is not None:
            self._wake.set()
            return
        try:
            self.rollover()
        except Exception:
            log.exception("provenance rollover failed; the events wait for the next one")

    def _merge(self, frames: list[JournalFrame], paths: Iterable[Path]) -> int:
        frames.sort(key=lambda frame: frame.first_id)
        ids: list[int] = []
        blobs: list[bytes] = []
        fragments: list[str] = []
        min_time = max_time = None
        last = self._stored_max_id
        for frame in frames:
            if frame.first_id + len(frame.events) - 1 <= last:
                continue
            skip = max(0, last + 1 - frame.first_id)
            ids.extend(range(frame.first_id + skip, frame.first_id + len(frame.events)))
            blobs.extend(frame.events[skip:])
            fragments.extend(frame.fragments[skip:])
            last = ids[-1]
            min_time = frame.min_time if min_time is None else min(min_time, frame.min_time)
            max_time = frame.max_time if max_time is None else max(max_time, frame.max_time)
        if ids:
            shard = self._target_shard(ids[0], min_time, max_time)
            try:
                shard.append(ids, blobs, fragments, min_time, max_time)
            except BaseException:
                if shard.count == 0:
                    # A new shard that never committed: the retry takes its directory over.
                    shard.close()
                raise
            with self._lock:
                if not self._shards or self._shards[-1] is not shard:
                    self._shards.append(shard)
                self._stored_max_id = ids[-1]
        for path in paths:
            fileops.unlink(path, missing_ok=True)
        fileops.sync_directory(self._journal_dir)
        return len(ids)

    def _target_shard(self, first_id: int, min_time: int, max_time: int) -> Shard:
        with self._lock:
            current = self._shards[-1] if self._shards else None
        if current is not None and not current.index_damaged and current.segment_version >= SEGMENT_VERSION:
            young = max_time - current.min_time < self.config.shard_duration * 1000
            if young and current.size < self.config.effective_shard_size:
                return current
        return Shard.create(
            self._shard_dir,
            min_time,
            first_id,
            compression=self.config.compression,
            indexed_attributes=self.config.indexed_attributes,
            damage=self.damage,
            quarantine=self.quarantine,
        )

    def _new_generation(self, first_id: int) -> JournalSet:
        return JournalSet(
            self._journal_dir, first_id, self.config.journal_count, always_sync=self.config.always_sync
        )

    # -- recovery and retention ---------------------------------------------------------------

    def _write_id_floor(self, value: int) -> None:
        fileops.write_atomically(self.directory / _ID_FLOOR, str(value).encode())

    def run_maintenance(self, now: int | None = None) -> int:
        """Rebuild indexes found damaged, finish checking the indexes opened since the start,
        delete shards past the age or size limit (``now`` in ms); return how many were deleted."""
        now = int(time.time() * 1000) if now is None else now
        cutoff = now - self.config.max_storage_time * 1000
        with self._rollover_lock:
            with self._lock:
                shards = list(self._shards)
            for position, shard in enumerate(shards):
                below = shards[position + 1].first_id if position + 1 < len(shards) else None
                if shard.index_damaged:
                    shard.rebuild_index(below)
                shard.verify_index(below)
            doomed = [shard for shard in shards if shard.max_time < cutoff]
            kept = [shard for shard in shards if shard.max_time >= cutoff]
            total = sum(shard.size for shard in kept)
            # kept[-1] is the shard being written: never deleted for size.
            while len(kept) > 1 and total > self.config.max_storage_size:
                oldest = kept.pop(0)
                total -= oldest.size
                doomed.append(oldest)
            if not doomed:
                return 0
            # Keeps ids monotonic even when every shard has aged off; if it fails, nothing is
            # deleted and the next run tries again.
            self._write_id_floor(self._stored_max_id)
            with self._lock:
                self._shards = [shard for shard in self._shards if shard not in doomed]
            for shard in doomed:
                log.info("provenance: deleting shard %s (%d events, %d bytes)", shard.name, shard.count, shard.size)
                shard.delete()
            return len(doomed)

    def _run(self) -> None:
        clock = time.monotonic
        next_rollover = clock() + self.config.rollover_time
        next_maintenance = clock() + self.config.maintenance_interval
        while not self._stopping:
            self._wake.wait(max(0.0, min(next_rollover, next_maintenance) - clock()))
            self._wake.clear()
            if self._stopping:
                break
            try:
                generation = self._generation
                due = generation is not None and generation.bytes >= self.config.rollover_size
                if due or clock() >= next_rollover:
                    self.rollover()
                    next_rollover = clock() + self.config.rollover_time
                if clock() >= next_maintenance:
                    self.run_maintenance()
                    next_maintenance = clock() + self.config.maintenance_interval
            except Exception:
                log.exception("provenance rollover or maintenance failed; retrying at the next interval")
                next_rollover = clock() + self.config.rollover_time

    # -- reads --------------------------------------------------------------------------------

    def shards(self) -> list[Shard]:
        """The shards, oldest first; the last one is the shard being written (the next rollover
        may add to it), every other one is closed and never changes until it is deleted."""
        with self._lock:
            return list(self._shards)

    def _shards_newest_first(self) -> list[Shard]:
        with self._lock:
            return list(reversed(self._shards))

    def query(self, query: ProvenanceQuery) -> QueryResult:
        """Events matching ``query``, newest first, one page at a time (see ``query``, ``search``)."""
        return run_query(self._shards_newest_first(), query)

    def get_event(self, event_id: int) -> ProvenanceEvent | None:
        """The stored event with ``event_id``, or None (aged off, not yet rolled over, unknown)."""
        events = self.get_events([event_id])
        return events[0] if events else None

    def get_events(self, event_ids: Iterable[int]) -> list[ProvenanceEvent]:
        """The events among ``event_ids``, in the order asked; unknown ids are left out. Unlike
        searches, this finds events not yet rolled over too (a user opens the event a replay
        just recorded)."""
        wanted = list(event_ids)
        found: dict[int, ProvenanceEvent] = {}
        for shard in self._shards_newest_first():
            mine = [event_id for event_id in wanted if shard.min_id <= event_id <= shard.max_id]
            if mine:
                found.update(shard.read_events(mine))
        pending = [event_id for event_id in wanted if event_id not in found]
        if pending:
            found.update(self._journaled_events(pending))
        return [found[event_id] for event_id in wanted if event_id in found]

    def _journaled_events(self, event_ids: list[int]) -> dict[int, ProvenanceEvent]:
        """The events among ``event_ids`` still in the journal sets waiting for rollover (their
        frames are kept in memory until then)."""
        found: dict[int, ProvenanceEvent] = {}
        for journal_set in self._waiting_sets():
            for frame in list(journal_set.frames):
                for event_id in event_ids:
                    position = event_id - frame.first_id
                    if 0 <= position < len(frame.events):
                        found[event_id] = codec.event_from_wire(codec.decode_wire(frame.events[position]), event_id)
        return found

    def holding(self, stored: Iterable[bytes]) -> set[bytes]:
        """The events among ``stored`` (stored bytes, see ``encode``) that the repository holds,
        rolled over or not: how recovery tells whether the events of a commit were registered
        before the node died.

        Events waiting for rollover are matched by their bytes (registration keeps the bytes
        it is given, and a journal gives them back as written): one pass over the waiting
        sets, however many are asked. Rolled-over ones are matched field by field, ids aside,
        among the events naming the same FlowFile.
        """
        waiting = {blob for journal_set in self._waiting_sets() for frame in list(journal_set.frames)
                   for blob in frame.events}
        found: set[bytes] = set()
        for blob in stored:
            if blob in waiting:
                found.add(blob)
                continue
            wanted = codec.event_from_wire(codec.decode_wire(blob), -1)
            if any(event._replace(event_id=-1) == wanted for event in self.events_mentioning(wanted.flowfile_uuid)):
                found.add(blob)
        return found

    def _waiting_sets(self) -> list[WaitingSet | JournalSet]:
        """The journal sets whose frames wait in memory for their rollover."""
        with self._id_lock:
            return [*self._unmerged, *((self._generation,) if self._generation is not None else ())]

    def events_mentioning(self, uuid: str) -> list[ProvenanceEvent]:
        """Every stored event naming ``uuid`` as its FlowFile, a parent or a child, oldest first."""
        events: list[ProvenanceEvent] = []
        key = codec.term_key(codec.UUID_KEY, uuid)
        for shard in reversed(self._shards_newest_first()):
            ids = shard.term_ids(key)
            found = shard.read_events(ids)
            events.extend(event for event in map(found.get, ids) if event is not None and mentions(event, uuid))
        return events

    def lineage(self, flowfile_uuid: str, max_nodes: int = 1000) -> LineageGraph:
        """The lineage graph of ``flowfile_uuid`` (see ``lineage`` module), at most ``max_nodes`` nodes."""
        return compute_lineage(flowfile_uuid, self.events_mentioning, max_nodes)

    def open_content(
        self, event_id: int, reader: Callable[[ContentClaim], BinaryIO], *, previous: bool = False
    ) -> BinaryIO:
        """The content of the event's current (or ``previous``) claim, opened with ``reader``.

        Raises ContentNotAvailableError when the event is unknown, has no such claim, or the
        content repository no longer has the bytes.
        """
        event = self.get_event(event_id)
        which = "previous" if previous else "current"
        if event is None:
            raise ContentNotAvailableError(f"content no longer available: provenance event {event_id} is unknown")
        claim = event.previous_content_claim if previous else event.content_claim
        if claim is None:
            raise ContentNotAvailableError(
                f"content no longer available: provenance event {event_id} has no {which} content claim"
            )
        try:
            return reader(claim)
        except Exception as exc:
            if not _is_missing_content(exc):
                raise
            raise ContentNotAvailableError(
                f"content no longer available: {which} claim {claim.resource_claim} "
                f"[{claim.offset}, +{claim.length}) of provenance event {event_id}"
            ) from exc

    def stats(self) -> ProvenanceStats:
        """Counts and sizes of the repository."""
        with self._lock:
            shards = list(self._shards)
        with self._id_lock:
            pending = [generation for generation in (self._generation, *self._unmerged) if generation is not None]
            pending_events = sum(generation.events for generation in pending)
            pending_bytes = sum(generation.bytes for generation in pending)
            max_event_id = self._next_id - 1
        return ProvenanceStats(
            shard_count=len(shards),
            event_count=sum(shard.count for shard in shards),
            bytes_on_disk=sum(shard.size for shard in shards) + pending_bytes,
            oldest_event_time=min((shard.min_time for shard in shards), default=None),
            newest_event_time=max((shard.max_time for shard in shards), default=None),
            pending_journal_events=pending_events,
            max_event_id=max_event_id,
            backlog_events=self.backlog.events,
        )


def _is_missing_content(exc: Exception) -> bool:
    # The content repository's ContentNotFoundError is matched by name so this package does
    # not depend on it.
    if isinstance(exc, (FileNotFoundError, LookupError)):
        return True
    return any(cls.__name__ == "ContentNotFoundError" for cls in type(exc).__mro__)


def describe_directory(directory: Path) -> list[str]:
    """Lines describing a provenance repository on disk, read without changing anything."""
    directory = Path(directory)
    shard_dir = directory / "shards"
    shards = sorted(p for p in shard_dir.iterdir() if p.is_dir()) if shard_dir.is_dir() else []
    events = size = unreadable = 0
    oldest = newest = None
    for path in shards:
        size += sum(f.stat().st_size for f in path.iterdir() if f.is_file())
        index = path / "index.db"
        try:
            if not index.stat().st_size:
                raise sqlite3.DatabaseError("empty")
            with closing(connect_read_only(index)) as conn:
                meta = dict(conn.execute("SELECT key, value FROM meta"))
        except (OSError, sqlite3.DatabaseError):
            unreadable += 1
            continue
        events += meta.get("count", 0)
        if meta.get("count"):
            oldest = meta["min_time"] if oldest is None else min(oldest, meta["min_time"])
            newest = meta["max_time"] if newest is None else max(newest, meta["max_time"])
    # a node killed while it created the repository may leave it without its journals
    journal_dir = directory / "journals"
    journals = list_journal_sets(journal_dir) if journal_dir.is_dir() else []
    journal_bytes = sum(p.stat().st_size for _, paths in journals for p in paths)
    lines = [f"{len(shards)} shard(s), {events} event(s), {format_data_size(size)}"]
    if oldest is not None:
        lines.append(f"events from {_iso(oldest)} to {_iso(newest)}")
    lines.append(f"{len(journals)} journal set(s) awaiting rollover, {format_data_size(journal_bytes)}")
    if unreadable:
        lines.append(f"{unreadable} shard index(es) missing or unreadable: rebuilt from the segments at the next start")
    return lines


def _iso(millis: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(millis / 1000)) + " UTC"
