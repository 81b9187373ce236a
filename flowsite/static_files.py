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
        # WhiteNoise's own lookup and answer; "the rest of the chain" it would call is None, so
        # a request for anything else comes back None and goes on down the chain from here.
        self.whitenoise = WhiteNoiseMiddleware(_pass_on)

    def process_request(self, request):
        return self.whitenoise(request)


def _pass_on(request) -> None:
    return None
