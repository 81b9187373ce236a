"""Telling the scheduler that a thread now waits on a disk, so CPU-bound work runs meanwhile.

A scheduler worker running a CPU-bound task holds one of the node's CPU lanes (see
``engine.runtime.scheduler``). Where the storage layer blocks on a sync (a log transaction
written with ``O_DSYNC``, an ``fdatasync`` of content), it wraps the wait in
``waiting_on_io()``: the lane goes to another task for the duration and comes back before the
thread goes on. Threads the scheduler does not run are unaffected. The storage layer knows only
this module, not the scheduler.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable, Iterator

__all__ = ["waiting_on_io", "set_lane_hooks"]

_local = threading.local()


def set_lane_hooks(hooks: tuple[Callable[[], bool], Callable[[], None]] | None) -> None:
    """Install, for the calling thread, ``(release, reacquire)``: ``release()`` gives up the
    thread's lane and says whether it held one; ``reacquire()`` waits to get one back."""
    _local.hooks = hooks


@contextmanager
def waiting_on_io() -> Iterator[None]:
    """Lend the calling thread's CPU lane (if it holds one) while the body waits on I/O."""
    hooks = getattr(_local, "hooks", None)
    if hooks is None or not hooks[0]():
        yield
        return
    try:
        yield
    finally:
        hooks[1]()
