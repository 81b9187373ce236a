"""What ``runnode`` adds to a node's confinement: the platform's addresses and directories.

Platform addresses: the Redis of ``REDIS_URL`` and every ``host:port`` of the comma-separated
``FLOWSITE_PLATFORM_ADDRESSES`` (the web tier, PostgreSQL, other nodes' ports). Protected
directories: the project's ``.local`` (secrets, databases, node data), the analytics directory
(every tenant's provenance, exported) and, when the node's data directory sits beside other
nodes' data directories, their parent; in all, the files root and what lies under it stay open,
so a tenant root placed there still works.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from engine.lock import LOCK_FILE
from engine.node import FLOW_FILE

__all__ = ["platform_addresses", "protected_paths"]


def platform_addresses(redis_url: str, environ: dict[str, str] | os._Environ = os.environ) -> list[str]:
    """``host:port`` of the platform's services this node must refuse to every component."""
    addresses = []
    parts = urlsplit(redis_url)
    if parts.hostname:
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        addresses.append(f"{host}:{parts.port or 6379}")
    addresses += [item.strip() for item in environ.get("FLOWSITE_PLATFORM_ADDRESSES", "").split(",") if item.strip()]
    return addresses


def protected_paths(project_dir: Path, data_dir: Path, files_root: Path | None,
                    analytics_dir: Path | None = None) -> list[str]:
    """The platform's directories this node must refuse to every component (see the module docstring)."""
    keep = files_root.resolve() if files_root is not None else None
    paths = _around(project_dir.resolve() / ".local", keep)
    if analytics_dir is not None:
        paths += _around(analytics_dir.resolve(), keep)
    parent = data_dir.resolve().parent
    siblings = [child for child in parent.iterdir() if child.is_dir() and child != data_dir.resolve()
                and ((child / FLOW_FILE).exists() or (child / LOCK_FILE).exists())] if parent.is_dir() else []
    if siblings:
        paths += _around(parent, keep)
    return list(dict.fromkeys(paths))


def _around(directory: Path, keep: Path | None) -> list[str]:
    """``directory`` or, when ``keep`` lies inside it, every entry of it but the way to ``keep``."""
    if keep is None or not keep.is_relative_to(directory):
        return [str(directory)]
    if keep == directory or not directory.is_dir():
        return []
    paths = []
    for child in directory.iterdir():
        paths += _around(child, keep)
    return paths
