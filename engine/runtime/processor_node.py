"""A processor of the running flow: its configuration, validity, context and hooks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.components import (
    ConfigurationContext,
    InputRequirement,
    ProcessContext,
    Processor,
    Relationship,
    ServiceLookup,
    ValidationProblem,
    validate_properties,
)
from engine.components.validation import component_descriptors
from engine.flow.model import ProcessGroupConfig, ProcessorConfig
from engine.flow.parameters import ParameterResolver, ParameterValues
from engine.flow.validation import SCHEDULE_FIELDS, resolved_properties, resolved_schedule
from engine.runtime.connectable import ComponentStateError, Connectable, Runtime, ScheduledState
from engine.cron import CronSchedule
from engine.runtime.state import ComponentStateManager
from engine.units import parse_duration

if TYPE_CHECKING:
    from engine.session import ProcessSession

__all__ = ["InvalidComponentError", "ProcessorNode"]


class InvalidComponentError(ComponentStateError):
    """A component that cannot start until its problems are fixed; ``problems`` lists them all."""

    def __init__(self, description: str, problems: list[ValidationProblem]) -> None:
        self.problems = problems
        listed = "; ".join(str(problem) for problem in problems)
        super().__init__(f"{description} is invalid: {listed}")


class ProcessorNode(Connectable):
    """One processor: a ``Processor`` instance plus what the flow configured for it.

    A processor whose type this node does not have keeps its configuration (and its queues)
    but is always invalid, so it never starts.
    """

    kind = "PROCESSOR"

    def __init__(self, config: ProcessorConfig, processor_class: type[Processor] | None, runtime: Runtime,
                 services: ServiceLookup, group: ProcessGroupConfig, resolver: ParameterResolver) -> None:
        self.processor_class = processor_class
        super().__init__(config.identifier, config.name, config.group_id, runtime)
        self.processor: Processor | None = processor_class() if processor_class is not None else None
        self.services = services
        self.state_manager = ComponentStateManager(config.identifier, runtime.local_state, runtime.cluster_state)
        self.context: ProcessContext | None = None
        #: What the processor may touch (its tenant's grants, the node's refusals).
        self.confinement = runtime.confinement.policy(config.group_id)
        self._scheduled_ok = False
        self.configure(config, group, resolver)

    # -- configuration --------------------------------------------------------------------

    def configure(self, config: ProcessorConfig, group: ProcessGroupConfig, resolver: ParameterResolver) -> None:
        """Take a (new) configuration; the processor must not be running."""
        cls = self.processor_class
        self.config = config
        self.name = config.name
        self.properties, parameter_problems = resolved_properties(config, group, resolver, cls)
        #: What ``#{name}`` inside an expression reads.
        self.parameters = ParameterValues(resolver, group.parameter_context_name)
        self._config_problems = [ValidationProblem(name, message) for name, message in parameter_problems]
        self.scheduling_strategy = config.scheduling_strategy
        #: The scheduling period, penalty and yield durations with parameters substituted.
        self.schedule, schedule_problems = resolved_schedule(config, group, resolver)
        self._config_problems += [ValidationProblem("", f"{field}: {message}") for field, message in schedule_problems]
        failed = {field for field, _ in schedule_problems}
        period = self.schedule["scheduling_period"] or (cls.default_scheduling_period if cls else "0 sec")
        self.cron = None
        self.run_schedule = 0.0
        try:
            if config.scheduling_strategy == "CRON_DRIVEN" and "schedulingPeriod" not in failed:
                self.cron = CronSchedule(period)
            elif "schedulingPeriod" not in failed:
                self.run_schedule = parse_duration(period)
        except ValueError as error:
            self._config_problems.append(ValidationProblem("", f"scheduling period: {error}"))
        for field, attribute in SCHEDULE_FIELDS[1:]:
            if field in failed:
                continue
            try:
                setattr(self, attribute, parse_duration(self.schedule[attribute]))
            except ValueError as error:
                self._config_problems.append(ValidationProblem("", f"{attribute.replace('_', ' ')}: {error}"))
        serial = cls is not None and cls.trigger_serially
        self.concurrent_tasks = 1 if serial else max(1, config.concurrent_tasks)
        self.run_duration = config.run_duration_millis / 1000
        self.primary_only = config.execution_node == "PRIMARY" or (cls is not None and cls.primary_node_only)
        self.logger.bulletin_level = {"DEBUG": 10, "INFO": 20, "WARN": 30, "ERROR": 40}.get(config.bulletin_level, 100)
        if config.scheduled_state == "DISABLED" and self.state is not ScheduledState.RUNNING:
            self.state = ScheduledState.DISABLED
        self.rewire()

    @property
    def component_type(self) -> str:
        if self.processor_class is not None:
            return self.processor_class.type_name
        return self.config.type.rsplit(".", 1)[-1] if hasattr(self, "config") else "Processor"

    @property
    def cpu_bound(self) -> bool:
        """False for processors that wait on other systems (``Processor.waits_on_io``)."""
        return not (self.processor_class is not None and self.processor_class.waits_on_io)

    @property
    def serial_only(self) -> bool:
        """True for processors that must never run two tasks at once."""
        return self.processor_class is not None and self.processor_class.trigger_serially

    def relationships(self) -> list[Relationship]:
        """The processor's relationships under its current properties."""
        if self.processor_class is None:
            names = {r for c in self.outgoing for r in c.relationships} | set(self.config.auto_terminated)
            return [Relationship(name) for name in sorted(names)]
        return self.processor_class.relationships_for(self.properties)

    def auto_terminated_relationships(self) -> frozenset[str]:
        return frozenset(self.config.auto_terminated)

    # -- validity -------------------------------------------------------------------------

    def referenced_services(self) -> set[str]:
        """Identifiers of the services this processor's properties reference."""
        if self.processor_class is None:
            return set()
        descriptors = {d.name: d for d in self.processor_class.properties}
        return {value for name, value in self.properties.items()
                if value and descriptors.get(name) is not None and descriptors[name].service is not None}

    def validate(self) -> list[ValidationProblem]:
        """Every reason the processor cannot start now (empty when it can)."""
        cls = self.processor_class
        if cls is None:
            return [ValidationProblem("", f"processor type {self.config.type!r} is not available on this node")]
        problems = list(self._config_problems)
        problems += [ValidationProblem("", message) for message in self.confinement.missing_capabilities(cls)]
        problems += validate_properties(cls, self.properties, self.services, confinement=self.confinement)
        if not problems:
            try:
                problems += [ValidationProblem("", message) for message in self.processor.validate(self._configuration())]
            except Exception as error:
                problems.append(ValidationProblem("", f"validation failed: {type(error).__name__}: {error}"))
        connected = {r for c in self.outgoing for r in c.relationships}
        for relationship in self.relationships():
            if relationship.name not in connected and relationship.name not in self.config.auto_terminated:
                problems.append(ValidationProblem(relationship.name, "is neither connected nor auto-terminated"))
        has_input = any(not c.is_self_loop() for c in self.incoming)
        if cls.input_requirement is InputRequirement.REQUIRED and not has_input:
            problems.append(ValidationProblem("", "needs an incoming connection"))
        if cls.input_requirement is InputRequirement.FORBIDDEN and has_input:
            problems.append(ValidationProblem("", "does not accept incoming connections"))
        return problems

    def _configuration(self) -> ConfigurationContext:
        descriptors, _ = component_descriptors(self.processor_class, self.properties)
        return ConfigurationContext(descriptors, self.properties, self.services, self.confinement, self.parameters)

    def run_status(self) -> str:
        status = super().run_status()
        if status == "Stopped" and self.validate():
            return "Invalid"
        return status

    def check_startable(self) -> None:
        problems = self.validate()
        if problems:
            raise InvalidComponentError(self.describe(), problems)

    # -- life cycle hooks -----------------------------------------------------------------

    def on_start(self) -> None:
        descriptors, _ = component_descriptors(self.processor_class, self.properties)
        self.context = ProcessContext(descriptors, self.properties, self.services, self)
        self._scheduled_ok = False
        self.prepare()

    def prepare(self) -> bool:
        if self._scheduled_ok:
            return True
        with self.lifecycle:
            if self._scheduled_ok:
                return True
            try:
                self.processor.on_scheduled(self.context)
            except Exception as error:
                delay = self.runtime.config.administrative_yield_duration
                self.logger.error("failed to start: %s: %s; retrying in %g s", type(error).__name__, error, delay,
                                  exc_info=error)
                self.yield_expiration = max(self.yield_expiration, self.runtime.clock.monotonic() + delay)
                return False
            self._scheduled_ok = True
            return True

    def on_unschedule(self) -> None:
        if self._scheduled_ok:
            self._hook("on_unscheduled")

    def on_stopped(self) -> None:
        if self._scheduled_ok:
            self._hook("on_stopped")
        self._scheduled_ok = False

    def _hook(self, name: str) -> None:
        try:
            getattr(self.processor, name)(self.context)
        except Exception as error:
            self.logger.error("%s failed: %s: %s", name, type(error).__name__, error, exc_info=error)

    def primary_node_changed(self, is_primary: bool) -> None:
        """Tell a scheduled processor that this node became, or stopped being, the primary node."""
        if self.state is ScheduledState.RUNNING and self._scheduled_ok and self.context is not None:
            try:
                self.processor.on_primary_node_change(self.context, is_primary)
            except Exception as error:
                self.logger.error("primary node change handling failed: %s", error, exc_info=error)

    # -- the work -------------------------------------------------------------------------

    def has_work(self) -> bool:
        cls = self.processor_class
        if cls.trigger_when_empty:
            return True
        if all(connection.is_self_loop() for connection in self.incoming):
            return True
        return self.has_incoming_data()

    def relationships_available(self) -> bool:
        if not self.outgoing:
            return True
        if self.processor_class.trigger_when_any_destination_available:
            available = self.available_relationships()
            return any(r in available for c in self.outgoing for r in c.relationships)
        return super().relationships_available()

    def trigger(self, session: ProcessSession) -> None:
        self.processor.on_trigger(self.context, session)

    # -- what the processor's context asks of its node ------------------------------------

    @property
    def clock(self):
        return self.runtime.clock

    @property
    def is_primary_node(self) -> bool:
        return self.runtime.role.is_primary

    @property
    def is_clustered(self) -> bool:
        return self.runtime.role.is_clustered

    @property
    def max_concurrent_tasks(self) -> int:
        return self.concurrent_tasks

    def create_session(self) -> ProcessSession:
        return self.new_session()

    def has_incoming_connection(self) -> bool:
        return any(not connection.is_self_loop() for connection in self.incoming)

    def has_connection(self, relationship: str) -> bool:
        return any(relationship in connection.relationships for connection in self.outgoing)
