"""Paths as confinement sees them: resolved for real, and compared with roots."""

from __future__ import annotations

import os

__all__ = ["ALWAYS_REFUSED", "fd_path", "real_path", "within"]

#: Never reachable by any component, whatever is configured.
ALWAYS_REFUSED = ("/proc", "/sys", "/dev")


def real_path(path: str | os.PathLike) -> str:
    """``path`` made absolute (from the current directory) with ``..`` and every symbolic link
    resolved (a missing tail is kept as written)."""
    return os.path.realpath(os.path.abspath(os.fspath(path)))


def within(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or below it (both already resolved)."""
    root = root.rstrip("/")
    return path == root or path.startswith(root + "/") or not root


def fd_path(fd: int) -> str | None:
    """The real path of an open file descriptor (Linux), or None where it cannot be told."""
    try:
        path = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return path[:-len(" (deleted)")] if path.endswith(" (deleted)") else path
