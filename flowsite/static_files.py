"""WhiteNoise's static files, served in Django's async mode too.

Under daphne Django runs its middleware in async mode, and a middleware that can only run
synchronously (WhiteNoise's) splits the chain: the outer part runs in a thread that hands the
rest back to the event loop and waits for it. When daphne stops, it cancels the request and
stops its loop; a request caught between the two then left its thread waiting for a loop that
would never run again, and the process never exited (SIGTERM had to be followed by SIGKILL).
With every middleware able to run async, a request leaves the loop only for its view.
"""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from whitenoise.middleware import WhiteNoiseMiddleware

__all__ = ["StaticFilesMiddleware"]


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """``WhiteNoiseMiddleware`` that runs sync or async, as the rest of the chain does."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response=None, **kwargs) -> None:
        super().__init__(get_response, **kwargs)
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self.async_mode:
            return self._acall(request)
        return super().__call__(request)

    async def _acall(self, request):
        static_file = self.find_file(request.path_info) if self.autorefresh else self.files.get(request.path_info)
        if static_file is None:
            return await self.get_response(request)
        # Opening and stat-ing the file block: off the loop.
        return await sync_to_async(self.serve, thread_sensitive=False)(static_file, request)
