"""Middleware that runs in whichever mode Django's chain around it runs, sync or async.

Under daphne Django runs its middleware in async mode, and a middleware that can only run
synchronously splits the chain: the outer part runs in a thread that hands the rest back to the
event loop and waits for it. When daphne stops, it cancels the request and stops its loop; a
request caught between the two then left its thread waiting for a loop that would never run
again, and the process never exited (SIGTERM had to be followed by SIGKILL). With every
middleware able to run async, a request leaves the loop only for its view.
"""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction, markcoroutinefunction

__all__ = ["BothModesMiddleware"]


class BothModesMiddleware:
    """Calls ``handle(request)`` in a sync chain and ``ahandle(request)`` in an async one; a
    subclass calls ``choose_mode(get_response)`` when it is made."""

    sync_capable = True
    async_capable = True
    async_mode = False

    def choose_mode(self, get_response) -> None:
        """Run async when what follows in the chain (``get_response``) does."""
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request):
        return self.ahandle(request) if self.async_mode else self.handle(request)
