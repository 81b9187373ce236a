"""The component API: processors, controller services, their properties, relationships and state.

Everything a processor or controller-service author needs is importable from here; see
``docs/writing-processors.md``.
"""

from engine.components.context import (
    ConfigurationContext,
    ProcessContext,
    PropertyValue,
    ServiceLookup,
    ServiceReference,
)
from engine.components.errors import ProcessException
from engine.components.processor import DynamicProperties, InputRequirement, Processor, WrittenAttribute
from engine.components.properties import AllowableValue, ExpressionScope, PropertyDependency, PropertyDescriptor
from engine.components.registry import ComponentRegistry, ComponentType, UnknownComponentTypeError, default_registry
from engine.components.relationships import Relationship
from engine.components.service import ControllerService, ServiceInitContext
from engine.components.state import Scope, StateManager, StateMap
from engine.components.validation import ValidationProblem, validate_properties

__all__ = [
    "AllowableValue", "ComponentRegistry", "ComponentType", "ConfigurationContext", "ControllerService",
    "DynamicProperties", "ExpressionScope", "InputRequirement", "ProcessContext", "ProcessException", "Processor", "PropertyDependency",
    "PropertyDescriptor", "PropertyValue", "Relationship", "Scope", "ServiceInitContext", "ServiceLookup",
    "ServiceReference", "StateManager", "StateMap", "UnknownComponentTypeError", "ValidationProblem",
    "WrittenAttribute", "default_registry", "validate_properties",
]
