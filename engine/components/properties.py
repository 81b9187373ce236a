"""Property descriptors: what a processor or controller service can be configured with."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Callable, Optional, Sequence

if TYPE_CHECKING:
    from engine.components.validation import ValidationContext

__all__ = ["AllowableValue", "ExpressionScope", "PropertyDependency", "PropertyDescriptor", "Validator"]

#: A validator returns None when the value is acceptable, else why it is not (one sentence,
#: without the property name: the caller adds it).
Validator = Callable[[str, "ValidationContext"], Optional[str]]


class ExpressionScope(str, Enum):
    """Whether a property's value is evaluated as Expression Language, and against what.

    ``ENVIRONMENT`` expressions see environment variables only (they are evaluated once, at
    validation and when read); ``FLOWFILE_ATTRIBUTES`` expressions see the FlowFile being
    processed, then environment variables.
    """

    NONE = "NONE"
    ENVIRONMENT = "ENVIRONMENT"
    FLOWFILE_ATTRIBUTES = "FLOWFILE_ATTRIBUTES"


@dataclass(frozen=True)
class AllowableValue:
    """One of the values a property accepts, with the name shown to users."""

    value: str
    display_name: str = ""
    description: str = ""

    def __post_init__(self) -> None:
        if not self.display_name:
            object.__setattr__(self, "display_name", self.value)


@dataclass(frozen=True)
class PropertyDependency:
    """A property that matters only while ``property`` is set (to one of ``values`` when given)."""

    property: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class PropertyDescriptor:
    """A configurable property of a component.

    ``name`` is the key in the flow definition (NiFi's API name); ``display_name`` is what users
    read. ``default`` applies when the property is not set. ``validators`` run on the value
    (after parameters are substituted; skipped while the value holds a FlowFile-scoped
    expression, which only a FlowFile can resolve). ``service`` names the controller-service API
    a value must reference. A property with ``depends_on`` is ignored (neither required nor
    validated) unless every dependency is met.
    """

    name: str
    display_name: str = ""
    description: str = ""
    required: bool = False
    default: str | None = None
    allowed_values: Sequence[AllowableValue | str] = ()
    validators: Sequence[Validator] = ()
    sensitive: bool = False
    expression_language: ExpressionScope = ExpressionScope.NONE
    dynamic: bool = False
    service: type | None = None
    depends_on: Sequence[PropertyDependency] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not self.display_name:
            object.__setattr__(self, "display_name", self.name)
        values = tuple(v if isinstance(v, AllowableValue) else AllowableValue(v) for v in self.allowed_values)
        object.__setattr__(self, "allowed_values", values)
        object.__setattr__(self, "validators", tuple(self.validators))
        object.__setattr__(self, "depends_on", tuple(self.depends_on))
        if self.default is not None and values and self.default not in {v.value for v in values}:
            raise ValueError(f"the default of property {self.name!r} is not one of its allowed values")

    @property
    def supports_expressions(self) -> bool:
        """True when values are evaluated as Expression Language."""
        return self.expression_language is not ExpressionScope.NONE

    def allowed(self) -> tuple[str, ...]:
        """The allowed values (empty when any value is accepted)."""
        return tuple(v.value for v in self.allowed_values)  # type: ignore[union-attr]
