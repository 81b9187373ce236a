"""ProcessSession: get, create, clone, read, write, route and drop FlowFiles; commit or roll back.

Commit order (each step only after the previous one succeeded):

1. check that every FlowFile has a destination (a relationship with connections, an
   auto-terminated one, or removal) and clone for each extra connection of a relationship;
2. sync the content written in the session (``always`` and ``grouped`` policies), so that the
   log never names content that could be lost;
3. write one FlowFile-repository transaction holding every change and, as its outbox entry,
   the session's provenance events (``NodeStorage.commit``);
4. register the provenance events, so that events exist only for what was committed;
5. hand the FlowFiles to their destination queues;
6. acknowledge the FlowFiles taken from the incoming queues;
7. run the callbacks registered with ``on_commit`` (a source deletes the files it picked up,
   a lister saves its state): what they do happens at least once, never before the commit.

A failure before step 3 completes rolls the session back and registers no event but the
forced ones (a SEND: what left cannot be un-sent); after a crash the transaction is either
wholly in the FlowFile repository or wholly absent from it, and a crash between steps 3 and 4
registers the session's events when the node starts again (never events for a change not
committed). From
step 4 on the commit stands: a provenance write the disk refuses waits in the repository's
backlog, and any other failure to register is logged, not raised.

A session belongs to one task at a time. ``terminate`` may come from another thread (an
operator ending a stuck task) and never waits: it rolls the session back at once, or, when a
call is in progress (a processor stuck in a write callback), as soon as that call returns; from
then on every call raises ``TaskTerminatedError``. A commit stuck before its log transaction
does not write it.

The content methods (read, write, modify) are in ``engine.session.content``.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from engine.flowfile import ContentClaim, FlowFile
from engine.uuids import new_uuid
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType as E
from engine.queue import FlowFileQueue
from engine.repository.records import RepositoryRecord
from engine.damage import Damage
from engine.session.component import SessionComponent
from engine.session.content import SessionContent
from engine.session.events import SessionEvents
from engine.session.damaged import DamagedContentError
from engine.session.guard import TaskTerminatedError, guarded as _guarded
from engine.session.reporter import ProvenanceReporter
from engine.wal import SyncPolicy
from engine.wal.serde import UpdateType

if TYPE_CHECKING:
    from engine.storage import NodeStorage

__all__ = ["DamagedContentError", "ProcessSession", "FlowFileHandlingError", "SessionCounts", "TaskTerminatedError"]

log = logging.getLogger(__name__)

#: Breaks ties between FlowFiles queued in the same millisecond.
_queue_date_index = itertools.count()

_IMMUTABLE_ATTRIBUTES = frozenset({"uuid"})
_CREATE, _UPDATE = UpdateType.CREATE, UpdateType.UPDATE
_new = tuple.__new__
DISCARD_REASON = "discard.reason"


class FlowFileHandlingError(Exception):
    """A FlowFile was used in a way the session cannot honour (unknown, stale, unrouted...)."""


@dataclass
class SessionCounts:
    """What one session moved: reported to the component's statistics when it ends."""

    flowfiles_in: int = 0
    bytes_in: int = 0
    flowfiles_out: int = 0
    bytes_out: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    committed: bool = False


@dataclass
class _Record:
    """The session's view of one FlowFile: where it came from and what it has become."""

    original: FlowFile | None
    current: FlowFile
    source: FlowFileQueue | None = None
    relationship: str | None = None
    transferred: bool = False
    removed: bool = False
    owned_claim: ContentClaim | None = None
    parents: tuple[FlowFile, ...] = ()
    #: For a FlowFile taken only to end its life (expired, queue emptied): the event and details.
    end: tuple[E, str] | None = None
    #: True for a FlowFile created from its parents by a merge (JOIN), not a split (FORK).
    join: bool = False
    #: The attributes' changes since ``original``, for the attributes they were worked out of
    #: (see ``events.updated_attributes``).
    updated: tuple[Mapping[str, str], Mapping[str, str | None]] | None = None


@dataclass
class _Held:
    event: ProvenanceEvent
    enrich: bool


