"""Connectables (processors, funnels, ports) and the connections between them; how one task of
a connectable runs; and the start/stop life cycle they share.

One task (NiFi's ConnectableTask) does, in order: skip if the component is yielded; skip if it
runs on the primary node only and this node is not primary; skip when there is no work (no
FlowFile ready in an incoming queue, unless it needs none); skip under back pressure (a
relationship whose connections include a full one); then trigger it with a new session and
commit. With a run duration, triggers repeat on the same session until the time is used up or
the work runs out, and one commit covers them all. A processor that raises ``ProcessException``
has its session rolled back (its FlowFiles penalized); any other error also yields it
administratively (30 s by default). A task whose session found damaged content (and took that
FlowFile out, see ``engine.session.damaged``) is neither penalized nor yielded, whatever the
processor raised about it: the other FlowFiles flow on at the next trigger.

While the node is paused for lack of disk space (``engine.runtime.disk_space``) tasks are
skipped like under back pressure. A session that fails because the disk is full is rolled back
without penalizing its FlowFiles, and the component yields for its own yield duration.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from engine.components.errors import ProcessException
from engine.confinement import NodeConfinement
from engine.flow.model import ConnectionConfig
from engine.queue import FlowFileAvailability, FlowFileQueue
from engine.runtime.bulletins import BulletinBoard, ComponentLogger
from engine.runtime.disk_space import is_disk_full
from engine.runtime.stats import ComponentStats
from engine.session import ProcessSession, SessionComponent
from engine.session.session import SessionCounts, TaskTerminatedError

if TYPE_CHECKING:
    from engine.runtime.clock import Clock
    from engine.runtime.config import RuntimeConfig
    from engine.cron import CronSchedule
    from engine.runtime.disk_space import DiskSpaceMonitor
    from engine.runtime.state import LocalStateProvider
    from engine.storage import NodeStorage

__all__ = [
    "ActiveTask", "ComponentStateError", "Connectable", "Connection", "NodeRole", "Outcome", "Runtime",
    "ScheduledState",
]

_AVAILABLE = FlowFileAvailability.FLOWFILE_AVAILABLE
_task_ids = itertools.count(1)
_current = threading.local()


class ScheduledState(str, Enum):
    """Whether a component is meant to run."""

    DISABLED = "DISABLED"
    STOPPED = "STOPPED"
    RUNNING = "RUNNING"


class Outcome(Enum):
    """What one task did, which decides when the component is next triggered."""

    DID_WORK = "did work"
    NO_WORK = "no work"
    BACK_PRESSURE = "back pressure"
    DISK_FULL = "disk full"
    NOT_PRIMARY = "not the primary node"
    YIELDED = "yielded"
    FAILED = "failed"
    TERMINATED = "terminated"
    NOT_RUNNING = "not running"


class ComponentStateError(RuntimeError):
    """An operation the component's current state does not allow (start a disabled processor...)."""


class NodeRole:
    """Whether this node is part of a cluster and whether it is the primary node.

    A lone node is its own primary. The cluster agent updates these as elections go, and sets
    ``primary_until`` (a ``time.monotonic()`` deadline) to the moment its primary lease could
    expire without renewal: past it the node stops acting as the primary node even if the agent
    is late to notice, so primary-node-only processors never outlive the lease.
    """

    def __init__(self, clustered: bool = False, primary: bool = True) -> None:
        self.is_clustered = clustered
        self._primary = primary
        self.primary_until: float | None = None

    @property
    def appointed(self) -> bool:
        """Made the primary node (whether or not the lease's deadline has passed)."""
        return self._primary

    @property
    def is_primary(self) -> bool:
        """Acting as the primary node now."""
        return self._primary and (self.primary_until is None or time.monotonic() < self.primary_until)

    @is_primary.setter
    def is_primary(self, value: bool) -> None:
        self._primary = value


@dataclass
class Runtime:
    """What every component of a node shares."""

    storage: NodeStorage
    config: RuntimeConfig
    clock: Clock
    bulletins: BulletinBoard
    role: NodeRole
    local_state: LocalStateProvider
    cluster_state: Any = None
    #: What sessions do with FlowFiles whose content is damaged (``DamagedContentPolicy``).
    damaged_content: Any = None
    disk_space: DiskSpaceMonitor | None = None
    #: The node-wide confinement and the tenants of the flow (``engine.confinement``).
    confinement: NodeConfinement = field(default_factory=NodeConfinement)


@dataclass
class ActiveTask:
    """A task running now: its thread, and the sessions it opened (for terminate)."""

    node: Connectable
    thread_id: int
    started: float
    id: int = field(default_factory=lambda: next(_task_ids))
    sessions: list[ProcessSession] = field(default_factory=list)
    terminated: bool = False


