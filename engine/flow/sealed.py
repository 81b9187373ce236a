"""Sensitive values of a flow definition, sealed for the way to the nodes and opened there.

``seal_flow`` returns a copy of a flow definition in which every sensitive property value of a
processor or controller service, and every sensitive parameter value, is sealed with
``engine.secrets.SensitiveKey``. Each value is bound to where it belongs:
``<component identifier>/<property name>`` for a property,
``parameter-context:<context name>/<parameter name>`` for a parameter, so a sealed value copied
to another place does not open. Parameter references (``#{name}``) and absent values stay as
they are. ``open_flow`` reverses it on a node, which holds the same key.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Callable, Iterator

from engine.components import UnknownComponentTypeError, default_registry
from engine.secrets import PREFIX, SensitiveKey, SensitiveValueError

__all__ = ["is_sensitive_property", "open_flow", "parameter_binding", "property_binding", "seal_flow"]

PARAMETER_REFERENCE = re.compile(r"^#\{[^{}]+\}$")

#: ``is_sensitive(component, kind, name)``: whether property ``name`` of ``component`` (its flow
#: definition entry; ``kind`` is ``PROCESSOR`` or ``CONTROLLER_SERVICE``) is sensitive.
SensitivePredicate = Callable[[dict[str, Any], str, str], bool]


def property_binding(component_identifier: str, name: str) -> str:
    """What a sealed property value is bound to."""
    return f"{component_identifier}/{name}"


def parameter_binding(context_name: str, name: str) -> str:
    """What a sealed parameter value is bound to."""
    return f"parameter-context:{context_name}/{name}"


def is_sensitive_property(component: dict[str, Any], kind: str, name: str) -> bool:
    """The engine registry's word on a property; for a type it does not know, the component's own
    ``propertyDescriptors`` (NiFi writes them) decide."""
    registry = default_registry()
    try:
        cls = registry.processor(component["type"]) if kind == "PROCESSOR" else registry.service(component["type"])
    except (UnknownComponentTypeError, KeyError):
        descriptor = (component.get("propertyDescriptors") or {}).get(name)
        return isinstance(descriptor, dict) and bool(descriptor.get("sensitive"))
    return any(descriptor.name == name and descriptor.sensitive for descriptor in cls.properties)


def _configurables(group: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every processor and controller service of ``group`` and its descendants, with its kind."""
    for processor in group.get("processors") or ():
        yield "PROCESSOR", processor
    for service in group.get("controllerServices") or ():
        yield "CONTROLLER_SERVICE", service
    for child in group.get("processGroups") or ():
        yield from _configurables(child)


def _sealable(value: Any) -> bool:
    return isinstance(value, str) and not value.startswith(PREFIX) and not PARAMETER_REFERENCE.match(value)


def seal_flow(document: dict[str, Any], key: SensitiveKey,
              is_sensitive: SensitivePredicate = is_sensitive_property) -> dict[str, Any]:
    """A copy of ``document`` with its sensitive values sealed under ``key`` (see the module docstring)."""
    sealed = copy.deepcopy(document)
    for kind, component in _configurables(sealed.get("flowContents") or {}):
        properties = component.get("properties") or {}
        for name, value in properties.items():
            if _sealable(value) and is_sensitive(component, kind, name):
                properties[name] = key.seal(value, property_binding(component["identifier"], name))
    for context_name, context in (sealed.get("parameterContexts") or {}).items():
        for parameter in context.get("parameters") or ():
            value = parameter.get("value")
            if parameter.get("sensitive") and _sealable(value):
                parameter["value"] = key.seal(value, parameter_binding(context.get("name", context_name),
                                                                       parameter["name"]))
    return sealed


def open_flow(document: dict[str, Any], key: SensitiveKey) -> dict[str, Any]:
    """A copy of ``document`` with every sealed value opened with ``key``; raises ValueError naming
    the component and property (or context and parameter) of a value that does not open."""
    opened = copy.deepcopy(document)
    for kind, component in _configurables(opened.get("flowContents") or {}):
        properties = component.get("properties") or {}
        for name, value in properties.items():
            if isinstance(value, str) and value.startswith(PREFIX):
                ident = component.get("identifier", "")
                try:
                    properties[name] = key.open(value, property_binding(ident, name))
                except SensitiveValueError as error:
                    label = kind.lower().replace("_", " ")
                    raise ValueError(f"{label} {component.get('name', '')!r} ({ident}): property {name!r} "
                                     f"does not open: {error}") from None
    for context_name, context in (opened.get("parameterContexts") or {}).items():
        name_of_context = context.get("name", context_name)
        for parameter in context.get("parameters") or ():
            value = parameter.get("value")
            if isinstance(value, str) and value.startswith(PREFIX):
                try:
                    parameter["value"] = key.open(value, parameter_binding(name_of_context, parameter["name"]))
                except SensitiveValueError as error:
                    raise ValueError(f"parameter context {name_of_context!r}: parameter {parameter['name']!r} "
                                     f"does not open: {error}") from None
    return opened
