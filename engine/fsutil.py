"""Small file-system helpers shared by the repositories."""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["fsync_directory", "is_all_zero", "gc_paused", "write_atomically"]


def fsync_directory(path: str | Path) -> None:
    """Make the directory entries of ``path`` (creations, renames, deletions) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves the old file or the new one, whole."""
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    fsync_directory(path.parent)


def is_all_zero(data: bytes | memoryview) -> bool:
    """True when every byte of ``data`` is NUL (what a power loss leaves past a file's end)."""
    if isinstance(data, memoryview):
        data = data.tobytes()
    return not data or data.count(0) == len(data)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Suspend the cyclic garbage collector while loading millions of acyclic objects.

    Decoding a snapshot creates objects far faster than they die, which makes the collector
    rescan the growing heap again and again; the loaded records hold no cycles.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
