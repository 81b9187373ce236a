"""How a session refuses work once its task was terminated, without ever blocking terminate."""

from __future__ import annotations

import functools

__all__ = ["TaskTerminatedError", "guarded"]


class TaskTerminatedError(Exception):
    """The session's task was terminated by an operator: its work was discarded."""


def guarded(method):
    """Run a public session method under the session lock, refusing once terminated.

    ``terminate`` only sets a flag when a call holds the lock (a processor stuck in a write
    callback); the outermost guarded call settles the termination (rolls the session back)
    as it leaves, and raises ``TaskTerminatedError`` instead of returning.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        # Explicit acquire and release rather than ``with``: this runs several times per
        # FlowFile, and the context-manager protocol costs more than the call it guards.
        lock = self._lock
        lock.acquire()
        if self._terminated:
            lock.release()
            self._settle_termination()
            raise self._terminated_error()
        self._depth += 1
        try:
            result = method(self, *args, **kwargs)
        except BaseException as error:
            self._depth -= 1
            lock.release()
            if not self._terminated:
                raise
            self._settle_termination()
            if isinstance(error, TaskTerminatedError):
                raise
            raise self._terminated_error() from error
        self._depth -= 1
        lock.release()
        # Checked after the lock is released: a terminate that found the lock held had set the
        # flag before trying it, so one of the two always sees the other.
        if self._terminated:
            self._settle_termination()
            raise self._terminated_error()
        return result

    return wrapper
