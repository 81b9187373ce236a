"""The registry of component types: processors and controller services, found by name.

Types come from the modules of ``engine.processors`` and ``engine.services`` and from installed
packages that declare entry points in the groups ``flowsite.processors`` and
``flowsite.controller_services`` (an entry point names a class, or a module whose component
classes are all taken). A type is found by its short name (``GenerateFlowFile``), the NiFi class
it stands for (``org.apache.nifi.processors.standard.GenerateFlowFile``), one of its aliases,
or its Python path (``engine.processors.generate_flowfile.GenerateFlowFile``).
"""

from __future__ import annotations

import importlib
import inspect
import logging
import pkgutil
import threading
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import ModuleType
from typing import Iterable

from engine.components.processor import Processor
from engine.components.service import ControllerService

__all__ = ["ComponentRegistry", "ComponentType", "UnknownComponentTypeError", "default_registry"]

log = logging.getLogger(__name__)

PROCESSOR_GROUP = "flowsite.processors"
SERVICE_GROUP = "flowsite.controller_services"
BUILTIN_PACKAGES = ("engine.processors", "engine.services")


class UnknownComponentTypeError(LookupError):
    """No registered component type has the name asked for."""

    def __init__(self, kind: str, name: str) -> None:
        super().__init__(f"unknown {kind} type {name!r}")
        self.kind = kind
        self.name = name


@dataclass(frozen=True)
class ComponentType:
    """A registered type and where it came from."""

    cls: type
    origin: str

    @property
    def type_name(self) -> str:
        """The short name."""
        return self.cls.type_name

    @property
    def python_path(self) -> str:
        """``module.Class``."""
        return f"{self.cls.__module__}.{self.cls.__qualname__}"

    def names(self) -> list[str]:
        """Every name the type answers to."""
        names = [self.cls.type_name, self.python_path, *self.cls.aliases]
        if self.cls.nifi_type:
            names.append(self.cls.nifi_type)
        return names


class ComponentRegistry:
    """Processor and controller-service types by name (see the module docstring)."""

    def __init__(self, packages: Iterable[str] = BUILTIN_PACKAGES, *, use_entry_points: bool = True) -> None:
        self._types: dict[str, dict[str, ComponentType]] = {"processor": {}, "controller service": {}}
        for package in packages:
            self._scan_package(package)
        if use_entry_points:
            self._scan_entry_points()

    # -- lookup ---------------------------------------------------------------------------

    def processor(self, name: str) -> type[Processor]:
        """The processor class called ``name``; raises UnknownComponentTypeError."""
        return self._find("processor", name).cls

    def service(self, name: str) -> type[ControllerService]:
        """The controller-service class called ``name``; raises UnknownComponentTypeError."""
        return self._find("controller service", name).cls

    def has_processor(self, name: str) -> bool:
        """True when a processor type answers to ``name``."""
        return name in self._types["processor"]

    def processors(self) -> list[ComponentType]:
        """Every processor type, by short name."""
        return self._unique("processor")

    def services(self) -> list[ComponentType]:
        """Every controller-service type, by short name."""
        return self._unique("controller service")

    def services_providing(self, api: type) -> list[ComponentType]:
        """The controller-service types that implement ``api``."""
        return [t for t in self.services() if any(issubclass(p, api) for p in t.cls.provides)]

    # -- registration ---------------------------------------------------------------------

    def register(self, cls: type, origin: str = "registered") -> None:
        """Add one component class (a Processor or ControllerService subclass)."""
        if issubclass(cls, Processor):
            kind = "processor"
        elif issubclass(cls, ControllerService):
            kind = "controller service"
        else:
            raise TypeError(f"{cls!r} is neither a Processor nor a ControllerService")
        entry = ComponentType(cls, origin)
        table = self._types[kind]
        for name in entry.names():
            existing = table.get(name)
            if existing is not None and existing.cls is not cls:
                log.warning("%s type name %r of %s (%s) is already taken by %s (%s); keeping the first",
                            kind, name, entry.python_path, origin, existing.python_path, existing.origin)
                continue
            table[name] = entry

    def _scan_package(self, package_name: str) -> None:
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
            self._scan_module(importlib.import_module(info.name), package_name)

    def _scan_module(self, module: ModuleType, origin: str) -> None:
        for _, member in inspect.getmembers(module, inspect.isclass):
            if member.__module__ == module.__name__ and _is_component(member):
                self.register(member, origin)

    def _scan_entry_points(self) -> None:
        for group in (PROCESSOR_GROUP, SERVICE_GROUP):
            for point in entry_points(group=group):
                origin = f"entry point {point.name} ({point.value})"
                try:
                    loaded = point.load()
                except Exception:
                    log.exception("could not load %s from group %s", origin, group)
                    continue
                if isinstance(loaded, ModuleType):
                    self._scan_module(loaded, origin)
                elif inspect.isclass(loaded) and _is_component(loaded):
                    self.register(loaded, origin)
                else:
                    log.warning("%s is neither a component class nor a module; ignored", origin)

    def _find(self, kind: str, name: str) -> ComponentType:
        entry = self._types[kind].get(name)
        if entry is None:
            raise UnknownComponentTypeError(kind, name)
        return entry

    def _unique(self, kind: str) -> list[ComponentType]:
        seen: dict[type, ComponentType] = {}
        for entry in self._types[kind].values():
            seen.setdefault(entry.cls, entry)
        return sorted(seen.values(), key=lambda entry: entry.type_name)


def _is_component(cls: type) -> bool:
    return (issubclass(cls, (Processor, ControllerService)) and cls not in (Processor, ControllerService)
            and not cls.__dict__.get("abstract", False))


_default: ComponentRegistry | None = None
_default_lock = threading.Lock()


def default_registry() -> ComponentRegistry:
    """The registry of the built-in types and installed entry points (built once per process)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = ComponentRegistry()
        return _default
