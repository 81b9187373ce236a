"""The flow controller: a node's running flow, built from a flow definition over its storage.

``load`` builds components and connections from a checked flow definition and hands each
connection the FlowFiles that recovery found for its queue (FlowFiles of queues the flow no
longer has are kept apart, untouched, as orphans; so are those in the damaged-FlowFile queue,
``flowsite.damaged``, where sessions move FlowFiles whose content they found damaged). ``start``
starts the scheduler and a maintenance thread (FlowFile expiration, periodic status line) and,
with a ``disk_space`` setting, the monitor that pauses the flow while a repository's disk is
short of space (``engine.runtime.disk_space``); ``start_components`` enables services and starts
components in the states the flow saved. Operations on single components (start, stop, enable,
disable, terminate, list or empty a queue) keep the flow definition's saved states up to date
and call ``on_change`` so the caller can persist it.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from typing import Callable, Iterable, NamedTuple

from engine.confinement import ConfinementSettings, NodeConfinement
from engine.components import ComponentRegistry, default_registry
from engine.flow.loader import FlowDefinitionError, FlowProblem
from engine.flow.model import ConnectionConfig, FlowDefinition, ProcessGroupConfig
from engine.flow.validation import check_flow
from engine.damage import DAMAGED_QUEUE_ID, Damage
from engine.flowfile import FlowFile
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType as E
from engine.queue import FlowFileQueue, QueueSettings
from engine.repository.flowfile_repository import RecoveredFlowFiles
from engine.runtime.bulletins import BulletinBoard
from engine.runtime.clock import Clock, SystemClock
from engine.runtime.config import RuntimeConfig
from engine.runtime.connectable import (
    ComponentStateError,
    Connectable,
    Connection,
    NodeRole,
    Runtime,
    ScheduledState,
)
from engine.runtime.disk_space import DiskSpaceConfig, DiskSpaceMonitor
from engine.runtime.flow_update import update_flow
from engine.runtime.funnels import FunnelNode, PortNode
from engine.runtime.group_start import start_group
from engine.runtime.graph import FlowFileQueues, FlowGraph, GraphBuilder, QueueFactory, queue_settings
from engine.runtime.planner import RunningFlow
from engine.runtime.processor_node import ProcessorNode
from engine.runtime.scheduler import Scheduler
from engine.runtime.service_node import ServiceNode
from engine.runtime.state import LocalStateProvider
from engine.runtime.flow_status import flow_status, group_status, status_line
from engine.runtime.status import (
    FlowStatus,
    ProcessGroupStatus,
)
from engine.session import DamagedContentPolicy, ProcessSession, SessionComponent
from engine.storage import NodeStorage

__all__ = ["Dropped", "FlowController", "UnknownComponentError"]

log = logging.getLogger(__name__)


class UnknownComponentError(LookupError):
    """No component of the running flow has the identifier asked for."""

    code = "not_found"


class Dropped(NamedTuple):
    """What emptying a queue dropped."""

    count: int
    bytes: int


class FlowController:
    """A node's running flow (see the module docstring)."""

    def __init__(
        self,
        storage: NodeStorage,
        *,
        registry: ComponentRegistry | None = None,
        config: RuntimeConfig | None = None,
        clock: Clock | None = None,
        role: NodeRole | None = None,
        cluster_state: object | None = None,
        disk_space: DiskSpaceConfig | None = None,
        confinement: ConfinementSettings | None = None,
        queue_factory: QueueFactory | None = None,
    ) -> None:
        self.storage = storage
        self.registry = registry or default_registry()
        self.config = config or RuntimeConfig()
        self.clock = clock or SystemClock()
        self.bulletins = BulletinBoard()
        storage.damage.subscribe(self._post_damage)
        self.scheduler = Scheduler(self.clock, self.config.max_timer_driven_threads,
                                   self.config.cpu_bound_tasks)
        self.disk_space = None if disk_space is None else DiskSpaceMonitor.for_storage(storage, disk_space,
                                                                                        self.bulletins)
        self.damaged_queue = FlowFileQueue(DAMAGED_QUEUE_ID, self._orphan_settings(), storage.flowfiles.swap,
                                           clock=self.clock.time)
        damaged = DamagedContentPolicy(self.config.damaged_content, self.damaged_queue,
                                       lambda queue: self.orphans.setdefault(queue.identifier, queue))
        self.runtime = Runtime(storage, self.config, self.clock, self.bulletins, role or NodeRole(),
                               LocalStateProvider(storage.data_dir / "state" / "local"), cluster_state,
                               damaged_content=damaged, disk_space=self.disk_space,
                               confinement=NodeConfinement(confinement, storage.data_dir))
        #: Makes the queue of each connection (see ``engine.runtime.graph``).
        self.queue_factory: QueueFactory = queue_factory or FlowFileQueues(storage.flowfiles.swap, self.clock.time,
                                                                            self.config)
        self.graph = FlowGraph()
        self.orphans: dict[str, FlowFileQueue] = {}
        self.on_change: Callable[[], None] | None = None
        self.started_at = time.time()
        self._stop = threading.Event()
        self._maintenance: threading.Thread | None = None
        self._last_status_log = time.monotonic()

    def _post_damage(self, damage: Damage) -> None:
        """Make damage found in the data directory a bulletin of the node's storage."""
        self.bulletins.post("ERROR", f"storage:{damage.path}", damage.kind, "Storage", "", str(damage))

    # -- the graph ------------------------------------------------------------------------

    @property
    def flow(self) -> FlowDefinition | None:
        """The flow definition running (None before ``load``)."""
        return self.graph.flow

    @property
    def groups(self) -> dict[str, ProcessGroupConfig]:
        """The flow's process groups, by identifier."""
        return self.graph.groups

    @property
    def services(self) -> dict[str, ServiceNode]:
        """The flow's controller services, by identifier."""
        return self.graph.services

    @property
    def processors(self) -> dict[str, ProcessorNode]:
        """The flow's processors, by identifier."""
        return self.graph.processors

    @property
    def funnels(self) -> dict[str, FunnelNode]:
        """The flow's funnels, by identifier."""
        return self.graph.funnels

    @property
    def ports(self) -> dict[str, PortNode]:
        """The flow's input and output ports, by identifier."""
        return self.graph.ports

    @property
    def connections(self) -> dict[str, Connection]:
        """The flow's connections, by identifier."""
        return self.graph.connections

    def load(self, flow: FlowDefinition, recovered: RecoveredFlowFiles | None = None) -> list[FlowProblem]:
        """Build the flow's components; return the problems that leave components invalid.

        Raises FlowDefinitionError when a problem makes the flow unusable.
        """
        if self.flow is not None:
            raise ComponentStateError("this controller already runs a flow")
        problems = check_flow(flow, self.registry)
        if any(problem.fatal for problem in problems):
            raise FlowDefinitionError(problems)
        self.install(self.build_graph(flow))
        if recovered is not None:
            self._restore(recovered)
        return [problem for problem in problems if not problem.fatal]

    def build_graph(self, flow: FlowDefinition, reuse: Iterable[str] = ()) -> FlowGraph:
        """The graph of ``flow`` (not installed): the running components and services of
        identifiers ``reuse`` are taken over; every connection's queue comes from the queue
        factory, given the queue the running flow (or an orphaned queue) has of its identifier."""
        nodes = self.graph.nodes()
        kept = {identifier: nodes[identifier] for identifier in reuse if identifier in nodes}
        queues = {**self.orphans, **self.graph.queues()}
        builder = GraphBuilder(self.registry, self.runtime, lambda: self.graph,
                               self.storage.data_dir / "state" / "services", self.queue_factory)
        return builder.build(flow, kept, queues)

    def install(self, graph: FlowGraph) -> None:
        """Run ``graph`` from now on; orphaned queues of its connections' identifiers are its
        connections' now. The components of the former graph that ``graph`` does not hold must
        be stopped (and services disabled) first."""
        self.graph = graph
        self.runtime.confinement.set_flow(graph.flow)
        for identifier in graph.connections:
            self.orphans.pop(identifier, None)

    def describe(self) -> RunningFlow:
        """The running flow as the update planner sees it (``engine.runtime.planner``)."""
        return self.graph.describe()

    def set_queue_factory(self, factory: QueueFactory) -> None:
        """Make the queues of connections built from now on with ``factory``."""
        self.queue_factory = factory

    def refresh_queues(self) -> None:
        """Ask the queue factory again for every connection's queue, keeping every component (a
        node that starts or ends an offload changes the kind of its queues). The components at
        both ends of a connection whose queue changes must be stopped."""
        self.install(self.build_graph(self.flow, reuse=self.graph.nodes()))

    def queue_settings(self, config: ConnectionConfig) -> QueueSettings:
        """The settings of the queue of connection ``config`` on this node."""
        return queue_settings(config, self.config)

    def _restore(self, recovered: RecoveredFlowFiles) -> None:
        queue_ids = set(recovered.queues) | set(recovered.swap_files)
        for queue_id in queue_ids:
            flowfiles = recovered.queues.get(queue_id, [])
            swap_files = recovered.swap_files.get(queue_id, [])
            connection = self.connections.get(queue_id)
            if connection is not None:
                connection.queue.restore(flowfiles, swap_files)
                continue
            if queue_id == DAMAGED_QUEUE_ID:
                orphan = self.damaged_queue
            else:
                orphan = FlowFileQueue(queue_id, self._orphan_settings(), self.storage.flowfiles.swap,
                                       clock=self.clock.time)
            orphan.restore(flowfiles, swap_files)
            self.orphans[queue_id] = orphan
            log.warning("%d FlowFile(s) belong to queue %s, which the flow does not have; they are kept untouched",
                        len(orphan), queue_id)

    def _orphan_settings(self) -> QueueSettings:
        return QueueSettings(back_pressure_object_threshold=0, back_pressure_data_size_threshold=0,
                             swap_threshold=self.config.swap_threshold,
                             swap_batch_size=min(self.config.swap_batch_size, self.config.swap_threshold))

    def update(self, flow: FlowDefinition) -> tuple[list[FlowProblem], list[str]]:
        """Run ``flow`` instead of the current definition, in place: see ``engine.runtime.flow_update``."""
        return update_flow(self, flow)

    def start_group(self, group_id: str | None = None) -> list[str]:
        """Start every component of a group (the whole flow without one) that is not disabled:
        see ``engine.runtime.group_start``. Returns what did not start, and why; raises
        UnknownComponentError for a group the flow does not have."""
        if group_id is not None and group_id not in self.groups:
            raise UnknownComponentError(f"no process group has identifier {group_id!r}")
        return start_group(self, group_id)

    # -- finding things -------------------------------------------------------------------

    def connectables(self) -> list[Connectable]:
        """Every processor, funnel and port."""
        return self.graph.connectables()

    def connectable(self, identifier: str) -> Connectable:
        """The processor, funnel or port with ``identifier``."""
        node = self.graph.connectable(identifier)
        if node is not None:
            return node
        raise UnknownComponentError(f"no processor, funnel or port has identifier {identifier!r}")

    def processor(self, identifier: str) -> ProcessorNode:
        """The processor with ``identifier``."""
        try:
            return self.processors[identifier]
        except KeyError:
            raise UnknownComponentError(f"no processor has identifier {identifier!r}") from None

    def service(self, identifier: str) -> ServiceNode:
        """The controller service with ``identifier``."""
        try:
            return self.services[identifier]
        except KeyError:
            raise UnknownComponentError(f"no controller service has identifier {identifier!r}") from None

    def queue(self, identifier: str) -> FlowFileQueue:
        """The queue of connection ``identifier`` (or an orphaned queue of that id)."""
        if identifier in self.connections:
            return self.connections[identifier].queue
        if identifier in self.orphans:
            return self.orphans[identifier]
        raise UnknownComponentError(f"no connection has identifier {identifier!r}")

    def ancestors(self, group_id: str) -> list[str]:
        """``group_id`` and the groups above it."""
        return self.graph.ancestors(group_id)

    # -- running --------------------------------------------------------------------------

    def start(self) -> None:
        """Start the worker threads, the maintenance thread and the disk-space monitor."""
        if self.disk_space is not None:
            self.disk_space.start()
        self.scheduler.start()
        self._stop.clear()
        self._maintenance = threading.Thread(target=self._maintain, name="flow-maintenance", daemon=True)
        self._maintenance.start()

    def start_components(self) -> list[str]:
        """Bring every component to the state the flow gives it — enable and disable services,
        start, stop, enable and disable processors and ports, start funnels — and return what
        failed, and why."""
        failures = self._enable_saved_services()
        wanted = [*self.ports.values(), *self.processors.values()]
        self.stop_and_wait([node for node in wanted
                            if node.config.scheduled_state != "RUNNING" and node.state is ScheduledState.RUNNING])
        for node in wanted:
            failures += _attempt(self._take_saved_state, node)
        for node in self.funnels.values():
            self.start_component(node)
        self._disable_unused_services()
        for failure in failures:
            log.warning("not started: %s", failure)
        return failures

    def _enable_saved_services(self) -> list[str]:
        """Enable the services the flow saved ENABLED; return the refusals."""
        return [failure for node in self.services_in_dependency_order()
                if node.config.scheduled_state == "ENABLED" and node.state != "ENABLED"
                for failure in _attempt(node.enable)]

    def _disable_unused_services(self) -> None:
        """Disable the services the flow saved DISABLED that no running processor references."""
        for node in reversed(self.services_in_dependency_order()):
            if node.config.scheduled_state == "DISABLED" and node.state == "ENABLED" and not any(
                    p.state is ScheduledState.RUNNING for p in self.referencing(node.identifier)):
                node.disable()

    def _take_saved_state(self, node: Connectable) -> None:
        desired = node.config.scheduled_state
        if desired == "RUNNING":
            if node.state is ScheduledState.DISABLED:
                node.enable()
            self.start_component(node)
        elif desired == "DISABLED":
            node.disable()
        else:
            node.enable()

    def start_component(self, node: Connectable) -> None:
        """Start a processor, funnel or port and schedule its tasks."""
        with node.lifecycle:
            node.start()
            self.scheduler.add(node)

    def stop_component(self, node: Connectable) -> None:
        """Stop scheduling a processor, funnel or port and ask it to stop (running tasks finish)."""
        with node.lifecycle:
            self.scheduler.remove(node)
            node.stop()

    def terminate_component(self, node: Connectable) -> int:
        """Terminate the tasks of a stopping component (see ``Connectable.terminate``); the
        scheduler replaces their threads at once. Returns how many tasks were terminated."""
        threads = node.terminate()
        for thread_id in threads:
            self.scheduler.abandon(thread_id)
        return len(threads)

    def stop_and_wait(self, nodes: list[Connectable], timeout: float | None = None) -> None:
        """Stop ``nodes`` and wait (up to the graceful shutdown period) for their running tasks;
        terminate the tasks still running then."""
        timeout = self.config.graceful_shutdown_period if timeout is None else timeout
        for node in nodes:
            self.stop_component(node)
        deadline = time.monotonic() + timeout
        while any(node.active_thread_count for node in nodes) and time.monotonic() < deadline:
            time.sleep(0.01)
        for node in nodes:
            if node.stopping:
                log.warning("%s still runs %d task(s) after %g s; terminating them", node.describe(),
                            node.active_thread_count, timeout)
                self.terminate_component(node)

    def disable_services(self, identifiers: Iterable[str]) -> None:
        """Disable the services of ``identifiers``, those referencing others first. The
        components using them must be stopped."""
        wanted = set(identifiers)
        for node in reversed(self.services_in_dependency_order()):
            if node.identifier in wanted:
                node.disable()

    def services_in_dependency_order(self) -> list[ServiceNode]:
        """Every service, each after the services it references."""
        ordered: list[ServiceNode] = []
        visiting: set[str] = set()

        def visit(node: ServiceNode) -> None:
            if node in ordered or node.identifier in visiting:
                return
            visiting.add(node.identifier)
            for reference in node.referenced_services():
                if reference in self.services:
                    visit(self.services[reference])
            ordered.append(node)

        for node in self.services.values():
            visit(node)
        return ordered

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop every component, wait (up to the graceful period) for running tasks, disable the
        services and stop the threads. The flow's saved states are left as they were, so a
        restart resumes them."""
        self._stop.set()
        self.stop_and_wait(self.connectables(), timeout)
        for node in reversed(self.services_in_dependency_order()):
            node.disable()
        self.scheduler.stop(timeout=1.0)
        if self._maintenance is not None:
            self._maintenance.join(timeout=5)
        if self.disk_space is not None:
            self.disk_space.stop()

    def _maintain(self) -> None:
        while not self._stop.wait(self.config.expiration_sweep_interval):
            try:
                self.expire_flowfiles()
            except Exception:
                log.exception("FlowFile expiration sweep failed")
            if time.monotonic() - self._last_status_log >= self.config.status_log_interval:
                self._last_status_log = time.monotonic()
                log.info("%s", self.status_line())

    # -- component operations -------------------------------------------------------------

    def start_processor(self, identifier: str) -> None:
        """Start a processor (raises InvalidComponentError listing its problems)."""
        node = self.processor(identifier)
        self.start_component(node)
        self._save_state(node, "RUNNING")

    def stop_processor(self, identifier: str, wait: float = 0.0) -> bool:
        """Stop a processor; with ``wait``, wait up to that many seconds for its tasks to end.
        Returns True once it is stopped (no task running)."""
        node = self.processor(identifier)
        self.stop_component(node)
        self._save_state(node, "ENABLED")
        deadline = time.monotonic() + wait
        while node.stopping and time.monotonic() < deadline:
            time.sleep(0.005)
        return not node.stopping

    def enable_processor(self, identifier: str) -> None:
        """Let a disabled processor be started again."""
        node = self.processor(identifier)
        node.enable()
        self._save_state(node, "ENABLED")

    def disable_processor(self, identifier: str) -> None:
        """Disable a stopped processor."""
        node = self.processor(identifier)
        node.disable()
        self._save_state(node, "DISABLED")

    def terminate_processor(self, identifier: str) -> int:
        """Terminate the tasks of a stopping processor (see ``Connectable.terminate``)."""
        return self.terminate_component(self.processor(identifier))

    def start_port(self, identifier: str) -> None:
        """Start an input or output port."""
        node = self.connectable(identifier)
        self.start_component(node)
        self._save_state(node, "RUNNING")

    def stop_port(self, identifier: str) -> None:
        """Stop an input or output port."""
        node = self.connectable(identifier)
        self.stop_component(node)
        self._save_state(node, "ENABLED")

    def enable_service(self, identifier: str) -> None:
        """Enable a controller service (raises InvalidComponentError listing its problems)."""
        node = self.service(identifier)
        node.enable()
        self._save_state(node, "ENABLED")

    def disable_service(self, identifier: str) -> None:
        """Disable a controller service; refused while a running component references it."""
        node = self.service(identifier)
        users = [p.describe() for p in self.referencing(identifier) if p.state is ScheduledState.RUNNING]
        users += [s.describe() for s in self.services.values() if identifier in s.referenced_services()
                  and s.state == "ENABLED"]
        if users:
            raise ComponentStateError(f"{node.describe()} is used by {', '.join(users)}; stop or disable them first")
        node.disable()
        self._save_state(node, "DISABLED")

    def referencing(self, service_id: str) -> list[ProcessorNode]:
        """The processors whose properties reference a service."""
        return [node for node in self.processors.values() if service_id in node.referenced_services()]

    def _save_state(self, node: Connectable | ServiceNode, state: str) -> None:
        config = node.config
        if config.scheduled_state == state:
            return
        config.scheduled_state = state
        config.raw["scheduledState"] = state
        if self.on_change is not None:
            self.on_change()

    def set_primary(self, is_primary: bool) -> None:
        """This node became (or stopped being) the primary node."""
        if self.runtime.role.appointed == is_primary:
            return
        self.runtime.role.is_primary = is_primary
        for node in self.processors.values():
            node.primary_node_changed(is_primary)

    # -- queues ---------------------------------------------------------------------------

    def list_queue(self, identifier: str, max_results: int = 100) -> list[FlowFile]:
        """The first FlowFiles of a queue, in the order they would leave (swapped ones excluded)."""
        return self.queue(identifier).peek(max_results)

    def drop_queue(self, identifier: str, requester: str = "an operator") -> Dropped:
        """Empty a queue, swapped FlowFiles included; each dropped FlowFile gets a DROP event.

        FlowFiles that a running task holds are not dropped. Returns how many were dropped, and
        their bytes.
        """
        queue = self.queue(identifier)
        details = f"FlowFile Queue emptied by {requester}"
        flowfiles, swapped = queue.take_all()
        try:
            if flowfiles:
                component = SessionComponent(identifier, "Connection", incoming=[queue], clock=self.clock.time)
                session = ProcessSession(self.storage, component)
                session.adopt(queue, flowfiles, E.DROP, details)
                session.commit()
            dropped, dropped_bytes = len(flowfiles), sum(flowfile.size for flowfile in flowfiles)
            swap = self.storage.flowfiles.swap
            while swapped:
                swap_file = swapped[0]
                # A damaged file is dropped whole: DROP events for what can be read, the
                # queue's own figures for the rest (the swap manager reports the damage).
                contents = swap.read(swap_file.location)
                now = int(self.clock.time() * 1000)
                drops = [_drop_event(f, identifier, details, now) for f in contents.flowfiles]
                # The events ride in the deletion's transaction: recorded if and only if it stands.
                swap.delete(swap_file.location, contents,
                            log_update=functools.partial(self.storage.commit, events=drops, force_sync=True))
                swapped.pop(0)
                queue.acknowledge_counts(swap_file.count, swap_file.bytes)
                dropped += swap_file.count
                dropped_bytes += swap_file.bytes
        finally:
            if swapped:
                queue.give_back(swapped)
        return Dropped(dropped, dropped_bytes)

    def expire_flowfiles(self) -> int:
        """Drop (EXPIRE) every FlowFile held in memory that is older than its connection allows."""
        expired_count = 0
        for connection in self.connections.values():
            queue = connection.queue
            if not queue.settings.expiration:
                continue
            expired = queue.remove_expired()
            if not expired:
                continue
            seconds = queue.settings.expiration
            period = f"{int(seconds)} sec" if seconds == int(seconds) else f"{seconds * 1000:g} millis"
            session = ProcessSession(self.storage, SessionComponent(connection.identifier, "Connection",
                                                                    incoming=[queue], clock=self.clock.time))
            session.adopt(queue, expired, E.EXPIRE, f"Expiration Threshold = {period}")
            session.commit()
            expired_count += len(expired)
        return expired_count

    # -- status ---------------------------------------------------------------------------

    def status(self) -> FlowStatus:
        """The status of every component, of every group and of the node."""
        return flow_status(self)

    def group_status(self, group_id: str) -> ProcessGroupStatus:
        """The status of one process group (its subgroups included)."""
        if group_id not in self.groups:
            raise UnknownComponentError(f"no process group has identifier {group_id!r}")
        return group_status(self, self.groups[group_id])

    def status_line(self) -> str:
        """One line of the node's figures, for logs."""
        return status_line(self)

    def invalid_components(self) -> dict[str, list[str]]:
        """Problems of every component that could not start now, by description."""
        found = {}
        for node in self.processors.values():
            problems = node.validate()
            if problems:
                found[node.describe()] = [str(p) for p in problems]
        return found


def _drop_event(flowfile: FlowFile, connection_id: str, details: str, now: int) -> ProvenanceEvent:
    return ProvenanceEvent(
        E.DROP, now, flowfile.uuid, connection_id, "Connection",
        entry_date=flowfile.entry_date, lineage_start_date=flowfile.lineage_start_date,
        previous_attributes=dict(flowfile.attributes), content_claim=flowfile.content_claim,
        previous_content_claim=flowfile.content_claim, details=details, source_queue_id=connection_id,
    )


def _attempt(action: Callable[..., None], *args: object) -> list[str]:
    """Run ``action``; the refusal it raised, as text, if any."""
    try:
        action(*args)
    except ComponentStateError as error:
        return [str(error)]
    return []
