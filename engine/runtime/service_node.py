"""A controller service of the running flow: its configuration, validity and enabled state."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from engine.components import (
    ConfigurationContext,
    ControllerService,
    ServiceInitContext,
    ServiceLookup,
    ServiceReference,
    ValidationProblem,
    validate_properties,
)
from engine.components.validation import component_descriptors
from engine.flow.model import ProcessGroupConfig, ServiceConfig
from engine.flow.parameters import ParameterResolver, ParameterValues
from engine.flow.validation import resolved_properties
from engine.runtime.bulletins import ComponentLogger
from engine.runtime.connectable import ComponentStateError, Runtime
from engine.runtime.processor_node import InvalidComponentError

__all__ = ["ServiceNode"]

log = logging.getLogger(__name__)


class ServiceNode:
    """One controller service: DISABLED or ENABLED (``ENABLING``/``DISABLING`` in between)."""

    def __init__(self, config: ServiceConfig, service_class: type[ControllerService] | None, runtime: Runtime,
                 services: ServiceLookup, group: ProcessGroupConfig, resolver: ParameterResolver,
                 data_dir: Path | None) -> None:
        self.identifier = config.identifier
        self.group_id = config.group_id
        self.service_class = service_class
        self.instance: ControllerService | None = service_class() if service_class is not None else None
        self.services = services
        self.runtime = runtime
        self.data_dir = data_dir
        self.state = "DISABLED"
        #: What the service may touch (its tenant's grants, the node's refusals).
        self.confinement = runtime.confinement.policy(config.group_id)
        self._lock = threading.RLock()
        self.configure(config, group, resolver)

    def configure(self, config: ServiceConfig, group: ProcessGroupConfig, resolver: ParameterResolver) -> None:
        """Take a (new) configuration; the service must be disabled."""
        self.config = config
        self.name = config.name
        self.properties, problems = resolved_properties(config, group, resolver, self.service_class)
        #: What ``#{name}`` inside an expression reads.
        self.parameters = ParameterValues(resolver, group.parameter_context_name)
        self._config_problems = [ValidationProblem(name, message) for name, message in problems]
        self.logger = ComponentLogger(self.runtime.bulletins, self.identifier, self.name, self.type_name, self.group_id)

    @property
    def type_name(self) -> str:
        """The service's short type name."""
        if self.service_class is not None:
            return self.service_class.type_name
        return self.config.type.rsplit(".", 1)[-1]

    def reference(self) -> ServiceReference:
        """How referencing properties see this service."""
        provides = self.service_class.provides if self.service_class is not None else ()
        return ServiceReference(self.identifier, self.name, self.type_name, self.state == "ENABLED", provides,
                                self.instance)

    def referenced_services(self) -> set[str]:
        """Identifiers of the services this one's properties reference."""
        if self.service_class is None:
            return set()
        descriptors, _ = component_descriptors(self.service_class, self.properties)
        return {value for name, value in self.properties.items()
                if value and name in descriptors and descriptors[name].service is not None}

    def validate(self) -> list[ValidationProblem]:
        """Every reason the service cannot be enabled now."""
        if self.service_class is None:
            return [ValidationProblem("", f"controller service type {self.config.type!r} is not available on this node")]
        problems = list(self._config_problems)
        problems += [ValidationProblem("", m) for m in self.confinement.missing_capabilities(self.service_class)]
        problems += validate_properties(self.service_class, self.properties, self.services,
                                        confinement=self.confinement)
        if not problems:
            try:
                problems += [ValidationProblem("", m) for m in self.instance.validate(self._configuration())]
            except Exception as error:
                problems.append(ValidationProblem("", f"validation failed: {type(error).__name__}: {error}"))
        return problems

    def _configuration(self) -> ConfigurationContext:
        descriptors, _ = component_descriptors(self.service_class, self.properties)
        return ConfigurationContext(descriptors, self.properties, self.services, self.confinement, self.parameters)

    def enable(self) -> None:
        """Validate and enable the service; raises InvalidComponentError or ComponentStateError."""
        with self._lock:
            if self.state == "ENABLED":
                return
            problems = self.validate()
            if problems:
                raise InvalidComponentError(self.describe(), problems)
            self.state = "ENABLING"
            init = ServiceInitContext(self.identifier, self.name, str(self.data_dir) if self.data_dir else None,
                                      self.runtime.role.is_clustered, self.confinement)
            try:
                self.instance.on_enabled(self._configuration(), init)
            except Exception as error:
                self.state = "DISABLED"
                self.logger.error("failed to enable: %s: %s", type(error).__name__, error, exc_info=error)
                raise ComponentStateError(f"{self.describe()} could not be enabled: {error}") from error
            self.state = "ENABLED"

    def disable(self) -> None:
        """Disable the service (the controller checks that nothing running references it)."""
        with self._lock:
            if self.state != "ENABLED":
                return
            self.state = "DISABLING"
            try:
                self.instance.on_disabled()
            except Exception as error:
                self.logger.error("failed to disable cleanly: %s", error, exc_info=error)
            finally:
                self.state = "DISABLED"

    def describe(self) -> str:
        """``Type 'name' (id)`` for messages."""
        return f"{self.type_name} {self.name!r} ({self.identifier})"
