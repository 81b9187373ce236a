"""What a component sees of its configuration: property values, services, and (for processors)
its place in the flow while it runs."""

from __future__ import annotations

import logging
import os
from collections import ChainMap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Protocol

from engine.components.properties import ExpressionScope, PropertyDescriptor
from engine.confinement import OPERATOR
from engine.expression import CompiledExpression, compile_expression
from engine.java_regex import java_regex
from engine.units import parse_data_size, parse_duration

if TYPE_CHECKING:
    import regex

    from engine.components.state import StateManager
    from engine.confinement import Policy
    from engine.flowfile import FlowFile
    from engine.session import ProcessSession

__all__ = [
    "FlowFileScope", "PropertyValue", "ServiceLookup", "ServiceReference", "ConfigurationContext", "ProcessContext", "ProcessorHost",
]


@dataclass(frozen=True)
class ServiceReference:
    """A controller service as a property that references it sees it."""

    identifier: str
    name: str
    type_name: str
    enabled: bool
    provides: tuple[type, ...]
    instance: Any = None


class ServiceLookup(Protocol):
    """Finds controller services by identifier."""

    def service_reference(self, identifier: str) -> ServiceReference | None:
        """The service with ``identifier``, or None when there is none."""


class FlowFileScope(Mapping[str, str]):
    """A FlowFile's attributes as expressions see them: its attributes, plus ``fileSize``,
    ``entryDate`` and ``lineageStartDate`` when no attribute has those names (as in NiFi)."""

    __slots__ = ("_flowfile",)

    _PROPERTIES = {
        "fileSize": lambda f: str(f.size),
        "entryDate": lambda f: str(f.entry_date),
        "lineageStartDate": lambda f: str(f.lineage_start_date),
    }

    def __init__(self, flowfile: FlowFile) -> None:
        self._flowfile = flowfile

    def __getitem__(self, key: str) -> str:
        attributes = self._flowfile.attributes
        if key in attributes:
            return attributes[key]
        compute = self._PROPERTIES.get(key)
        if compute is None:
            raise KeyError(key)
        return compute(self._flowfile)

    def get(self, key: str, default=None):
        value = self._flowfile.attributes.get(key)
        if value is not None:
            return value
        compute = self._PROPERTIES.get(key)
        return compute(self._flowfile) if compute is not None else default

    def __iter__(self):
        return iter(self._flowfile.attributes)

    def __len__(self) -> int:
        return len(self._flowfile.attributes)


class PropertyValue:
    """The configured value of one property (parameters already substituted, default applied).

    ``evaluate`` returns the value with its expressions evaluated (for properties that support
    Expression Language); the ``as_*`` methods convert it, returning None when it is not set.
    """

    __slots__ = ("_raw", "_descriptor", "_services", "_compiled", "_parameters")

    def __init__(
        self, raw: str | None, descriptor: PropertyDescriptor | None = None, services: ServiceLookup | None = None,
        parameters: Mapping[str, str] | None = None,
    ) -> None:
        self._raw = raw
        self._descriptor = descriptor
        self._services = services
        self._compiled: CompiledExpression | None = None
        self._parameters = parameters

    @property
    def value(self) -> str | None:
        """The value as configured (expressions not evaluated)."""
        return self._raw

    @property
    def descriptor(self) -> PropertyDescriptor | None:
        """The property's descriptor."""
        return self._descriptor

    def is_set(self) -> bool:
        """True when the property has a value (its own or its default)."""
        return self._raw is not None

    def evaluate(self, flowfile: FlowFile | None = None, attributes: Mapping[str, str] | None = None, *,
                 state: Mapping[str, str] | None = None) -> PropertyValue:
        """The value with expressions evaluated against ``flowfile``'s attributes (and ``attributes``,
        which take precedence), then environment variables; ``state`` answers ``getStateValue(key)``.

        Raises ``ExpressionError`` when the expression fails for this FlowFile.
        """
        descriptor = self._descriptor
        if self._raw is None or descriptor is None or descriptor.expression_language is ExpressionScope.NONE:
            return self
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = compile_expression(self._raw)
        if compiled.is_literal:
            return self
        if descriptor.expression_language is ExpressionScope.ENVIRONMENT:
            scope: Mapping[str, str] = {}
        elif flowfile is not None and attributes:
            scope = ChainMap(dict(attributes), FlowFileScope(flowfile))  # type: ignore[arg-type]
        elif flowfile is not None:
            scope = FlowFileScope(flowfile)
        else:
            scope = attributes or {}
        return PropertyValue(compiled.evaluate(scope, os.environ, self._parameters, state), descriptor, self._services)

    def as_int(self) -> int | None:
        """The value as a whole number."""
        return None if self._raw is None else int(self._raw.strip())

    def as_float(self) -> float | None:
        """The value as a number."""
        return None if self._raw is None else float(self._raw.strip())

    def as_bool(self) -> bool | None:
        """The value as a boolean (``true`` in any case is true)."""
        return None if self._raw is None else self._raw.strip().lower() == "true"

    def as_duration(self) -> float | None:
        """The value as a duration in seconds (``30 sec`` → 30.0)."""
        return None if self._raw is None else parse_duration(self._raw)

    def as_data_size(self) -> int | None:
        """The value as a number of bytes (``1 KB`` → 1024)."""
        return None if self._raw is None else parse_data_size(self._raw)

    def as_regex(self, flags: int = 0) -> regex.Pattern[str] | None:
        """The value compiled as a (Java-syntax) regular expression."""
        return None if self._raw is None else java_regex(self._raw, flags)

    def as_service(self) -> Any:
        """The controller service the value references (its instance), or None when unset."""
        if self._raw is None:
            return None
        reference = self._services.service_reference(self._raw) if self._services is not None else None
        if reference is None or not reference.enabled:
            raise LookupError(f"controller service {self._raw!r} is not available")
        return reference.instance

    def __repr__(self) -> str:
        name = self._descriptor.name if self._descriptor is not None else "?"
        shown = "********" if self._descriptor is not None and self._descriptor.sensitive else self._raw
        return f"PropertyValue({name}={shown!r})"


