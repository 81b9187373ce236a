"""Read-only descriptors of content files kept open for small reads."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from engine.flowfile import ResourceClaim

__all__ = ["ReadHandles"]


class _Handle:
    """An open read-only descriptor of a content file and how many readers use it."""

    __slots__ = ("fd", "path", "users", "retired")

    def __init__(self, fd: int, path: str) -> None:
        self.fd = fd
        self.path = path
        self.users = 0
        self.retired = False


class ReadHandles:
    """Read-only descriptors of recently read files, kept open (least recently used go first).

    A descriptor is closed only once no reader uses it, so eviction and release never pull a
    file from under a ``pread``.
    """

    def __init__(self, capacity: int = 256) -> None:
        self._capacity = capacity
        self._lock = threading.Lock()
        self._open: OrderedDict[ResourceClaim, _Handle] = OrderedDict()

    def acquire(self, claim: ResourceClaim) -> _Handle | None:
        """The cached handle of ``claim``'s file, marked in use; None when not cached."""
        with self._lock:
            handle = self._open.get(claim)
            if handle is not None:
                self._open.move_to_end(claim)
                handle.users += 1
            return handle

    def adopt(self, claim: ResourceClaim, fd: int, path: str) -> _Handle:
        """Cache a descriptor just opened; returns the handle to use, marked in use."""
        with self._lock:
            handle = self._open.get(claim)
            if handle is not None:
                os.close(fd)
            else:
                handle = self._open[claim] = _Handle(fd, path)
                while len(self._open) > self._capacity:
                    self._retire(self._open.popitem(last=False)[1])
            handle.users += 1
            return handle

    def release(self, handle: _Handle) -> None:
        """The caller is done with ``handle``."""
        with self._lock:
            handle.users -= 1
            if handle.retired and handle.users == 0:
                os.close(handle.fd)

    def forget(self, claim: ResourceClaim) -> None:
        """Stop caching ``claim``'s file (it is being archived or deleted)."""
        with self._lock:
            handle = self._open.pop(claim, None)
            if handle is not None:
                self._retire(handle)

    @staticmethod
    def _retire(handle: _Handle) -> None:
        handle.retired = True
        if handle.users == 0:
            os.close(handle.fd)

    def close(self) -> None:
        """Close every cached descriptor no reader uses (the others close on release)."""
        with self._lock:
            for handle in self._open.values():
                self._retire(handle)
            self._open.clear()
