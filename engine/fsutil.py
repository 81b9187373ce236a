"""Small file-system helpers shared by the repositories."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["fsync_directory", "is_all_zero"]


def fsync_directory(path: str | Path) -> None:
    """Make the directory entries of ``path`` (creations, renames, deletions) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def is_all_zero(data: bytes | memoryview) -> bool:
    """True when every byte of ``data`` is NUL (what a power loss leaves past a file's end)."""
    if isinstance(data, memoryview):
        data = data.tobytes()
    return not data or data.count(0) == len(data)
