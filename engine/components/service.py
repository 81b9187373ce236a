"""Controller services: shared, configured objects that processors reference through a property.

A service class declares its properties like a processor and names the service APIs it
provides (``provides``); a processor property that needs a service names the API class
(``PropertyDescriptor(service=...)``). A service is enabled (``on_enabled``) before any
processor that references it can start, and disabled (``on_disabled``) only once they have
stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Iterable, Mapping, Sequence

from engine.components.properties import PropertyDescriptor

if TYPE_CHECKING:
    from engine.components.context import ConfigurationContext

__all__ = ["ControllerService", "ServiceInitContext"]


class ServiceInitContext:
    """What an enabling service may know of the node it runs on."""

    def __init__(self, identifier: str, name: str, data_dir: str | None, is_clustered: bool = False) -> None:
        self.identifier = identifier
        self.name = name
        #: A directory of the node where this service may keep files (None when there is none).
        self.data_dir = data_dir
        self.is_clustered = is_clustered


class ControllerService:
    """Base class of controller services."""

    abstract: ClassVar[bool] = True
    type_name: ClassVar[str] = ""
    nifi_type: ClassVar[str | None] = None
    nifi_bundle: ClassVar[Mapping[str, str] | None] = None
    #: Other names flows may use for this type (former NiFi class names, ...).
    aliases: ClassVar[tuple[str, ...]] = ()
    #: Former property names (NiFi 1.x) and the names they became; flows using them load as if
    #: they used the new ones.
    migrated_properties: ClassVar[Mapping[str, str]] = {}
    tags: ClassVar[tuple[str, ...]] = ()
    properties: ClassVar[Sequence[PropertyDescriptor]] = ()
    #: The service API classes this service implements.
    provides: ClassVar[tuple[type, ...]] = ()
    restricted: ClassVar[tuple[str, ...]] = ()
    see_also: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "abstract" not in cls.__dict__:
            cls.abstract = False
        if "type_name" not in cls.__dict__:
            cls.type_name = cls.__name__

    @classmethod
    def description(cls) -> str:
        """What the service does: its docstring."""
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
        """Services take no user-added properties unless they override this."""
        return None

    def validate(self, context: ConfigurationContext) -> Iterable[str]:
        """Problems the property validators cannot see."""
        return ()

    def on_enabled(self, context: ConfigurationContext, init: ServiceInitContext) -> None:
        """Become usable: connect, start listening, load what is persisted."""

    def on_disabled(self) -> None:
        """Release everything ``on_enabled`` acquired."""
