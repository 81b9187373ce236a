"""The catalogue of component types, read from the engine's registry (its descriptors,
relationships and documentation), as plain data for the API and the portal."""

from __future__ import annotations

from typing import Any

from engine.components import ComponentType, PropertyDescriptor, UnknownComponentTypeError, default_registry


def describe_property(descriptor: PropertyDescriptor) -> dict[str, Any]:
    """A property descriptor as data."""
    return {
        "name": descriptor.name,
        "displayName": descriptor.display_name,
        "description": descriptor.description,
        "required": descriptor.required,
        "defaultValue": descriptor.default,
        "allowableValues": [{"value": v.value, "displayName": v.display_name, "description": v.description}
                            for v in descriptor.allowed_values],
        "sensitive": descriptor.sensitive,
        "expressionLanguageScope": descriptor.expression_language.value,
        "dynamic": descriptor.dynamic,
        "identifiesControllerService": descriptor.service.__name__ if descriptor.service else None,
        "dependencies": [{"propertyName": d.property, "dependentValues": list(d.values)}
                         for d in descriptor.depends_on],
    }


def describe_type(component_type: ComponentType, kind: str) -> dict[str, Any]:
    """A processor or controller-service type as data."""
    cls = component_type.cls
    described = {
        "type": cls.type_name,
        "nifiType": cls.nifi_type,
        "names": component_type.names(),
        "origin": component_type.origin,
        "description": cls.description(),
        "documentation": (cls.__doc__ or "").strip(),
        "tags": list(cls.tags),
        "restricted": list(cls.restricted),
        "properties": [describe_property(d) for d in cls.properties],
        "seeAlso": list(cls.see_also),
    }
    if kind == "processor":
        dynamic = cls.dynamic_properties
        described.update(
            relationships=[{"name": r.name, "description": r.description,
                            "autoTerminateDefault": r.auto_terminate_default} for r in cls.relationships],
            dynamicRelationships=cls.dynamic_relationships,
            supportsDynamicProperties=dynamic is not None,
            dynamicProperties=None if dynamic is None else {"name": dynamic.name, "value": dynamic.value,
                                                            "description": dynamic.description},
            inputRequirement=cls.input_requirement.value,
            primaryNodeOnly=cls.primary_node_only,
            triggerSerially=cls.trigger_serially,
            defaultSchedulingPeriod=cls.default_scheduling_period,
            readsAttributes=[{"name": a.name, "description": a.description} for a in cls.reads_attributes],
            writesAttributes=[{"name": a.name, "description": a.description} for a in cls.writes_attributes],
            stateful=cls.stateful,
        )
    else:
        described["provides"] = [api.__name__ for api in getattr(cls, "provides", ())]
    return described


def processor_types() -> list[dict[str, Any]]:
    """Every processor type, by name."""
    return [describe_type(t, "processor") for t in sorted(default_registry().processors(), key=lambda t: t.type_name)]


def service_types() -> list[dict[str, Any]]:
    """Every controller-service type, by name."""
    return [describe_type(t, "service") for t in sorted(default_registry().services(), key=lambda t: t.type_name)]


def find_type(name: str, kind: str) -> dict[str, Any] | None:
    """The type called ``name`` (short or full name), or None."""
    registry = default_registry()
    try:
        cls = registry.processor(name) if kind == "processor" else registry.service(name)
    except UnknownComponentTypeError:
        return None
    listing = registry.processors() if kind == "processor" else registry.services()
    return describe_type(next(t for t in listing if t.cls is cls), kind)
