"""StandardHttpContextMap: where HandleHttpRequest leaves requests for HandleHttpResponse to answer."""

from __future__ import annotations

import logging
import threading
import time

from engine.components import ControllerService, PropertyDescriptor
from engine.components import validators as v
from engine.services.apis import HttpContextMap, HttpExchange

__all__ = ["StandardHttpContextMap"]

log = logging.getLogger(__name__)

MAX_OUTSTANDING_REQUESTS = PropertyDescriptor(
    "Maximum Outstanding Requests", description="How many requests may wait for their answer at once; a request "
    "beyond that is answered 503 Service Unavailable at once.", required=True, default="5000",
    validators=[v.POSITIVE_INTEGER])
REQUEST_EXPIRATION = PropertyDescriptor(
    "Request Expiration", description="How long a request may wait for its answer; then it is forgotten and "
    "answered 503 Service Unavailable.", required=True, default="1 min", validators=[v.TIME_PERIOD])

#: The longest pause between two sweeps for expired requests.
_MAX_SWEEP_INTERVAL = 5.0


class StandardHttpContextMap(ControllerService):
    """Holds the HTTP requests HandleHttpRequest received until HandleHttpResponse answers them,
    so that the processors between them can work on the request's FlowFile.

    At most Maximum Outstanding Requests wait at once; HandleHttpRequest answers any further one
    503 Service Unavailable. A request nobody answers within Request Expiration is answered 503
    Service Unavailable ("Timeout occurred") and forgotten: a HandleHttpResponse that comes later
    routes its FlowFile to failure. The requests live in the node's memory only: a restart of the
    node (or disabling the service) answers those still waiting 503 and forgets them.
    """

    nifi_type = "org.apache.nifi.http.StandardHttpContextMap"
    tags = ("http", "request", "response")
    properties = (MAX_OUTSTANDING_REQUESTS, REQUEST_EXPIRATION)
    provides = (HttpContextMap,)
    see_also = ("HandleHttpRequest", "HandleHttpResponse")

    def __init__(self) -> None:
        self._entries: dict[str, tuple[HttpExchange, float]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None
        self._max_size = 5000
        self._expiration = 60.0

    def on_enabled(self, context, init) -> None:
        self._max_size = context.property(MAX_OUTSTANDING_REQUESTS).as_int()
        self._expiration = context.property(REQUEST_EXPIRATION).as_duration()
        self._stop.clear()
        interval = max(0.01, min(self._expiration / 2, _MAX_SWEEP_INTERVAL))
        self._sweeper = threading.Thread(target=self._sweep_loop, args=(interval,),
                                         name=f"StandardHttpContextMap-{init.identifier}", daemon=True)
        self._sweeper.start()

    def on_disabled(self) -> None:
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout=10)
            self._sweeper = None
        with self._lock:
            waiting = list(self._entries.values())
            self._entries.clear()
        for exchange, _ in waiting:
            exchange.refuse(503, "Service Unavailable: the HTTP context map was disabled")

    # -- HttpContextMap -------------------------------------------------------------------

    @property
    def request_timeout(self) -> float:
        return self._expiration

    def register(self, identifier: str, exchange: HttpExchange) -> bool:
        with self._lock:
            if len(self._entries) >= self._max_size:
                return False
            if identifier in self._entries:
                raise ValueError(f"an HTTP request is already registered with identifier {identifier}")
            self._entries[identifier] = (exchange, time.monotonic())
        return True

    def get_response(self, identifier: str) -> HttpExchange | None:
        with self._lock:
            entry = self._entries.get(identifier)
        return entry[0] if entry is not None else None

    def complete(self, identifier: str) -> None:
        with self._lock:
            entry = self._entries.pop(identifier, None)
        if entry is None:
            raise KeyError(f"no HTTP request is registered with identifier {identifier}")
        entry[0].finish()

    # -- expiration -----------------------------------------------------------------------

    def _sweep_loop(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self._expire(time.monotonic())

    def _expire(self, now: float) -> None:
        """Answer 503 to the requests registered before ``now`` minus the expiration, and forget them."""
        threshold = now - self._expiration
        with self._lock:
            expired = [(identifier, exchange) for identifier, (exchange, added) in self._entries.items()
                       if added < threshold]
            for identifier, _ in expired:
                del self._entries[identifier]
        for identifier, exchange in expired:
            if exchange.refuse(503, "Service Unavailable: Timeout occurred"):
                log.warning("HTTP request %s was not answered within %s s; responded 503 Service Unavailable",
                            identifier, self._expiration)
