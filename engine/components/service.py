"""Controller services: shared, configured objects that processors reference through a property.

A service class declares its properties like a processor and names the service APIs it
provides (``provides``); a processor property that needs a service names the API class
(``PropertyDescriptor(service=...)``). A service is enabled (``on_enabled``) before any
processor that references it can start, and disabled (``on_disabled``) only once they have
stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from engine.components.component import ConfigurableComponent
from engine.confinement import OPERATOR

if TYPE_CHECKING:
    from engine.components.context import ConfigurationContext
    from engine.confinement import Policy

__all__ = ["ControllerService", "ServiceInitContext"]


class ServiceInitContext:
    """What an enabling service may know of the node it runs on."""

    def __init__(self, identifier: str, name: str, data_dir: str | None, is_clustered: bool = False,
                 confinement: Policy | None = None) -> None:
        self.identifier = identifier
        self.name = name
        #: A directory of the node where this service may keep files (None when there is none).
        self.data_dir = data_dir
        self.is_clustered = is_clustered
        #: What the service may touch (``engine.confinement``): files, connections, ports.
        self.confinement = confinement or OPERATOR


class ControllerService(ConfigurableComponent):
    """Base class of controller services (see ``ConfigurableComponent`` for the class attributes)."""

    abstract: ClassVar[bool] = True
    #: The service API classes this service implements.
    provides: ClassVar[tuple[type, ...]] = ()

    def on_enabled(self, context: ConfigurationContext, init: ServiceInitContext) -> None:
        """Become usable: connect, start listening, load what is persisted."""

    def on_disabled(self) -> None:
        """Release everything ``on_enabled`` acquired."""