class Connection:
    """A connection: its queue, and the relationships of its source it carries."""

    def __init__(self, config: ConnectionConfig, source: Connectable, destination: Connectable,
                 queue: FlowFileQueue) -> None:
        self.config = config
        self.identifier = config.identifier
        self.source = source
        self.destination = destination
        self.queue = queue
        # Funnels and ports have a single, unnamed relationship whatever a flow file says.
        self.relationships = (tuple(config.selected_relationships) or ("",)) if source.kind == "PROCESSOR" else ("",)

    @property
    def name(self) -> str:
        """The connection's name (its relationships when it has none)."""
        return self.config.name or ", ".join(r for r in self.relationships if r)

    @property
    def group_id(self) -> str:
        """The process group the connection belongs to."""
        return self.config.group_id

    def is_self_loop(self) -> bool:
        """True when the connection leads back to its own source."""
        return self.source is self.destination


class Connectable:
    """Something that takes FlowFiles from incoming connections and sends them on: the shared
    part of processors, funnels and ports."""

    kind = "PROCESSOR"

    def __init__(self, identifier: str, name: str, group_id: str, runtime: Runtime) -> None:
        self.identifier = identifier
        self.name = name
        self.group_id = group_id
        self.runtime = runtime
        self.incoming: list[Connection] = []
        self.outgoing: list[Connection] = []
        self.state = ScheduledState.STOPPED
        self.active_tasks: dict[int, ActiveTask] = {}
        self.yield_expiration = 0.0
        self.stats = ComponentStats(runtime.clock.monotonic)
        self.scheduling_strategy = "TIMER_DRIVEN"
        self.run_schedule = 0.0
        self.cron: CronSchedule | None = None
        self.concurrent_tasks = 1
        self.run_duration = 0.0
        self.yield_duration = 1.0
        self.penalty_duration = 30.0
        self.primary_only = False
        self._lock = threading.RLock()
        #: Held across a start, a stop or a terminate, and by whoever (un)schedules the component with it.
        self.lifecycle = threading.RLock()
        self._stopping = False
        self._unscheduled = False
        self.session_component = SessionComponent(identifier, self.component_type, on_session_end=self._record_session,
                                                  clock=runtime.clock.time, damaged_content=runtime.damaged_content)
        self.logger = ComponentLogger(runtime.bulletins, identifier, name, self.component_type, group_id)

    # -- identity and wiring --------------------------------------------------------------

    @property
    def component_type(self) -> str:
        """The type shown in provenance and status (a processor's type name, ``Funnel``...)."""
        return self.kind.title().replace("_", "")

    def auto_terminated_relationships(self) -> frozenset[str]:
        """Relationships whose FlowFiles are dropped when no connection takes them."""
        return frozenset()

    def rewire(self) -> None:
        """Rebuild what sessions see after connections or settings changed."""
        outgoing: dict[str, list[FlowFileQueue]] = defaultdict(list)
        for connection in self.outgoing:
            for relationship in connection.relationships:
                outgoing[relationship].append(connection.queue)
        component = self.session_component
        component.component_type = self.component_type
        component.incoming = [connection.queue for connection in self.incoming]
        component.outgoing = dict(outgoing)
        component.auto_terminated = self.auto_terminated_relationships()
        component.penalty_duration = self.penalty_duration

    @property
    def cpu_bound(self) -> bool:
        """True when the component's tasks need a CPU lane of the scheduler (see ``scheduler``)."""
        return True

    # -- status ---------------------------------------------------------------------------

    @property
    def stopping(self) -> bool:
        """True between a stop request and the end of the last running task."""
        return self._stopping

    @property
    def active_thread_count(self) -> int:
        """Tasks running now."""
        return len(self.active_tasks)

    def run_status(self) -> str:
        """``Running``, ``Stopping``, ``Stopped`` or ``Disabled`` (processors add ``Invalid``)."""
        if self.state is ScheduledState.RUNNING:
            return "Stopping" if self._stopping else "Running"
        return "Disabled" if self.state is ScheduledState.DISABLED else "Stopped"

    # -- work checks ----------------------------------------------------------------------

    def has_incoming_data(self) -> bool:
        """True when a poll of some incoming queue would find a FlowFile."""
        return any(connection.queue.availability() is _AVAILABLE for connection in self.incoming)

    def has_work(self) -> bool:
        """True when a task would have something to do (by default: incoming data)."""
        return self.has_incoming_data()

    def available_relationships(self) -> set[str]:
        """Relationships none of whose connections (self-loops aside) is full."""
        full = set()
        names = set()
        for connection in self.outgoing:
            names.update(connection.relationships)
            if not connection.is_self_loop() and connection.queue.is_full():
                full.update(connection.relationships)
        return (names - full) | set(self.auto_terminated_relationships())

    def relationships_available(self) -> bool:
        """True when back pressure allows a task: no outgoing connection (self-loops aside) is full."""
        return not any(not c.is_self_loop() and c.queue.is_full() for c in self.outgoing)

    # -- running a task -------------------------------------------------------------------

    def run_task(self) -> Outcome:
        """Check whether there is work and, if so, trigger once (see the module docstring)."""
        now = self.runtime.clock.monotonic()
        if self.state is not ScheduledState.RUNNING or self._stopping:
            return Outcome.NOT_RUNNING
        if self.yield_expiration > now:
            return Outcome.YIELDED
        if self.primary_only and not self.runtime.role.is_primary:
            return Outcome.NOT_PRIMARY
        if self.runtime.disk_space is not None and self.runtime.disk_space.paused:
            return Outcome.DISK_FULL
        if not self.prepare():
            return Outcome.FAILED
        if not self.has_work():
            return Outcome.NO_WORK
        if not self.relationships_available():
            return Outcome.BACK_PRESSURE
        return self._invoke()

    def prepare(self) -> bool:
        """Make the component ready to be triggered; False when it cannot be yet (it yielded)."""
        return True

    def trigger(self, session: ProcessSession) -> None:
        """Do one unit of work with ``session`` (subclasses)."""
        raise NotImplementedError

    def _invoke(self) -> Outcome:
        task = ActiveTask(self, threading.get_ident(), self.runtime.clock.monotonic())
        with self._lock:
            if self.state is not ScheduledState.RUNNING or self._stopping:
                return Outcome.NOT_RUNNING
            self.active_tasks[task.id] = task
        _current.task = task
        started = time.perf_counter_ns()
        outcome = Outcome.DID_WORK
        try:
            session = self.new_session()
            self._trigger_batch(session, task)
            if not task.terminated:
                session.commit()
        except TaskTerminatedError:
            outcome = Outcome.TERMINATED
        except Exception as error:  # the component's bug or failure must not kill the worker thread
            outcome = Outcome.TERMINATED if task.terminated else self._failed(task, error)
        finally:
            _current.task = None
            elapsed = time.perf_counter_ns() - started
            with self._lock:
                present = self.active_tasks.pop(task.id, None) is not None
            if present:
                self.stats.record(invocations=1, task_nanos=elapsed)
                self._try_complete_stop()
        if task.terminated:
            return Outcome.TERMINATED
        if outcome is Outcome.DID_WORK and self.yield_expiration > self.runtime.clock.monotonic():
            return Outcome.YIELDED
        return outcome

    def _trigger_batch(self, session: ProcessSession, task: ActiveTask) -> None:
        clock = self.runtime.clock
        deadline = clock.monotonic() + self.run_duration
        while True:
            self.trigger(session)
            if self.run_duration <= 0 or task.terminated or self._stopping:
                return
            if clock.monotonic() >= deadline or self.yield_expiration > clock.monotonic():
                return
            if not self.has_work() or not self.relationships_available():
                return

    def _failed(self, task: ActiveTask, error: Exception) -> Outcome:
        damaged = any(session.damaged_content for session in task.sessions)
        disk_full = is_disk_full(error)
        for session in task.sessions:
            if not session.terminated:
                try:
                    session.rollback(penalize=not (damaged or disk_full))
                except Exception:
                    self.logger.exception("rolling back after a failure failed")
        if damaged:
            self.logger.warning("damaged content was taken out of the flow (%s: %s); the rest of the session "
                                "was rolled back", type(error).__name__, error)
            return Outcome.DID_WORK
        if disk_full:
            # Not the FlowFiles' fault nor the processor's: no penalty, no administrative yield.
            # A repository write that met the full disk already woke the disk-space monitor
            # (through fileops), which pauses the node if space is short.
            self.logger.warning("the disk is full (%s); the session was rolled back, nothing is lost; "
                                "retrying in %g s", error, self.yield_duration)
            self.yield_processor()
            return Outcome.DISK_FULL
        if isinstance(error, ProcessException):
            self.logger.error("failed to process session due to %s; rolled back", error)
            return Outcome.DID_WORK
        delay = self.runtime.config.administrative_yield_duration
        self.logger.error("failed to process session due to %s: %s; administratively yielding for %g s",
                          type(error).__name__, error, delay, exc_info=error)
        self.yield_expiration = max(self.yield_expiration, self.runtime.clock.monotonic() + delay)
        return Outcome.FAILED

    def new_session(self) -> ProcessSession:
        """A session of this component; inside a task it is discarded with the task on terminate."""
        task = getattr(_current, "task", None)
        if task is not None and task.terminated:
            raise TaskTerminatedError(f"the task of {self.describe()} was terminated")
        session = ProcessSession(self.runtime.storage, self.session_component)
        if task is not None and task.node is self:
            task.sessions.append(session)
        return session

    def yield_processor(self) -> None:
        """Keep the component from being triggered for its yield duration."""
        self.yield_expiration = max(self.yield_expiration, self.runtime.clock.monotonic() + self.yield_duration)

    def _record_session(self, counts: SessionCounts) -> None:
        self.stats.record(flowfiles_in=counts.flowfiles_in, bytes_in=counts.bytes_in,
                          flowfiles_out=counts.flowfiles_out, bytes_out=counts.bytes_out,
                          bytes_read=counts.bytes_read, bytes_written=counts.bytes_written)

    # -- scheduling -----------------------------------------------------------------------

    def next_run(self, outcome: Outcome, now: float) -> float:
        """When the scheduler should next run this task, after a task ended with ``outcome``."""
        config = self.runtime.config
        if self.cron is not None:
            wall = self.runtime.clock.time()
            start = wall + max(0.0, self.yield_expiration - now)
            return now + (self.cron.next_after(start) - wall)
        if outcome in (Outcome.NO_WORK, Outcome.BACK_PRESSURE, Outcome.NOT_PRIMARY, Outcome.DISK_FULL):
            return now + max(self.run_schedule, config.bored_yield_duration)
        if outcome in (Outcome.YIELDED, Outcome.FAILED):
            return now + max(self.run_schedule, self.yield_expiration - now)
        return now + self.run_schedule

    def first_run(self, now: float) -> float:
        """When a newly scheduled task first runs: at once, or at the next CRON fire time."""
        if self.cron is not None:
            wall = self.runtime.clock.time()
            return now + (self.cron.next_after(wall) - wall)
        return now

    # -- life cycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Become RUNNING, for the scheduler to run tasks of; the component must be stopped (not
        disabled) and valid."""
        with self.lifecycle:
            with self._lock:
                if self.state is ScheduledState.DISABLED:
                    raise ComponentStateError(f"{self.describe()} is disabled; enable it first")
                if self.state is ScheduledState.RUNNING:
                    if self._stopping:
                        raise ComponentStateError(f"{self.describe()} is still stopping "
                                                  f"({len(self.active_tasks)} task(s) running)")
                    return
                self.check_startable()
                self.state = ScheduledState.RUNNING
                self._stopping = False
                self._unscheduled = False
            self.on_start()

    def stop(self) -> None:
        """Ask the component to stop: running tasks finish, then the component is stopped."""
        with self.lifecycle:
            with self._lock:
                if self.state is not ScheduledState.RUNNING or self._stopping:
                    return
                self._stopping = True
            self.on_unschedule()
            with self._lock:
                self._unscheduled = True
            self._try_complete_stop()

    def _try_complete_stop(self) -> None:
        with self.lifecycle:
            with self._lock:
                if not (self._stopping and self._unscheduled and not self.active_tasks):
                    return
                self._stopping = False
                self._unscheduled = False
                self.state = ScheduledState.STOPPED
            self.on_stopped()

    def terminate(self) -> list[int]:
        """End the running tasks of a stopping component: their sessions are rolled back and
        whatever they do afterwards is discarded. Returns the threads of the terminated tasks,
        for the scheduler to give up.

        Returns at once: the tasks stop counting, so the component stops and can start again.
        Python cannot stop a thread: a stuck call goes on in an abandoned thread until it
        returns; a session it holds is rolled back as that call returns, and whatever it does
        afterwards raises ``TaskTerminatedError``.
        """
        with self.lifecycle:
            with self._lock:
                if not self._stopping:
                    raise ComponentStateError(f"{self.describe()} must be stopped before its tasks are terminated")
                tasks = list(self.active_tasks.values())
                self.active_tasks.clear()
            for task in tasks:
                task.terminated = True
                for session in task.sessions:
                    session.terminate()
            self.logger.warning("terminated %d task(s)", len(tasks))
            self._try_complete_stop()
            return [task.thread_id for task in tasks]

    def enable(self) -> None:
        """Allow the component to be started again."""
        with self._lock:
            if self.state is ScheduledState.DISABLED:
                self.state = ScheduledState.STOPPED

    def disable(self) -> None:
        """Keep the component from being started; it must be stopped."""
        with self._lock:
            if self.state is ScheduledState.RUNNING:
                raise ComponentStateError(f"{self.describe()} is running; stop it before disabling it")
            self.state = ScheduledState.DISABLED

    def check_startable(self) -> None:
        """Raise when the component may not start (processors check their validity)."""

    def on_start(self) -> None:
        """Called when the component starts, before its first task."""

    def on_unschedule(self) -> None:
        """Called when a stop is asked, while tasks may still run."""

    def on_stopped(self) -> None:
        """Called once the last task of a stopping component has ended."""

    def describe(self) -> str:
        """``Type 'name' (id)`` for messages."""
        return f"{self.component_type} {self.name!r} ({self.identifier})"