@dataclass
class _CommitPlan:
    """Everything a commit writes, worked out before anything is written."""

    wal: list[RepositoryRecord] = field(default_factory=list)
    enqueue: dict[FlowFileQueue, list[FlowFile]] = field(default_factory=lambda: defaultdict(list))
    events: list[ProvenanceEvent] = field(default_factory=list)
    drop_events: list[ProvenanceEvent] = field(default_factory=list)
    discarded_claims: list[ContentClaim] = field(default_factory=list)
    clones: list[_Record] = field(default_factory=list)


class ProcessSession(SessionContent, SessionEvents):
    """One unit of work of one component over FlowFiles (NiFi's ProcessSession).

    FlowFiles are immutable: every method that changes one returns its new version, and later
    calls must pass that latest version.
    """

    def __init__(self, storage: NodeStorage, component: SessionComponent) -> None:
        self.storage = storage
        self.component = component
        self.provenance = ProvenanceReporter(self)
        self._records: dict[int, _Record] = {}
        self._held: list[_Held] = []
        self._started = time.monotonic()
        self._on_commit: list[Callable[[], None]] = []
        self._marks: dict[str, int] = {}
        self._forced: list[ProvenanceEvent] = []
        self._on_rollback: list[Callable[[], None]] = []
        self._counts = SessionCounts()
        self._lock = threading.RLock()
        self._terminated = False
        self._settled = False
        # Guarded calls in progress (they nest: write_bytes calls write).
        self._depth = 0
        #: Damage found in the content this session read (its FlowFiles were taken out).
        self.damaged_content: list[Damage] = []

    # -- taking and making FlowFiles ------------------------------------------------------

    def get(self) -> FlowFile | None:
        """The next FlowFile from the incoming queues, or None when they are empty."""
        batch = self.get_batch(1)
        return batch[0] if batch else None

    @_guarded
    def get_batch(self, max_count: int) -> list[FlowFile]:
        """Up to ``max_count`` FlowFiles from the incoming queues.

        Expired FlowFiles met on the way are taken too and dropped at commit (EXPIRE).
        """
        taken = []
        records = self._records
        counts = self._counts
        for queue, polled in self.component.poll_incoming(max_count):
            for flowfile in polled.flowfiles:
                records[flowfile.id] = _Record(flowfile, flowfile, queue)
                taken.append(flowfile)
                counts.flowfiles_in += 1
                counts.bytes_in += flowfile.size
            if polled.expired:
                end = (E.EXPIRE, _expiration_details(queue))
                for flowfile in polled.expired:
                    records[flowfile.id] = _Record(flowfile, flowfile, queue, end=end)
        return taken

    @_guarded
    def adopt(self, queue: FlowFileQueue, flowfiles: Iterable[FlowFile], event_type: E, details: str) -> None:
        """Take FlowFiles already taken from ``queue`` (expired ones, an emptied queue) to end
        them at commit with an ``event_type`` event (EXPIRE or DROP) carrying ``details``."""
        if event_type not in (E.EXPIRE, E.DROP):
            raise ValueError(f"FlowFiles can only be adopted to expire or drop them, not {event_type}")
        for flowfile in flowfiles:
            self._records[flowfile.id] = _Record(flowfile, flowfile, queue, end=(event_type, details))

    @_guarded
    def migrate(self, other: ProcessSession, flowfiles: Iterable[FlowFile]) -> None:
        """Hand FlowFiles (taken by this session, with their pending changes) over to ``other``.

        Used by processors that hold FlowFiles across triggers in sessions of their own (bins).
        Provenance events about them move too.
        """
        moved = set()
        for flowfile in flowfiles:
            record = self._record_of(flowfile)
            if record.original is None or record.parents:
                raise FlowFileHandlingError(f"FlowFile {flowfile.uuid} was created in this session: cannot migrate it")
            del self._records[flowfile.id]
            moved.add(flowfile.uuid)
            with other._lock:
                other._records[flowfile.id] = record
                other._counts.flowfiles_in += 1
                other._counts.bytes_in += record.original.size
            self._counts.flowfiles_in -= 1
            self._counts.bytes_in -= record.original.size
        kept = [held for held in self._held if held.event.flowfile_uuid not in moved]
        with other._lock:
            other._held.extend(held for held in self._held if held.event.flowfile_uuid in moved)
        self._held = kept

    def on_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once this session's next commit has succeeded (never on rollback)."""
        self._on_commit.append(callback)

    def commit_mark(self, key: str, at: int) -> None:
        """Write the mark ``key`` with the time ``at`` (ms since the epoch) in the log transaction
        of the session's next commit; a later mark of the same key replaces it.

        A processor that keeps state beside its commits (a file position) saves the new state as
        pending with the time of the mark before committing, and after a crash compares that time
        with ``committed_mark(key)`` to learn which state stands. Marks are forgotten once older
        than the repository's ``transfer_mark_window`` (24 hours).
        """
        self._marks[key] = at

    def committed_mark(self, key: str) -> int | None:
        """The time of the last committed mark ``key`` (see ``commit_mark``); None if none is known."""
        return self.storage.flowfiles.wal.transfer_marks.get(key)

    def on_rollback(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` if this session is rolled back (or its task terminated) instead of
        committed: release what was reserved for the work of the session."""
        self._on_rollback.append(callback)

    @property
    def counts(self) -> SessionCounts:
        """What the session has moved so far."""
        return self._counts

    @_guarded
    def create(self, parents: FlowFile | Sequence[FlowFile] | None = None) -> FlowFile:
        """A new FlowFile without content; with parents it inherits their attributes and lineage.

        A single parent FlowFile records a FORK at commit (the parent is split into children);
        a sequence of parents records a JOIN (they are merged into the child), even when it
        holds only one.
        """
        join = not isinstance(parents, FlowFile) and parents is not None
        if isinstance(parents, FlowFile):
            parents = (parents,)
        parents = tuple([self._require_current(p) for p in parents]) if parents else ()
        now = self._now_ms()
        new_id = self.storage.flowfiles.next_id()
        flowfile_uuid = new_uuid()
        if parents:
            attributes = _common_attributes(parents)
            oldest = min(parents, key=lambda p: (p.lineage_start_date, p.lineage_start_index))
            lineage = (oldest.lineage_start_date, oldest.lineage_start_index)
        else:
            attributes = {"filename": flowfile_uuid, "path": "./"}
            lineage = (now, new_id)
        attributes["uuid"] = flowfile_uuid
        flowfile = FlowFile(new_id, flowfile_uuid, attributes, None, now, lineage[0], lineage[1])
        self._records[new_id] = _Record(None, flowfile, parents=parents, join=join and bool(parents))
        return flowfile

    @_guarded
    def clone(self, flowfile: FlowFile, offset: int | None = None, size: int | None = None) -> FlowFile:
        """A copy sharing the content (no bytes copied); with ``offset``/``size`` a slice of it.

        A whole clone records CLONE, a slice FORK.
        """
        flowfile = self._require_current(flowfile)
        claim = flowfile.content_claim
        if offset is not None or size is not None:
            if claim is None:
                if offset or size:
                    raise FlowFileHandlingError(f"cannot slice FlowFile {flowfile.uuid}: it has no content")
            else:
                claim = claim.slice(offset or 0, flowfile.size - (offset or 0) if size is None else size)
        new_id = self.storage.flowfiles.next_id()
        flowfile_uuid = new_uuid()
        attributes = dict(flowfile.attributes)
        attributes["uuid"] = flowfile_uuid
        child = flowfile._replace(id=new_id, uuid=flowfile_uuid, attributes=attributes, content_claim=claim,
                                  entry_date=self._now_ms(), penalty_expiration=0)
        if claim is not None:
            self.storage.claims.increment(claim.resource_claim)
        whole = offset is None and size is None
        self._records[new_id] = _Record(None, child, owned_claim=claim, parents=() if whole else (flowfile,))
        if whole:
            event = self._generated(E.CLONE, flowfile, parent_uuids=(flowfile.uuid,), child_uuids=(flowfile_uuid,))
            self._hold(self.provenance._snapshot(event, flowfile), enrich=False)
        return child

    # -- attributes, routing, removal -----------------------------------------------------

    def put_attribute(self, flowfile: FlowFile, key: str, value: str) -> FlowFile:
        """Set one attribute (``uuid`` cannot be changed)."""
        return self.put_all_attributes(flowfile, {key: value})

    @_guarded
    def put_all_attributes(self, flowfile: FlowFile, attributes: Mapping[str, str]) -> FlowFile:
        """Set several attributes (``uuid`` cannot be changed)."""
        record = self._record_of(flowfile)
        updates = {k: str(v) for k, v in attributes.items() if k not in _IMMUTABLE_ATTRIBUTES}
        record.current = record.current.with_attributes(updates)
        return record.current

    def remove_attribute(self, flowfile: FlowFile, key: str) -> FlowFile:
        """Remove one attribute."""
        return self.remove_all_attributes(flowfile, (key,))

    @_guarded
    def remove_all_attributes(self, flowfile: FlowFile, keys: Iterable[str]) -> FlowFile:
        """Remove several attributes (``uuid`` stays)."""
        record = self._record_of(flowfile)
        record.current = record.current.with_attributes(removed=set(keys) - _IMMUTABLE_ATTRIBUTES)
        return record.current

    @_guarded
    def penalize(self, flowfile: FlowFile) -> FlowFile:
        """Keep the FlowFile from being processed again for the component's penalty duration."""
        record = self._record_of(flowfile)
        expiry = self._now_ms() + int(self.component.penalty_duration * 1000)
        record.current = record.current._replace(penalty_expiration=expiry)
        return record.current

    @_guarded
    def transfer(self, flowfile: FlowFile, relationship: str | None = None) -> None:
        """Send the FlowFile to ``relationship`` (a name, or an object with a ``name``); without
        one, back to the queue it came from."""
        if relationship is not None and not isinstance(relationship, str):
            relationship = relationship.name
        record = self._record_of(flowfile)
        if relationship is None and record.source is None:
            raise FlowFileHandlingError(
                f"FlowFile {flowfile.uuid} was created in this session and has no queue to go back to"
            )
        if relationship is not None and relationship not in self.component.outgoing \
                and relationship not in self.component.auto_terminated:
            raise FlowFileHandlingError(
                f"{self.component.component_type} {self.component.identifier} has no relationship {relationship!r}"
            )
        record.relationship = relationship
        record.transferred = True
        record.removed = False

    @_guarded
    def remove(self, flowfile: FlowFile) -> None:
        """Drop the FlowFile (a DROP event records it, with its ``discard.reason`` attribute)."""
        record = self._record_of(flowfile)
        record.removed = True
        record.transferred = False

    # -- commit and rollback --------------------------------------------------------------

    @_guarded
    def commit(self) -> None:
        """Make every change of the session durable and visible at once (see the module docstring)."""
        storage = self.storage
        plan = _CommitPlan()
        try:
            self._plan(plan)
            if storage.flowfiles.sync_policy is not SyncPolicy.OS:
                written = {r.owned_claim.resource_claim for r in self._all_records(plan) if r.owned_claim}
                if written:
                    storage.content.sync(written)
            if self._terminated:
                raise self._terminated_error()
            events = self._forced + plan.events + plan.drop_events
            storage.commit(plan.wal, events)
        except BaseException:
            for clone in plan.clones:
                if clone.owned_claim is not None:
                    storage.claims.decrement(clone.owned_claim.resource_claim)
            self.rollback()
            raise
        self._forced = []
        counts = self._counts
        for queue, flowfiles in plan.enqueue.items():
            queue.put_all(flowfiles)
            counts.flowfiles_out += len(flowfiles)
            counts.bytes_out += sum(f.size for f in flowfiles)
        if plan.discarded_claims:
            storage.claims.decrement_all(claim.resource_claim for claim in plan.discarded_claims)
        self._acknowledge()
        callbacks = self._on_commit
        counts.committed = True
        self._reset()
        _run_callbacks(callbacks, "commit", self.component)

    @_guarded
    def rollback(self, penalize: bool = False) -> None:
        """Undo the session: FlowFiles go back to their queues as they were, new content is dropped."""
        self._rollback(penalize)

    def terminate(self) -> None:
        """Discard the session's work for good (the task was terminated); later calls raise.

        Never waits: a call in progress rolls the session back when it returns.
        """
        self._terminated = True
        if self._lock.acquire(blocking=False):
            try:
                self._settle_termination()
            finally:
                self._lock.release()

    @property
    def terminated(self) -> bool:
        """True once ``terminate`` has been called."""
        return self._terminated

    def _settle_termination(self) -> None:
        """Roll a terminated session back once no call is in progress (idempotent)."""
        with self._lock:
            if self._settled or self._depth:
                return
            self._settled = True
            self._rollback(penalize=False)

    def _terminated_error(self) -> TaskTerminatedError:
        return TaskTerminatedError(
            f"the task of {self.component.component_type} {self.component.identifier} was terminated"
        )

    def _check_alive(self) -> None:
        """Raise ``TaskTerminatedError`` once the session was terminated (streams call it)."""
        if self._terminated:
            raise self._terminated_error()

    def _rollback(self, penalize: bool) -> None:
        self._register_forced()
        claims = self.storage.claims
        for record in self._records.values():
            if record.owned_claim is not None:
                claims.decrement(record.owned_claim.resource_claim)
        requeue: dict[FlowFileQueue, list[FlowFile]] = defaultdict(list)
        expiry = self._now_ms() + int(self.component.penalty_duration * 1000)
        for record in self._records.values():
            if record.original is not None:
                original = record.original
                if penalize:
                    original = original._replace(penalty_expiration=expiry)
                requeue[record.source].append(original)
        for queue, flowfiles in requeue.items():
            queue.put_all(flowfiles)
        self._acknowledge()
        callbacks = self._on_rollback
        self._reset()
        _run_callbacks(callbacks, "rollback", self.component)

    def _acknowledge(self) -> None:
        taken: dict[FlowFileQueue, list[FlowFile]] = defaultdict(list)
        for record in self._records.values():
            if record.original is not None:
                taken[record.source].append(record.original)
        for queue, flowfiles in taken.items():
            queue.acknowledge(flowfiles)

    def _reset(self) -> None:
        report = self.component.on_session_end
        if report is not None and (self._records or self._counts.bytes_read or self._counts.bytes_written):
            try:
                report(self._counts)
            except Exception:
                log.exception("reporting the counts of a session failed")
        self._records = {}
        self._held = []
        self._forced = []
        self._on_commit = []
        self._marks = {}
        self._on_rollback = []
        self._counts = SessionCounts()
        self._started = time.monotonic()

    def _all_records(self, plan: _CommitPlan) -> Iterable[_Record]:
        yield from self._records.values()
        yield from plan.clones

    def _plan(self, plan: _CommitPlan) -> None:
        """Work out the log records, queue hand-offs and provenance events of a commit."""
        component = self.component
        now = self._now_ms()
        duration = int((time.monotonic() - self._started) * 1000)
        for record in list(self._records.values()):
            if record.end is not None:
                self._plan_end(record, plan)
                continue
            if not record.transferred and not record.removed:
                raise FlowFileHandlingError(
                    f"FlowFile {record.current.uuid} was neither transferred nor removed by "
                    f"{component.component_type} {component.identifier}"
                )
            if record.removed:
                self._plan_drop(record, plan, None)
                continue
            if record.relationship is None:
                queues = [record.source]
            else:
                queues = list(component.outgoing.get(record.relationship, ()))
                if not queues:
                    if record.relationship in component.auto_terminated:
                        self._plan_drop(record, plan, record.relationship)
                        continue
                    raise FlowFileHandlingError(
                        f"relationship {record.relationship!r} of {component.component_type} "
                        f"{component.identifier} is neither connected nor auto-terminated"
                    )
            self._plan_transfer(record, queues[0], plan, now)
            for extra in queues[1:]:
                clone = self._clone_for(record, plan, duration)
                self._plan_transfer(clone, extra, plan, now)
        plan.wal.extend(RepositoryRecord.transfer_mark(key, at) for key, at in self._marks.items())
        plan.events = self._plan_events(plan, duration)

    def _plan_transfer(self, record: _Record, queue: FlowFileQueue, plan: _CommitPlan, now: int) -> None:
        current = record.current
        # FlowFile fields 7 and 8 are the queue date and its index; built without _replace,
        # which costs several times more on this per-FlowFile path.
        flowfile = _new(FlowFile, (*current[:7], now, next(_queue_date_index), current[9]))
        record.current = flowfile
        original = record.original
        if original is None:
            plan.wal.append(_new(RepositoryRecord, (_CREATE, flowfile, queue.identifier, None, None, None, None)))
        else:
            plan.wal.append(_new(RepositoryRecord, (_UPDATE, flowfile, queue.identifier, None, None,
                                                    original.content_claim, None)))
        plan.enqueue[queue].append(flowfile)

    def _plan_drop(self, record: _Record, plan: _CommitPlan, relationship: str | None) -> None:
        if record.original is not None:
            plan.wal.append(RepositoryRecord.delete(record.original))
            if record.owned_claim is not None:
                plan.discarded_claims.append(record.owned_claim)
        elif record.owned_claim is not None:
            plan.discarded_claims.append(record.owned_claim)
        if record.original is None and relationship is None:
            return  # created and removed in the same session: it never existed for anyone else
        flowfile = record.current
        if relationship is not None:
            details = f"Auto-Terminated by {relationship} Relationship"
        else:
            details = flowfile.attributes.get(DISCARD_REASON)
        plan.drop_events.append(self._event_for(E.DROP, record, -1, details=details))

    def _plan_end(self, record: _Record, plan: _CommitPlan) -> None:
        event_type, details = record.end
        plan.wal.append(RepositoryRecord.delete(record.original))
        plan.drop_events.append(self._event_for(event_type, record, -1, details=details))

    def _clone_for(self, source: _Record, plan: _CommitPlan, duration: int) -> _Record:
        """A clone of ``source`` for one more connection of its relationship (with its CLONE event)."""
        flowfile = source.current
        new_id = self.storage.flowfiles.next_id()
        flowfile_uuid = new_uuid()
        attributes = dict(flowfile.attributes)
        attributes["uuid"] = flowfile_uuid
        child = flowfile._replace(id=new_id, uuid=flowfile_uuid, attributes=attributes)
        if child.content_claim is not None:
            self.storage.claims.increment(child.content_claim.resource_claim)
        record = _Record(None, child, owned_claim=child.content_claim)
        plan.clones.append(record)
        event = self._generated(E.CLONE, flowfile, parent_uuids=(flowfile.uuid,), child_uuids=(flowfile_uuid,))
        plan.events.append(self._complete(event, source, duration))
        return record

    def _now_ms(self) -> int:
        return int(self.component.clock() * 1000)

    # -- bookkeeping used by the reporter -------------------------------------------------

    def _hold(self, event: ProvenanceEvent, *, enrich: bool = True) -> None:
        self._held.append(_Held(event, enrich))

    def _force(self, event: ProvenanceEvent) -> None:
        """Keep an event that is recorded whatever becomes of the session (a SEND: what left
        cannot be un-sent); it is written with the commit, or by a rollback."""
        self._forced.append(event)

    def _register_forced(self) -> None:
        if self._forced:
            try:
                self.storage.provenance.append_events(self._forced)
            except Exception:
                log.exception("could not record %d provenance event(s) of data sent before a rollback",
                              len(self._forced))
            self._forced = []

    def _record_of(self, flowfile: FlowFile) -> _Record:
        record = self._records.get(flowfile.id)
        if record is None:
            raise FlowFileHandlingError(f"FlowFile {flowfile.uuid} does not belong to this session")
        if record.current is not flowfile and record.current != flowfile:
            raise FlowFileHandlingError(
                f"FlowFile {flowfile.uuid} is not the latest version: use the one the last call returned"
            )
        return record

    def _require_current(self, flowfile: FlowFile) -> FlowFile:
        return self._record_of(flowfile).current

    def _original_of(self, flowfile: FlowFile) -> FlowFile | None:
        return self._records[flowfile.id].original


def _common_attributes(parents: Sequence[FlowFile]) -> dict[str, str]:
    first = dict(parents[0].attributes)
    for parent in parents[1:]:
        other = parent.attributes
        first = {k: v for k, v in first.items() if other.get(k) == v}
    return first


def _run_callbacks(callbacks: list[Callable[[], None]], when: str, component: SessionComponent) -> None:
    for callback in callbacks:
        try:
            callback()
        except Exception:
            log.exception("a %s callback of %s %s failed", when, component.component_type, component.identifier)



def _expiration_details(queue: FlowFileQueue) -> str:
    seconds = queue.settings.expiration
    period = f"{int(seconds)} sec" if seconds == int(seconds) else f"{seconds * 1000:g} millis"
    return f"Expiration Threshold = {period}"
