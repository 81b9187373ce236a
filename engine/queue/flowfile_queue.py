"""A connection's queue: prioritized, back-pressured, expiring, penalty-aware and swapping.

In memory a queue keeps two heaps: FlowFiles ready to go, ordered by the prioritizers' sort key,
and penalized FlowFiles, ordered by the end of their penalty (they join the first heap when it
ends). When more FlowFiles than the swap threshold sit in memory, the lowest-priority ones are
written to a swap file in one batch (penalized ones count as the lowest of all), and the queue
keeps only the file's summary: how many FlowFiles and bytes, the best sort key inside, and
when the first of them is ready (a file of penalized FlowFiles only is not read back before
its first penalty ends). A poll swaps a ready file back in as soon as its best key would come
out before the head of memory, so FlowFiles leave in exact priority order whatever was swapped.

A swap-in or swap-out the storage refuses (a full or failing disk) changes nothing and is
retried after ``SWAP_RETRY_MS``; meanwhile the file counts as penalized, so the queue never
reports work it cannot hand out. A damaged swap file gives back what it can: its lost
FlowFiles leave the queue's figures at once (the swap manager reports them).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Iterable, NamedTuple, Protocol, Sequence

from engine.flowfile import FlowFile
from engine.queue.prioritizers import SortKey, resolve_prioritizer, sort_key_function

__all__ = [
    "FlowFileAvailability", "FlowFileQueue", "Polled", "QueueSettings", "QueueSize", "Swapper", "SwappedFile",
]

log = logging.getLogger(__name__)

#: Expired FlowFiles removed by one poll at most (NiFi's figure), so a poll stays short.
MAX_EXPIRED_PER_POLL = 10_000

#: How long a swap-in or swap-out waits after the storage refused one (ms).
SWAP_RETRY_MS = 1_000


class FlowFileAvailability(Enum):
    """What a poll would find: a FlowFile, only penalized ones, or nothing."""

    FLOWFILE_AVAILABLE = "FLOWFILE_AVAILABLE"
    HEAD_OF_QUEUE_PENALIZED = "HEAD_OF_QUEUE_PENALIZED"
    ACTIVE_QUEUE_EMPTY = "ACTIVE_QUEUE_EMPTY"


@dataclass(frozen=True)
class QueueSettings:
    """A queue's limits and order.

    Thresholds of 0 or less turn that back-pressure check off. ``expiration`` is in seconds
    (0 = never); a FlowFile's age counts from its entry date. ``swap_threshold`` is how many
    FlowFiles may sit in memory before ``swap_batch_size`` of them go to a swap file.
    """

    back_pressure_object_threshold: int = 10_000
    back_pressure_data_size_threshold: int = 1 << 30
    expiration: float = 0.0
    prioritizers: tuple[str, ...] = ()
    swap_threshold: int = 20_000
    swap_batch_size: int = 10_000

    def __post_init__(self) -> None:
        object.__setattr__(self, "prioritizers", tuple(resolve_prioritizer(p) for p in self.prioritizers))
        if self.swap_threshold < 1 or self.swap_batch_size < 1:
            raise ValueError("the swap threshold and swap batch size must be at least 1")
        if self.expiration < 0:
            raise ValueError("the FlowFile expiration cannot be negative")


class QueueSize(NamedTuple):
    """A queue's figures. ``count`` and ``bytes`` cover every waiting FlowFile, swapped ones
    included; FlowFiles handed to a session and not yet settled are counted apart."""

    count: int
    bytes: int
    active_count: int
    active_bytes: int
    swapped_count: int
    swapped_bytes: int
    swap_files: int
    unacknowledged_count: int
    unacknowledged_bytes: int

    @property
    def total_count(self) -> int:
        """Waiting plus unacknowledged FlowFiles: what back pressure compares."""
        return self.count + self.unacknowledged_count

    @property
    def total_bytes(self) -> int:
        """Waiting plus unacknowledged bytes."""
        return self.bytes + self.unacknowledged_bytes


class Polled(NamedTuple):
    """What a poll took: FlowFiles to process, and expired ones the caller must drop (EXPIRE)."""

    flowfiles: list[FlowFile]
    expired: list[FlowFile]


class SwappedFile(NamedTuple):
    """A swap file of this queue as the queue knows it (the FlowFiles stay on disk).

    ``ready_at`` (ms): not swapped in before then — the end of the first penalty when all its
    FlowFiles are penalized, or the retry after a failed swap-in; 0 when ready.
    """

    location: str
    count: int
    bytes: int
    best_key: SortKey
    ready_at: int = 0


class Swapper(Protocol):
    """Where a queue writes and reads its swap files (the FlowFile repository's swap manager)."""

    def swap_out(self, queue_id: str, flowfiles: Sequence[FlowFile], order: Any = None, *,
                 now: int | None = None) -> str: ...

    def swap_in(self, location: str) -> list[FlowFile]: ...

    def read_flowfiles(self, location: str) -> list[FlowFile]: ...

    def holds(self, location: str, uuid: str) -> bool: ...


class FlowFileQueue:
    """The FlowFiles waiting in one connection.

    ``poll`` hands FlowFiles to a session; they stay counted as *unacknowledged* until the
    session commits or rolls back and calls ``acknowledge``. Without a ``swapper`` the queue
    never swaps (for tests and in-memory use).
    """

    def __init__(
        self,
        identifier: str,
        settings: QueueSettings | None = None,
        swapper: Swapper | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.identifier = identifier
        self._settings = settings or QueueSettings()
        self._swapper = swapper
        self._clock = clock
        self._lock = threading.Lock()
        self._key = sort_key_function(self._settings.prioritizers)
        self._active: list[tuple[SortKey, FlowFile]] = []
        self._penalized: list[tuple[int, SortKey, FlowFile]] = []
        self._memory_bytes = 0
        self._swapped: list[SwappedFile] = []
        self._best_swapped: SortKey | None = None  # best key among the ready swap files
        self._swapped_wait: int | None = None  # when the first waiting swap file becomes ready
        self._swap_out_retry_at = 0
        self._swapped_count = 0
        self._swapped_bytes = 0
        self._unacked_count = 0
        self._unacked_bytes = 0

    # -- settings -------------------------------------------------------------------------

    @property
    def settings(self) -> QueueSettings:
        """The current limits and order."""
        return self._settings

    def update_settings(self, settings: QueueSettings) -> None:
        """Apply new limits; a change of prioritizers re-orders everything, swapped FlowFiles too."""
        with self._lock:
            reorder = settings.prioritizers != self._settings.prioritizers
            self._settings = settings
            if reorder:
                self._key = sort_key_function(settings.prioritizers)
                key = self._key
                self._active = [(key(f), f) for _, f in self._active]
                heapq.heapify(self._active)
                self._penalized = [(p, key(f), f) for p, _, f in self._penalized]
                heapq.heapify(self._penalized)
                self._swapped = [s._replace(best_key=self._best_key_on_disk(s.location)) for s in self._swapped]
                self._refresh_best_swapped(self._now_ms())
            self._swap_out_excess()

    # -- adding ---------------------------------------------------------------------------

    def put(self, flowfile: FlowFile) -> None:
        """Queue one FlowFile."""
        self.put_all((flowfile,))

    def put_all(self, flowfiles: Iterable[FlowFile]) -> None:
        """Queue FlowFiles (in any order: the prioritizers decide the order out)."""
        now = self._now_ms()
        key = self._key
        with self._lock:
            active, penalized = self._active, self._penalized
            added = 0
            for flowfile in flowfiles:
                if flowfile.penalty_expiration > now:
                    heapq.heappush(penalized, (flowfile.penalty_expiration, key(flowfile), flowfile))
                else:
                    heapq.heappush(active, (key(flowfile), flowfile))
                added += flowfile.size
            self._memory_bytes += added
            self._swap_out_excess()

    def restore(self, flowfiles: Iterable[FlowFile], swap_files: Iterable[tuple[str, Any]] = ()) -> None:
        """Take back what recovery found for this queue: FlowFiles and swap-file summaries."""
        now = self._now_ms()
        with self._lock:
            for location, summary in swap_files:
                order = summary.order or {}
                if order.get("prioritizers") == list(self._settings.prioritizers) and order.get("best") is not None:
                    best = tuple(order["best"])
                else:
                    best = self._best_key_on_disk(location)
                self._add_swapped(SwappedFile(location, summary.count, summary.bytes, best, summary.ready_at), now)
        self.put_all(flowfiles)

    # -- taking ---------------------------------------------------------------------------

    def poll(self, max_count: int = 1) -> Polled:
        """Take up to ``max_count`` FlowFiles in priority order, skipping penalized ones.

        FlowFiles found expired on the way are taken too and returned apart: the caller drops
        them with an EXPIRE event. Both kinds become unacknowledged.
        """
        now = self._now_ms()
        taken: list[FlowFile] = []
        expired: list[FlowFile] = []
        with self._lock:
            self._release_penalties(now)
            if self._swapped_wait is not None and self._swapped_wait <= now:
                self._refresh_best_swapped(now)
            expiration_ms = int(self._settings.expiration * 1000)
            active = self._active
            while len(taken) < max_count:
                if self._best_swapped is not None and (not active or self._best_swapped < active[0][0]):
                    self._swap_in_best(now)
                    continue
                if not active:
                    break
                flowfile = heapq.heappop(active)[1]
                if expiration_ms and now - flowfile.entry_date >= expiration_ms:
                    expired.append(flowfile)
                    if len(expired) >= MAX_EXPIRED_PER_POLL:
                        break
                    continue
                taken.append(flowfile)
            size = sum(f.size for f in taken) + sum(f.size for f in expired)
            self._memory_bytes -= size
            self._unacked_count += len(taken) + len(expired)
            self._unacked_bytes += size
            self._swap_out_excess()
        return Polled(taken, expired)

    def remove_expired(self) -> list[FlowFile]:
        """Take every expired FlowFile held in memory (they become unacknowledged)."""
        expiration_ms = int(self._settings.expiration * 1000)
        if not expiration_ms:
            return []
        now = self._now_ms()
        with self._lock:
            expired = [f for _, f in self._active if now - f.entry_date >= expiration_ms]
            expired += [f for _, _, f in self._penalized if now - f.entry_date >= expiration_ms]
            if expired:
                gone = {f.id for f in expired}
                self._active = [entry for entry in self._active if entry[1].id not in gone]
                heapq.heapify(self._active)
                self._penalized = [entry for entry in self._penalized if entry[2].id not in gone]
                heapq.heapify(self._penalized)
                size = sum(f.size for f in expired)
                self._memory_bytes -= size
                self._unacked_count += len(expired)
                self._unacked_bytes += size
        return expired

    def take_all(self) -> tuple[list[FlowFile], list[SwappedFile]]:
        """Empty the queue: return the FlowFiles in memory and the swap files (now unacknowledged).

        The caller deletes them for good (DROP events, log records) and then acknowledges.
        """
        with self._lock:
            flowfiles = [f for _, f in sorted(self._active)] + [f for _, _, f in sorted(self._penalized)]
            swapped = list(self._swapped)
            self._active, self._penalized, self._swapped = [], [], []
            self._best_swapped = self._swapped_wait = None
            count = len(flowfiles) + self._swapped_count
            size = self._memory_bytes + self._swapped_bytes
            self._memory_bytes = self._swapped_count = self._swapped_bytes = 0
            self._unacked_count += count
            self._unacked_bytes += size
        return flowfiles, swapped

    def give_back(self, swapped: Iterable[SwappedFile]) -> None:
        """Take back swap files handed out by ``take_all`` that could not be deleted."""
        with self._lock:
            now = self._now_ms()
            for swap_file in swapped:
                self._add_swapped(swap_file, now)
                self._unacked_count -= swap_file.count
                self._unacked_bytes -= swap_file.bytes

    def acknowledge(self, flowfiles: Iterable[FlowFile]) -> None:
        """Settle FlowFiles taken by ``poll`` (committed elsewhere, or put back)."""
        count = size = 0
        for flowfile in flowfiles:
            count += 1
            size += flowfile.size
        self.acknowledge_counts(count, size)

    def acknowledge_counts(self, count: int, size: int) -> None:
        """Settle ``count`` taken FlowFiles of ``size`` bytes in all."""
        with self._lock:
            self._unacked_count -= count
            self._unacked_bytes -= size

    # -- looking --------------------------------------------------------------------------

    def size(self) -> QueueSize:
        """Current figures."""
        with self._lock:
            memory = len(self._active) + len(self._penalized)
            return QueueSize(
                memory + self._swapped_count, self._memory_bytes + self._swapped_bytes,
                memory, self._memory_bytes, self._swapped_count, self._swapped_bytes, len(self._swapped),
                self._unacked_count, self._unacked_bytes,
            )

    def __len__(self) -> int:
        return len(self._active) + len(self._penalized) + self._swapped_count

    def is_full(self) -> bool:
        """True when back pressure applies: the object or the data-size threshold is reached."""
        settings = self._settings
        count = len(self._active) + len(self._penalized) + self._swapped_count + self._unacked_count
        if 0 < settings.back_pressure_object_threshold <= count:
            return True
        size = self._memory_bytes + self._swapped_bytes + self._unacked_bytes
        return 0 < settings.back_pressure_data_size_threshold <= size

    def availability(self) -> FlowFileAvailability:
        """Whether a poll now would find a FlowFile (read without locking: a hint, not a promise).

        Swap files that are not ready yet count as penalized FlowFiles.
        """
        if self._active or self._best_swapped is not None:
            return FlowFileAvailability.FLOWFILE_AVAILABLE
        penalized, wait = self._penalized, self._swapped_wait
        if not penalized and wait is None:
            return FlowFileAvailability.ACTIVE_QUEUE_EMPTY
        now = self._now_ms()
        if wait is not None and wait <= now:
            return FlowFileAvailability.FLOWFILE_AVAILABLE
        try:
            if penalized and penalized[0][0] <= now:
                return FlowFileAvailability.FLOWFILE_AVAILABLE
        except IndexError:
            pass
        return FlowFileAvailability.HEAD_OF_QUEUE_PENALIZED

    def peek(self, count: int) -> list[FlowFile]:
        """The first ``count`` FlowFiles held in memory, in the order they would leave.

        Ready FlowFiles come first, then penalized ones by the end of their penalty. Swapped
        FlowFiles are not listed (``size().swapped_count`` tells how many there are).
        """
        with self._lock:
            ready = [entry[-1] for entry in _smallest(self._active, count)]
            if len(ready) < count:
                ready += [entry[-1] for entry in _smallest(self._penalized, count - len(ready))]
            return ready

    def find(self, uuid: str) -> FlowFile | None:
        """The FlowFile ``uuid`` if it waits in memory (swapped ones are not looked at)."""
        with self._lock:
            for entry in itertools.chain(self._active, self._penalized):
                if entry[-1].uuid == uuid:
                    return entry[-1]
        return None

    def find_swapped(self, uuid: str) -> str | None:
        """The swap file holding FlowFile ``uuid``, or None; reads the queue's swap files."""
        for swapped in self.swapped_files():
            try:
                if self._swapper.holds(swapped.location, uuid):
                    return swapped.location
            except OSError:
                continue
        return None

    def swapped_files(self) -> list[SwappedFile]:
        """The queue's swap files, best first."""
        with self._lock:
            return sorted(self._swapped, key=lambda s: s.best_key)

    # -- internals ------------------------------------------------------------------------

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _release_penalties(self, now: int) -> None:
        penalized, active = self._penalized, self._active
        while penalized and penalized[0][0] <= now:
            _, key, flowfile = heapq.heappop(penalized)
            heapq.heappush(active, (key, flowfile))

    def _swap_out_excess(self) -> None:
        """Write the lowest-priority batch to a swap file while memory holds too many FlowFiles."""
        settings = self._settings
        if self._swapper is None or len(self._active) + len(self._penalized) <= settings.swap_threshold:
            return
        now = self._now_ms()
        while len(self._active) + len(self._penalized) > settings.swap_threshold and now >= self._swap_out_retry_at:
            entries = [(0, 0, key, f) for key, f in self._active]
            entries += [(1, until, key, f) for until, key, f in self._penalized]
            entries.sort()
            batch = min(settings.swap_batch_size, len(entries))
            keep, out = entries[: len(entries) - batch], entries[len(entries) - batch:]
            flowfiles = [f for *_, f in out]
            best = min(key for _, _, key, _ in out)
            order = {"prioritizers": list(settings.prioritizers), "best": list(best)}
            try:
                location = self._swapper.swap_out(self.identifier, flowfiles, order, now=now)
            except Exception as error:
                self._swap_out_retry_at = now + SWAP_RETRY_MS
                self._log_swap_failure(error, f"could not swap out {len(flowfiles)} FlowFiles; they stay in memory")
                return
            self._active = [(key, f) for flag, _, key, f in keep if flag == 0]
            self._penalized = [(until, key, f) for flag, until, key, f in keep if flag == 1]
            size = sum(f.size for f in flowfiles)
            self._memory_bytes -= size
            ready = min(f.penalty_expiration for f in flowfiles)
            self._add_swapped(SwappedFile(location, len(flowfiles), size, best, ready if ready > now else 0), now)

    def _swap_in_best(self, now: int) -> None:
        """Load the ready swap file with the best key; one that cannot be loaded now waits.

        A damaged file comes back with what could be read of it; its lost FlowFiles leave the
        queue's figures with it.
        """
        best = min((s for s in self._swapped if s.ready_at <= now), key=lambda s: s.best_key, default=None)
        if best is None:
            self._refresh_best_swapped(now)
            return
        try:
            flowfiles = self._swapper.swap_in(best.location)
        except Exception as error:
            self._swapped[self._swapped.index(best)] = best._replace(ready_at=now + SWAP_RETRY_MS)
            self._refresh_best_swapped(now)
            self._log_swap_failure(error, f"could not swap in {best.location}")
            return
        self._swapped.remove(best)
        self._swapped_count -= best.count
        self._swapped_bytes -= best.bytes
        self._refresh_best_swapped(now)
        key = self._key
        for flowfile in flowfiles:
            if flowfile.penalty_expiration > now:
                heapq.heappush(self._penalized, (flowfile.penalty_expiration, key(flowfile), flowfile))
            else:
                heapq.heappush(self._active, (key(flowfile), flowfile))
            self._memory_bytes += flowfile.size

    def _log_swap_failure(self, error: Exception, what: str) -> None:
        if isinstance(error, OSError):
            log.warning("queue %s %s (%s); retrying in %d ms", self.identifier, what, error, SWAP_RETRY_MS)
        else:
            log.error("queue %s %s; retrying in %d ms", self.identifier, what, SWAP_RETRY_MS, exc_info=error)

    def _add_swapped(self, swapped: SwappedFile, now: int) -> None:
        self._swapped.append(swapped)
        self._swapped_count += swapped.count
        self._swapped_bytes += swapped.bytes
        self._refresh_best_swapped(now)

    def _refresh_best_swapped(self, now: int) -> None:
        best = wait = None
        for swapped in self._swapped:
            if swapped.ready_at <= now:
                if best is None or swapped.best_key < best:
                    best = swapped.best_key
            elif wait is None or swapped.ready_at < wait:
                wait = swapped.ready_at
        self._best_swapped, self._swapped_wait = best, wait

    def _best_key_on_disk(self, location: str) -> SortKey:
        key = self._key
        return min((key(f) for f in self._swapper.read_flowfiles(location)), default=())


def _smallest(heap: list[tuple[Any, ...]], count: int) -> list[tuple[Any, ...]]:
    """The ``count`` smallest entries of ``heap``, in order, walking the heap from its root: the
    cost grows with ``count``, not with the size of the queue."""
    if count <= 0 or not heap:
        return []
    found: list[tuple[Any, ...]] = []
    frontier = [(heap[0], 0)]
    while frontier and len(found) < count:
        entry, at = heapq.heappop(frontier)
        found.append(entry)
        for child in (2 * at + 1, 2 * at + 2):
            if child < len(heap):
                heapq.heappush(frontier, (heap[child], child))
    return found