class ConfigurationContext:
    """A component's properties, as its lifecycle hooks and validation see them."""

    def __init__(
        self,
        descriptors: Mapping[str, PropertyDescriptor],
        properties: Mapping[str, str | None],
        services: ServiceLookup | None = None,
        confinement: Policy | None = None,
        parameters: Mapping[str, str] | None = None,
    ) -> None:
        self._descriptors = descriptors
        self._services = services
        self._confinement = confinement or OPERATOR
        self._values: dict[str, PropertyValue] = {}
        for name, descriptor in descriptors.items():
            raw = properties.get(name)
            self._values[name] = PropertyValue(raw if raw is not None else descriptor.default, descriptor, services,
                                               parameters)

    @property
    def descriptors(self) -> Mapping[str, PropertyDescriptor]:
        """Every property of the component (dynamic ones included), by name."""
        return self._descriptors

    @property
    def services(self) -> ServiceLookup | None:
        """Where referenced controller services are found."""
        return self._services

    @property
    def confinement(self) -> Policy:
        """What the component may touch: files, connections, ports (``engine.confinement``)."""
        return self._confinement

    @property
    def properties(self) -> dict[str, PropertyValue]:
        """Every property value by name."""
        return dict(self._values)

    @property
    def dynamic_properties(self) -> dict[str, PropertyValue]:
        """The user-added (dynamic) properties by name, in configuration order."""
        return {name: value for name, value in self._values.items() if self._descriptors[name].dynamic}

    # Defined last: inside this class body the name would hide the ``property`` decorator.
    def property(self, name: str | PropertyDescriptor) -> PropertyValue:
        """The value of a property (an unknown name reads as unset)."""
        key = name.name if isinstance(name, PropertyDescriptor) else name
        value = self._values.get(key)
        return value if value is not None else PropertyValue(None)


class ProcessorHost(Protocol):
    """The part of the runtime a processor's context delegates to (the processor's node)."""

    identifier: str
    name: str
    logger: logging.LoggerAdapter
    clock: Any
    state_manager: StateManager
    is_primary_node: bool
    is_clustered: bool
    max_concurrent_tasks: int
    yield_duration: float
    penalty_duration: float

    def yield_processor(self) -> None: ...

    def create_session(self) -> ProcessSession: ...

    def has_incoming_connection(self) -> bool: ...

    def has_connection(self, relationship: str) -> bool: ...

    def available_relationships(self) -> set[str]: ...


class ProcessContext(ConfigurationContext):
    """What a processor sees while it is scheduled: its properties, its place in the flow, the
    node, its state, and ways to yield and to open sessions of its own."""

    def __init__(
        self,
        descriptors: Mapping[str, PropertyDescriptor],
        properties: Mapping[str, str | None],
        services: ServiceLookup | None,
        host: ProcessorHost,
    ) -> None:
        super().__init__(descriptors, properties, services, getattr(host, "confinement", None),
                         getattr(host, "parameters", None))
        self._host = host

    @property
    def identifier(self) -> str:
        """The processor's identifier in the flow."""
        return self._host.identifier

    @property
    def name(self) -> str:
        """The processor's name in the flow."""
        return self._host.name

    @property
    def logger(self) -> logging.LoggerAdapter:
        """A logger whose warnings and errors also become bulletins of this processor."""
        return self._host.logger

    def refused(self, error: Exception) -> str:
        """A refusal as bulletins say it: ``Type[id] refused what: why``."""
        return f"{getattr(self._host, 'component_type', 'Processor')}[{self._host.identifier}] {error}"

    @property
    def clock(self) -> Any:
        """The node's clock: ``monotonic()`` for intervals (bin ages...), ``time()`` for dates.
        Tests run the node on a clock they move by hand."""
        return self._host.clock

    def yield_processor(self) -> None:
        """Do not trigger this processor again for its yield duration (the remote end is down...)."""
        self._host.yield_processor()

    @property
    def state(self) -> StateManager:
        """This component's state."""
        return self._host.state_manager

    def create_session(self) -> ProcessSession:
        """A new session of this processor, for work done outside ``on_trigger`` (a listener's
        requests, a merge bin kept across triggers)."""
        return self._host.create_session()

    @property
    def is_primary_node(self) -> bool:
        """True when this node is the cluster's primary node (always true on a lone node)."""
        return self._host.is_primary_node

    @property
    def is_clustered(self) -> bool:
        """True when this node is part of a cluster."""
        return self._host.is_clustered

    @property
    def max_concurrent_tasks(self) -> int:
        """How many tasks of this processor may run at once."""
        return self._host.max_concurrent_tasks

    @property
    def yield_duration(self) -> float:
        """The processor's yield duration in seconds."""
        return self._host.yield_duration

    @property
    def penalty_duration(self) -> float:
        """The processor's penalty duration in seconds."""
        return self._host.penalty_duration

    def has_incoming_connection(self) -> bool:
        """True when some connection brings FlowFiles to this processor."""
        return self._host.has_incoming_connection()

    def has_connection(self, relationship: str) -> bool:
        """True when ``relationship`` has at least one connection."""
        return self._host.has_connection(relationship)

    def available_relationships(self) -> set[str]:
        """Relationships whose connections are not all full (auto-terminated ones included)."""
        return self._host.available_relationships()
