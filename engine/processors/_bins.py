"""Bins of FlowFiles waiting to be merged: the binning MergeContent and MergeRecord share.

A ``BinningProcessor`` takes FlowFiles from its queue, puts each into a bin of its group (one
group per correlation value, fragment identifier or schema), and hands a bin to ``merge_bin``
once it is due: full (a maximum reached), full enough (the minimums reached, when no FlowFile
came in), older than Max Bin Age, or the oldest when one more bin is needed than Maximum
Number of Bins allows. FlowFiles waiting in a bin stay in a session of the bin's own, committed
only when the bin is merged; stopping the processor rolls the open bins back.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from engine.components import Processor
from engine.session.session import TaskTerminatedError

if TYPE_CHECKING:
    from engine.components import ProcessContext
    from engine.flowfile import FlowFile
    from engine.session import ProcessSession

__all__ = ["Bin", "BinningProcessor", "Member", "Thresholds", "UNBOUNDED", "defragment_problem", "keep_common",
           "keep_first", "keep_unique",
           "roll_back", "FRAGMENT_COUNT", "FRAGMENT_ID", "FRAGMENT_INDEX"]

FRAGMENT_ID = "fragment.identifier"
FRAGMENT_INDEX = "fragment.index"
FRAGMENT_COUNT = "fragment.count"

# Why a bin was merged (MergeContent's merge.reason values, NiFi's names).
REASON_MAX_BYTES = "MAX_BYTES_THRESHOLD_REACHED"
REASON_MAX_ENTRIES = "MAX_ENTRIES_THRESHOLD_REACHED"
REASON_MIN_THRESHOLDS = "MIN_THRESHOLDS_REACHED"
REASON_TIMEOUT = "TIMEOUT"
REASON_BIN_MANAGER_FULL = "BIN_MANAGER_FULL"
REASON_UNSET = "UNSET"

_BATCH = 1000


class Thresholds(NamedTuple):
    """When a bin is full enough (the minimums) and full (a maximum); ``inf`` for no maximum.
    Entries are FlowFiles (MergeContent) or records (MergeRecord)."""

    min_size: float
    max_size: float
    min_entries: float
    max_entries: float


UNBOUNDED = Thresholds(0, float("inf"), 0, float("inf"))


class Member(NamedTuple):
    """A FlowFile to bin: its group, how many entries it counts for, and what the merge needs
    of it later (MergeRecord keeps the records it read)."""

    flowfile: FlowFile
    group: Any
    entries: int = 1
    payload: Any = None


class Bin:
    """FlowFiles waiting to be merged, held (uncommitted) in a session of their own.

    With ``soft`` limits a bin takes a FlowFile as long as it is not full yet (so the maxima may
    be passed by the last FlowFile, as in MergeRecord); otherwise only a FlowFile that keeps it
    within them (MergeContent). Defragmenting, a bin is complete when it holds fragment.count
    fragments; ``require_index`` also asks each fragment for a fragment.index unique in the bin.
    """

    __slots__ = ("contents", "created", "defragment", "entries", "failed_offers", "indexes", "max_entries",
                 "max_size", "min_entries", "min_size", "payloads", "reason", "require_index", "session", "size",
                 "soft")

    def __init__(self, session: ProcessSession, created: float, thresholds: Thresholds, defragment: bool, *,
                 soft: bool = False, require_index: bool = True) -> None:
        self.session = session
        self.created = created
        self.defragment = defragment
        self.soft = soft
        self.require_index = require_index
        if defragment:
            # Until a fragment.count arrives, nothing but age completes the bin.
            thresholds = Thresholds(0, float("inf"), float("inf"), float("inf"))
        self.min_size, self.max_size, self.min_entries, self.max_entries = thresholds
        self.contents: list[FlowFile] = []
        self.payloads: list[Any] = []
        self.size = 0
        self.entries = 0
        self.indexes: set[str] = set()
        self.failed_offers = 0
        self.reason = REASON_UNSET

    def offer(self, member: Member, source: ProcessSession) -> bool:
        """Take the member's FlowFile (moving it into the bin's session) if it fits; False otherwise."""
        flowfile = member.flowfile
        if self.soft:
            refused = self.size >= self.max_size or self.entries >= self.max_entries
        else:
            refused = self.size + flowfile.size > self.max_size or self.entries >= self.max_entries
        if refused:
            self.failed_offers += 1
            return False
        if self.defragment:
            count = flowfile.attributes.get(FRAGMENT_COUNT, "")
            if count.isdigit():
                self.min_entries = self.max_entries = int(count)
            index = flowfile.attributes.get(FRAGMENT_INDEX)
            if (self.require_index and not index) or (index is not None and index in self.indexes):
                self.failed_offers += 1
                return False
            if index is not None:
                self.indexes.add(index)
        source.migrate(self.session, (flowfile,))
        self.contents.append(flowfile)
        self.payloads.append(member.payload)
        self.size += flowfile.size
        # Defragmenting counts fragments, whatever they hold.
        self.entries += 1 if self.defragment else member.entries
        self.failed_offers = 0
        return True

    def full(self) -> bool:
        """Nothing more should go in: a maximum is reached, or the minimums are and offers keep failing."""
        return (self.size >= self.max_size or self.entries >= self.max_entries
                or (self._minimums_met() and self.failed_offers > 5))

    def full_enough(self) -> bool:
        """The minimums are reached (or the bin is full)."""
        return self.full() or self._minimums_met()

    def fullness_reason(self) -> str:
        """Which threshold makes the bin due (a merge.reason value)."""
        if self.size >= self.max_size:
            return REASON_MAX_BYTES
        if self.entries >= self.max_entries:
            return REASON_MAX_ENTRIES
        if self._minimums_met():
            return REASON_MIN_THRESHOLDS
        return REASON_UNSET

    def _minimums_met(self) -> bool:
        return self.size >= self.min_size and self.entries >= self.min_entries


class BinningProcessor(Processor):
    """A processor that merges bins of FlowFiles (see the module docstring).

    Subclasses call ``configure_bins`` from ``on_scheduled`` and implement ``members`` (group the
    FlowFiles taken from the queue, routing those that cannot be binned) and ``merge_bin``
    (merge one due bin and commit its session). The processor is triggered even when no
    FlowFile waits, so that aged bins are merged on time; with nothing to do it yields.
    """

    abstract = True
    trigger_when_empty = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bins: dict[Any, list[Bin]] = {}
        self._bin_count = 0
        self._ready: deque[Bin] = deque()
        self._scheduled = False

    def configure_bins(self, thresholds: Thresholds, max_age: float | None, max_bins: int, *,
                       defragment: bool = False, soft: bool = False, require_index: bool = True) -> None:
        """Set how bins fill and age (from ``on_scheduled``); the processor is then scheduled."""
        self._thresholds = thresholds
        self._max_age = float("inf") if max_age is None else max_age
        self._max_bins = max_bins
        self._defragment = defragment
        self._soft = soft
        self._require_index = require_index
        self._scheduled = True

    def members(self, context: ProcessContext, session: ProcessSession,
                flowfiles: list[FlowFile]) -> list[Member]:
        """The FlowFiles of ``flowfiles`` to bin, with their groups; route the others (failure)."""
        raise NotImplementedError

    def merge_bin(self, context: ProcessContext, bin_: Bin) -> None:
        """Merge a due bin and commit (or roll back) its session."""
        raise NotImplementedError

    def on_unscheduled(self, context):
        self._scheduled = False

    def on_stopped(self, context):
        self._scheduled = False
        with self._lock:
            bins = [bin_ for group in self._bins.values() for bin_ in group] + list(self._ready)
            self._bins.clear()
            self._bin_count = 0
            self._ready.clear()
        for bin_ in bins:
            roll_back(bin_.session, context)

    # -- one trigger ----------------------------------------------------------------------

    def on_trigger(self, context, session):
        with self._lock:
            open_bins = self._bin_count + len(self._ready)
        binned, new_bin_needed = 0, False
        created: list[Bin] = []
        try:
            if open_bins <= self._max_bins:
                binned, new_bin_needed = self._bin_flowfiles(context, session, created)
            if not self._scheduled:
                return
            moved = self._take_ready_bins(context, relax=binned == 0, new_bin_needed=new_bin_needed)
            merged = self._process_ready_bins(context)
        except BaseException:
            # The runtime rolls back the sessions this task opened: forget the bins they hold.
            self._discard(created, context)
            raise
        if not (binned or moved or merged):
            context.yield_processor()

    def _new_bin(self, context, thresholds: Thresholds) -> Bin:
        return Bin(context.create_session(), context.clock.monotonic(), thresholds, self._defragment,
                   soft=self._soft, require_index=self._require_index)

    def _bin_flowfiles(self, context, session, created: list[Bin]) -> tuple[int, bool]:
        """Move FlowFiles from the queue into bins (new bins are added to ``created``); returns how
        many, and whether one found no room."""
        binned = 0
        new_bin_needed = False
        while self._scheduled:
            with self._lock:
                if self._bin_count > self._max_bins:
                    break
            flowfiles = session.get_batch(_BATCH)
            if not flowfiles:
                break
            groups: dict[Any, list[Member]] = {}
            for member in self.members(context, session, flowfiles):
                groups.setdefault(member.group, []).append(member)
            with self._lock:
                for group, members in groups.items():
                    unbinned = self._offer(context, group, members, session, created)
                    new_bin_needed = new_bin_needed or bool(unbinned)
                    for member in unbinned:
                        # A FlowFile no bin can take is merged on its own.
                        alone = Bin(context.create_session(), context.clock.monotonic(), UNBOUNDED, False)
                        created.append(alone)
                        alone.offer(member, session)
                        self._ready.append(alone)
                    binned += len(members)
        return binned, new_bin_needed

    def _offer(self, context, group, members: list[Member], session, created) -> list[Member]:
        """Put ``members`` into the group's bins, opening bins as needed (lock held); returns the
        members that fit no bin."""
        bins = self._bins.setdefault(group, [])
        unbinned = []
        for member in members:
            if not self._soft and member.flowfile.size > self._thresholds.max_size:
                unbinned.append(member)
                continue
            if any(bin_.offer(member, session) for bin_ in bins):
                continue
            bin_ = self._new_bin(context, self._thresholds)
            if bin_.offer(member, session):
                bins.append(bin_)
                created.append(bin_)
                self._bin_count += 1
            else:
                unbinned.append(member)
        if not bins:
            del self._bins[group]
        return unbinned

    def _discard(self, bins: list[Bin], context) -> None:
        """Forget bins opened by a trigger that failed, returning their FlowFiles to the queue (a bin
        already merged is gone from the bins, and its committed session has nothing to undo)."""
        doomed = {id(bin_) for bin_ in bins}
        with self._lock:
            for group in list(self._bins):
                kept = [bin_ for bin_ in self._bins[group] if id(bin_) not in doomed]
                self._bin_count -= len(self._bins[group]) - len(kept)
                if kept:
                    self._bins[group] = kept
                else:
                    del self._bins[group]
            self._ready = deque(bin_ for bin_ in self._ready if id(bin_) not in doomed)
        for bin_ in bins:
            roll_back(bin_.session, context)

    def _take_ready_bins(self, context, relax: bool, new_bin_needed: bool) -> int:
        """Move the bins due for merging to the ready queue; returns how many moved.

        Full bins are due; with ``relax`` (no FlowFile came in) so are bins that reached the
        minimums; bins older than Max Bin Age always are. When none is due but the bins are too
        many (or one more is needed and there is no room), the oldest one is.
        """
        now = context.clock.monotonic()
        moved = 0
        with self._lock:
            for group in list(self._bins):
                kept = []
                for bin_ in self._bins[group]:
                    if (bin_.full_enough() if relax else bin_.full()):
                        bin_.reason = bin_.fullness_reason()
                    elif now - bin_.created > self._max_age:
                        bin_.reason = REASON_TIMEOUT
                    else:
                        kept.append(bin_)
                        continue
                    self._ready.append(bin_)
                    moved += 1
                if kept:
                    self._bins[group] = kept
                else:
                    del self._bins[group]
            self._bin_count -= moved
            count = self._bin_count
            if not moved and (count > self._max_bins or (count == self._max_bins and new_bin_needed)):
                group, oldest = min(((group, bin_) for group, bins in self._bins.items() for bin_ in bins),
                                    key=lambda item: item[1].created)
                self._bins[group].remove(oldest)
                if not self._bins[group]:
                    del self._bins[group]
                self._bin_count -= 1
                oldest.reason = REASON_BIN_MANAGER_FULL
                self._ready.append(oldest)
                moved = 1
        return moved

    def _process_ready_bins(self, context) -> int:
        processed = 0
        while self._scheduled:
            with self._lock:
                if not self._ready:
                    break
                bin_ = self._ready.popleft()
            processed += 1
            if not bin_.session.terminated:  # else its FlowFiles are back in the queue already
                self.merge_bin(context, bin_)
        return processed


def defragment_problem(contents: Sequence[FlowFile], require_index: bool = True) -> str | None:
    """Why the fragments cannot be put back together, or None when they can."""
    count = None
    identifier = None
    for flowfile in contents:
        attributes = flowfile.attributes
        identifier = attributes.get(FRAGMENT_ID)
        if require_index and not attributes.get(FRAGMENT_INDEX, "").isdigit():
            return f"cannot defragment {flowfile.uuid}: it has no integer {FRAGMENT_INDEX} attribute"
        fragment_count = attributes.get(FRAGMENT_COUNT)
        if fragment_count is None:
            continue
        if not fragment_count.isdigit():
            return f"cannot defragment {flowfile.uuid}: its {FRAGMENT_COUNT} attribute is not an integer"
        if count is None:
            count = fragment_count
        elif count != fragment_count:
            return (f"cannot defragment {flowfile.uuid}: its {FRAGMENT_COUNT} is {fragment_count} but another "
                    f"fragment of the group says {count}")
    if count is None:
        return (f"cannot defragment the fragments of {identifier}: none has a {FRAGMENT_COUNT} attribute, so "
                "the number expected is unknown")
    if len(contents) != int(count):
        return (f"cannot defragment the fragments of {identifier}: {count} are expected but "
                f"{len(contents)} arrived")
    return None


def keep_common(flowfiles: Sequence[FlowFile]) -> dict[str, str]:
    """The attributes every FlowFile has, with the same value (Keep Only Common Attributes)."""
    first, rest = flowfiles[0], flowfiles[1:]
    kept = {key: value for key, value in first.attributes.items()
            if all(other.attributes.get(key) == value for other in rest)}
    kept.pop("uuid", None)
    return kept


def keep_unique(flowfiles: Sequence[FlowFile]) -> dict[str, str]:
    """Every attribute no two FlowFiles disagree on (Keep All Unique Attributes)."""
    kept: dict[str, str] = {}
    conflicting: set[str] = set()
    for flowfile in flowfiles:
        for key, value in flowfile.attributes.items():
            if kept.get(key, value) != value:
                conflicting.add(key)
            else:
                kept[key] = value
    for key in conflicting | {"uuid"}:
        kept.pop(key, None)
    return kept


def keep_first(flowfiles: Sequence[FlowFile]) -> dict[str, str]:
    """For each attribute, the value of the first FlowFile that has it (Keep First Attributes)."""
    kept: dict[str, str] = {}
    for flowfile in flowfiles:
        for key, value in flowfile.attributes.items():
            kept.setdefault(key, value)
    kept.pop("uuid", None)
    return kept


def roll_back(session: ProcessSession, context: ProcessContext, penalize: bool = False) -> None:
    """Roll a bin's session back, logging (not raising) a failure to."""
    try:
        session.rollback(penalize=penalize)
    except TaskTerminatedError:
        pass  # a terminated task's sessions were rolled back when it was terminated
    except Exception as error:
        context.logger.error("rolling back a bin failed: %s: %s", type(error).__name__, error)
