"""Keeping the cyclic garbage collector out of bulk loads."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

__all__ = ["gc_paused"]


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
