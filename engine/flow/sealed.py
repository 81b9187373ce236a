"""Sensitive values of a flow definition, sealed for the way to the nodes and opened there.

``seal_flow`` returns a copy of a flow definition in which every sensitive property value of a
processor or controller service, and every sensitive parameter value, is sealed with one
``engine.secrets.SensitiveKey`` (the control plane seals each tenant's document with that
tenant's key). Each value is bound to where it belongs:
``<component identifier>/<property name>`` for a property,
``parameter-context:<context name>/<parameter name>`` for a parameter, so a sealed value copied
to another place does not open. Parameter references (``#{name}``) and absent values stay as
they are.

``open_flow`` reverses it on a node, which holds the master key: a component inside a tenant's
group (the ``tenants`` section names each tenant's ``group`` and ``id``) opens with that
tenant's key, a parameter context named ``<tenant slug>/…`` with its tenant's key, anything else
with the platform key. A value moved into another tenant's group therefore does not open.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Callable, Iterator

from engine.components import UnknownComponentTypeError, default_registry
from engine.secrets import MasterKey, SensitiveKey, SensitiveValueError, is_sealed

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
    return cls.is_sensitive(name)


def _configurables(group: dict[str, Any], scope: str = "",
                   scopes: dict[str, str] | None = None) -> Iterator[tuple[str, dict[str, Any], str]]:
    """Every processor and controller service of ``group`` and its descendants, with its kind and
    scope: the id of the tenant whose group (``scopes``: group identifier → tenant id) holds it,
    or "" outside every tenant."""
    scope = (scopes or {}).get(group.get("identifier", ""), scope)
    for processor in group.get("processors") or ():
        yield "PROCESSOR", processor, scope
    for service in group.get("controllerServices") or ():
        yield "CONTROLLER_SERVICE", service, scope
    for child in group.get("processGroups") or ():
        yield from _configurables(child, scope, scopes)


def _sealable(value: Any) -> bool:
    return isinstance(value, str) and not is_sealed(value) and not PARAMETER_REFERENCE.match(value)


def seal_flow(document: dict[str, Any], key: SensitiveKey,
              is_sensitive: SensitivePredicate = is_sensitive_property) -> dict[str, Any]:
    """A copy of ``document`` with its sensitive values sealed under ``key`` (see the module docstring)."""
    sealed = copy.deepcopy(document)
    for kind, component, _ in _configurables(sealed.get("flowContents") or {}):
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


def _tenant_scopes(document: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """From the ``tenants`` section: tenant id by group identifier, and tenant id by slug."""
    groups, slugs = {}, {}
    for slug, entry in (document.get("tenants") or {}).items():
        if isinstance(entry, dict) and entry.get("group"):
            tenant_id = str(entry.get("id") or "")
            if not tenant_id:
                raise ValueError(f"tenant {slug!r} of the flow has no id: its sealed values cannot be opened")
            groups[entry["group"]] = slugs[slug] = tenant_id
    return groups, slugs


def open_flow(document: dict[str, Any], master: MasterKey) -> dict[str, Any]:
    """A copy of ``document`` with every sealed value opened with its scope's key (see the module
    docstring); raises ValueError naming the component and property (or context and parameter)
    of a value that does not open."""
    opened = copy.deepcopy(document)
    groups, slugs = _tenant_scopes(opened)

    def key_of(scope: str) -> SensitiveKey:
        return master.tenant(scope) if scope else master.platform()

    for kind, component, scope in _configurables(opened.get("flowContents") or {}, "", groups):
        properties = component.get("properties") or {}
        for name, value in properties.items():
            if is_sealed(value):
                ident = component.get("identifier", "")
                try:
                    properties[name] = key_of(scope).open(value, property_binding(ident, name))
                except SensitiveValueError as error:
                    label = kind.lower().replace("_", " ")
                    raise ValueError(f"{label} {component.get('name', '')!r} ({ident}): property {name!r} "
                                     f"does not open: {error}") from None
    for context_name, context in (opened.get("parameterContexts") or {}).items():
        name_of_context = context.get("name", context_name)
        scope = slugs.get(name_of_context.split("/", 1)[0], "") if "/" in name_of_context else ""
        for parameter in context.get("parameters") or ():
            value = parameter.get("value")
            if is_sealed(value):
                try:
                    parameter["value"] = key_of(scope).open(value, parameter_binding(name_of_context,
                                                                                     parameter["name"]))
                except SensitiveValueError as error:
                    raise ValueError(f"parameter context {name_of_context!r}: parameter {parameter['name']!r} "
                                     f"does not open: {error}") from None
    return opened
