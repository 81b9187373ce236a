"""WhiteNoise's static files, served by a middleware that also runs in Django's async mode.

Under daphne Django runs its middleware in async mode, and a middleware that can only run
synchronously (WhiteNoise's own) splits the chain: the outer part runs in a thread that hands
the rest back to the event loop and waits for it. When daphne stops, it cancels the request and
stops its loop; a request caught between the two left its thread waiting for a loop that would
never run again, and the process never exited. Every middleware of ``MIDDLEWARE`` is therefore a
``MiddlewareMixin`` (or async-capable otherwise): in async mode it only ever goes from the loop to
a thread, never back.
"""

from __future__ import annotations

from django.utils.deprecation import MiddlewareMixin
from whitenoise.middleware import WhiteNoiseMiddleware

__all__ = ["StaticFilesMiddleware"]


class StaticFilesMiddleware(MiddlewareMixin):
    """Answers requests for static files with WhiteNoise; passes every other request on."""

    def __init__(self, get_response) -> None:
        super().__init__(get_response)
        self.whitenoise = WhiteNoiseMiddleware(get_response)

    def process_request(self, request):
        files = self.whitenoise
        static_file = files.find_file(request.path_info) if files.autorefresh else files.files.get(request.path_info)
        return files.serve(static_file, request) if static_file is not None else None
