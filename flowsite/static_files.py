"""WhiteNoise's static files, served in Django's async mode too (see ``flowsite.both_modes`` for
why every middleware must be able to run async)."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from whitenoise.middleware import WhiteNoiseMiddleware

from flowsite.both_modes import BothModesMiddleware

__all__ = ["StaticFilesMiddleware"]


class StaticFilesMiddleware(BothModesMiddleware, WhiteNoiseMiddleware):
    """``WhiteNoiseMiddleware`` that runs sync or async, as the rest of the chain does."""

    def __init__(self, get_response=None, **kwargs) -> None:
        WhiteNoiseMiddleware.__init__(self, get_response, **kwargs)
        self.choose_mode(get_response)

    def handle(self, request):
        return WhiteNoiseMiddleware.__call__(self, request)

    async def ahandle(self, request):
        static_file = self.find_file(request.path_info) if self.autorefresh else self.files.get(request.path_info)
        if static_file is None:
            return await self.get_response(request)
        # Opening and stat-ing the file block: off the loop.
        return await sync_to_async(self.serve, thread_sensitive=False)(static_file, request)
