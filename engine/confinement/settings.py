"""The node-wide confinement settings: the ``confinement`` section of a node's settings."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

from engine.settings import settings_from_mapping

__all__ = ["ConfinementSettings", "split_host_port"]


def split_host_port(text: str) -> tuple[str, int | None]:
    """``host``, ``host:port``, ``[v6]:port`` or a bare IPv6 address as (host, port or None)."""
    text = text.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if not rest:
            return host, None
        if not rest.startswith(":"):
            raise ValueError(f"{text!r} is not host:port")
        return host, _port(rest[1:], text)
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        return host, _port(port, text)
    return text, None


def _port(text: str, whole: str) -> int:
    if not text.isdigit() or not 0 < int(text) <= 65535:
        raise ValueError(f"{whole!r}: the port is a number from 1 to 65535")
    return int(text)


@dataclass(frozen=True)
class ConfinementSettings:
    """What the node refuses every component, and where tenants' files live by default.

    ``files_root``: the directory under which a tenant without configured roots gets
    ``<files_root>/<slug>`` (None: such a tenant may touch no file). ``protected_paths``:
    absolute paths no component may read or write (other nodes' data directories, the
    platform's own directories and secrets), besides ``/proc``, ``/sys``, ``/dev`` and the
    node's own data directory, which are always refused. ``platform_addresses``: ``host:port``
    of the platform's own services (Redis, PostgreSQL, web tier, node ports) no component may
    connect to.
    """

    files_root: str | None = None
    protected_paths: tuple[str, ...] = ()
    platform_addresses: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for path in (self.files_root, *self.protected_paths):
            if path is not None and not os.path.isabs(path):
                raise ValueError(f"{path!r} is not an absolute path")
        for address in self.platform_addresses:
            if split_host_port(address)[1] is None:
                raise ValueError(f"platform address {address!r} is not host:port")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> ConfinementSettings:
        """Build from ``{"files_root": "/srv/files", "protected_paths": [...], "platform_addresses": [...]}``."""
        return settings_from_mapping(cls, values, {
            "files_root": lambda value: str(value) if value else None,
            "protected_paths": _texts, "platform_addresses": _texts}, "confinement")

    def adding(self, protected_paths: tuple[str, ...] = (), platform_addresses: tuple[str, ...] = ()
               ) -> ConfinementSettings:
        """These settings with more protected paths and platform addresses (duplicates dropped)."""
        return ConfinementSettings(self.files_root, tuple(dict.fromkeys(self.protected_paths + protected_paths)),
                                   tuple(dict.fromkeys(self.platform_addresses + platform_addresses)))


def _texts(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)):
        raise ValueError("must be a list of texts")
    return tuple(str(item).strip() for item in value if str(item).strip())
