"""What processors and controller services have in common: their identity in flows, their
properties, and the way former NiFi names are read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterable, Mapping, Sequence

from engine.components.properties import ExpressionScope, PropertyDescriptor

if TYPE_CHECKING:
    from engine.components.context import ConfigurationContext

__all__ = ["ConfigurableComponent", "DynamicProperties"]


@dataclass(frozen=True)
class DynamicProperties:
    """What user-added properties mean for a component that accepts them (for its documentation
    and for the descriptors they get). With ``sensitive_prefix``, a property whose name starts
    with it is sensitive and takes no Expression Language (NiFi's ``SENSITIVE.`` properties)."""

    name: str
    value: str
    description: str
    expression_language: ExpressionScope = ExpressionScope.NONE
    sensitive_prefix: str | None = None


class ConfigurableComponent:
    """Base of component types: class attributes say what the type is and how it is configured."""

    #: Abstract helper classes set this so the registry skips them.
    abstract: ClassVar[bool] = True
    #: The short type name used in flow definitions; the class name by default.
    type_name: ClassVar[str] = ""
    #: The NiFi class this type stands for, so NiFi flow definitions load unchanged.
    nifi_type: ClassVar[str | None] = None
    #: The NiFi bundle it belongs to (written when a flow is exported).
    nifi_bundle: ClassVar[Mapping[str, str] | None] = None
    #: Other names flows may use for this type (former NiFi class names, ...).
    aliases: ClassVar[tuple[str, ...]] = ()
    #: Former property names (NiFi 1.x) and the names they became; flows using them load as if
    #: they used the new ones.
    migrated_properties: ClassVar[Mapping[str, str]] = {}
    tags: ClassVar[tuple[str, ...]] = ()
    properties: ClassVar[Sequence[PropertyDescriptor]] = ()
    #: The NiFi 2 capabilities a tenant must hold to use the type (``read-filesystem``,
    #: ``write-filesystem``, ``execute-code``, ...; ``engine.flow.loader.CAPABILITIES``).
    restricted: ClassVar[tuple[str, ...]] = ()
    see_also: ClassVar[tuple[str, ...]] = ()
    #: What user-added properties mean; None when the type takes none.
    dynamic_properties: ClassVar[DynamicProperties | None] = None

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "abstract" not in cls.__dict__:
            cls.abstract = False
        if "type_name" not in cls.__dict__:
            cls.type_name = cls.__name__

    @classmethod
    def description(cls) -> str:
        """What the component does: the first paragraph of its docstring."""
        return " ".join((cls.__doc__ or "").split("\n\n")[0].split())

    @classmethod
    def migrate_properties(cls, properties: Mapping[str, str | None]) -> dict[str, str | None]:
        """``properties`` with former names replaced by current ones (a current name wins)."""
        migrated = dict(properties)
        for old, new in cls.migrated_properties.items():
            if old in migrated:
                value = migrated.pop(old)
                if migrated.get(new) is None:
                    migrated[new] = value
        return migrated

    @classmethod
    def dynamic_property_descriptor(cls, name: str) -> PropertyDescriptor | None:
        """The descriptor of a user-added property ``name``; None when the type takes none."""
        spec = cls.dynamic_properties
        if spec is None:
            return None
        if spec.sensitive_prefix and name.startswith(spec.sensitive_prefix):
            return PropertyDescriptor(name, description=spec.description, dynamic=True, sensitive=True)
        return PropertyDescriptor(name, description=spec.description, dynamic=True,
                                  expression_language=spec.expression_language)

    @classmethod
    def is_sensitive(cls, name: str) -> bool:
        """True when property ``name`` (declared or user-added) holds a secret."""
        for descriptor in cls.properties:
            if descriptor.name == name:
                return descriptor.sensitive
        dynamic = cls.dynamic_property_descriptor(name)
        return dynamic is not None and dynamic.sensitive

    def validate(self, context: ConfigurationContext) -> Iterable[str]:
        """Problems the property validators cannot see (combinations of properties)."""
        return ()
