"""Validation of a component's configuration against its descriptors.

One implementation serves every caller: the runtime before it starts a component, the flow
loader, and the control plane when a user edits a property.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from engine.components.context import ConfigurationContext, ServiceLookup
from engine.components.properties import ExpressionScope, PropertyDescriptor
from engine.expression import ExpressionError, compile_expression

__all__ = ["ValidationContext", "ValidationProblem", "component_descriptors", "dependencies_met",
           "validate_properties"]

#: What validators receive: the component's configuration.
ValidationContext = ConfigurationContext


@dataclass(frozen=True)
class ValidationProblem:
    """One reason a component is invalid; ``subject`` is the property (or relationship) at fault,
    empty when the problem is the component's as a whole."""

    subject: str
    message: str

    def __str__(self) -> str:
        return f"'{self.subject}' {self.message}" if self.subject else self.message


def component_descriptors(
    component_type: Any, properties: Mapping[str, str | None]
) -> tuple[dict[str, PropertyDescriptor], list[ValidationProblem]]:
    """The descriptors of a component configured with ``properties``: its own, then one per
    user-added property it accepts. Properties it does not accept are reported, unless they
    are unset (flows written by NiFi list every property of a component, set or not)."""
    descriptors = {descriptor.name: descriptor for descriptor in component_type.properties}
    problems = []
    for name, value in properties.items():
        if name in descriptors or value is None:
            continue
        dynamic = component_type.dynamic_property_descriptor(name)
        if dynamic is None:
            problems.append(ValidationProblem(name, f"is not a property of {component_type.type_name}"))
        else:
            descriptors[name] = dynamic
    return descriptors, problems


def dependencies_met(descriptor: PropertyDescriptor, context: ConfigurationContext) -> bool:
    """True when every property ``descriptor`` depends on has a value it depends on."""
    for dependency in descriptor.depends_on:
        value = context.property(dependency.property).value
        if value is None or (dependency.values and value not in dependency.values):
            return False
    return True


def validate_properties(
    component_type: Any, properties: Mapping[str, str | None], services: ServiceLookup | None = None,
    *, node_local: bool = True, confinement: Any = None,
) -> list[ValidationProblem]:
    """Every problem with ``properties`` as a configuration of ``component_type`` (a processor or
    controller-service class): unknown and missing properties, values outside the allowed ones,
    values the validators refuse, malformed expressions, and service references to nothing, to
    a service of the wrong kind or to a disabled one. With ``node_local=False`` the validators
    that look at the node's own files are skipped (validation away from the node); those run
    under ``confinement`` (an ``engine.confinement.Policy``) look at no file it refuses."""
    descriptors, problems = component_descriptors(component_type, properties)
    context = ConfigurationContext(descriptors, properties, services, confinement)
    for name, descriptor in descriptors.items():
        if not dependencies_met(descriptor, context):
            continue
        value = context.property(name).value
        if value is None:
            if descriptor.required:
                problems.append(ValidationProblem(name, "is required"))
            continue
        problem = _check_value(descriptor, value, context, services, node_local)
        if problem is not None:
            problems.append(ValidationProblem(name, problem))
    return problems


def _check_value(
    descriptor: PropertyDescriptor, value: str, context: ConfigurationContext, services: ServiceLookup | None,
    node_local: bool,
) -> str | None:
    if descriptor.service is not None:
        return _check_service(descriptor, value, services)
    if descriptor.supports_expressions and "${" in value:
        try:
            compiled = compile_expression(value)
        except ExpressionError as error:
            return f"holds an invalid expression: {error}"
        if not compiled.is_literal:
            if descriptor.expression_language is ExpressionScope.FLOWFILE_ATTRIBUTES:
                return None  # only a FlowFile can tell what it evaluates to
            try:
                value = context.property(descriptor.name).evaluate().value or ""
            except ExpressionError as error:
                return f"holds an expression that fails: {error}"
    allowed = descriptor.allowed()
    if allowed and value not in allowed:
        return f"is {value!r}, which is not one of the allowed values: {', '.join(allowed)}"
    for validator in descriptor.validators:
        if not node_local and getattr(validator, "node_local", False):
            continue
        problem = validator(value, context)
        if problem is not None:
            return problem
    return None


def _check_service(descriptor: PropertyDescriptor, identifier: str, services: ServiceLookup | None) -> str | None:
    reference = services.service_reference(identifier) if services is not None else None
    api = descriptor.service
    if reference is None:
        return f"references controller service {identifier!r}, which does not exist"
    if not any(issubclass(provided, api) for provided in reference.provides):
        return (f"references controller service {reference.name!r} ({reference.type_name}), "
                f"which is not a {api.__name__}")
    if not reference.enabled:
        return f"references controller service {reference.name!r}, which is not enabled"
    return None
