"""MapCacheClientService: a DistributedMapCacheClient talking to a MapCacheServer over TCP."""

from __future__ import annotations

import select
import socket
import ssl
import threading
from typing import Any

from engine.components import ControllerService, PropertyDescriptor
from engine.components import validators as v
from engine.confinement import OPERATOR, Policy
from engine.services.apis import DistributedMapCacheClient, SSLContextProvider
from engine.services.map_cache_protocol import (
    MAGIC,
    VERSIONS,
    CacheServerError,
    read_frame,
    write_frame,
)

__all__ = ["MapCacheClientService"]

HOSTNAME = PropertyDescriptor(
    "Server Hostname", description="The host running the MapCacheServer.", required=True, validators=[v.NON_EMPTY])
PORT = PropertyDescriptor(
    "Server Port", description="The port the MapCacheServer listens on.", required=True, default="4557",
    validators=[v.PORT])
SSL_CONTEXT_SERVICE = PropertyDescriptor(
    "SSL Context Service", description="When set, connections use TLS with the client context this service "
    "builds (the server must use TLS too).", service=SSLContextProvider)
COMMUNICATIONS_TIMEOUT = PropertyDescriptor(
    "Communications Timeout", description="How long to wait to connect, to send a request or for its answer "
    "before the operation fails.", required=True, default="30 secs", validators=[v.TIME_PERIOD])

#: Idle connections kept for reuse; more may be open while many tasks use the cache at once.
_MAX_IDLE = 16
_MAX_RESPONSE = 64 * 1024 * 1024


class MapCacheClientService(ControllerService, DistributedMapCacheClient):
    """Gives processors the key/value cache of a MapCacheServer, on this node or another.

    Connections are opened on demand and kept for reuse. A kept connection that the server
    closed meanwhile (it was restarted, say) is noticed before use and replaced, so the first
    operation after a server restart succeeds. An operation that cannot complete within the
    Communications Timeout, or that finds the server down, raises an ``OSError``; processors
    route the FlowFile to failure.
    """

    nifi_type = "org.apache.nifi.distributed.cache.client.MapCacheClientService"
    aliases = ("org.apache.nifi.distributed.cache.client.DistributedMapCacheClientService",
               "DistributedMapCacheClientService")
    tags = ("distributed", "cache", "state", "map", "cluster")
    properties = (HOSTNAME, PORT, SSL_CONTEXT_SERVICE, COMMUNICATIONS_TIMEOUT)
    provides = (DistributedMapCacheClient,)
    see_also = ("MapCacheServer",)

    def __init__(self) -> None:
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()
        self._address: tuple[str, int] | None = None
        self._timeout = 30.0
        self._tls: ssl.SSLContext | None = None
        self._confinement: Policy = OPERATOR

    def on_enabled(self, context, init) -> None:
        self._confinement = init.confinement
        self._address = (context.property(HOSTNAME).value.strip(), context.property(PORT).as_int())
        self._timeout = context.property(COMMUNICATIONS_TIMEOUT).as_duration()
        provider = context.property(SSL_CONTEXT_SERVICE).as_service()
        self._tls = provider.create_context() if provider is not None else None

    def on_disabled(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
            self._address = None
        for connection in idle:
            connection.close()

    # -- DistributedMapCacheClient ----------------------------------------------------------

    def put_if_absent(self, key: str, value: bytes) -> bool:
        return bool(self._call("put_if_absent", key, value))

    def get_and_put_if_absent(self, key: str, value: bytes) -> bytes | None:
        return self._call("get_and_put_if_absent", key, value)

    def contains_key(self, key: str) -> bool:
        return bool(self._call("contains_key", key))

    def put(self, key: str, value: bytes) -> None:
        self._call("put", key, value)

    def get(self, key: str) -> bytes | None:
        return self._call("get", key)

    def remove(self, key: str) -> bool:
        return bool(self._call("remove", key))

    # -- connections ------------------------------------------------------------------------

    def _call(self, operation: str, key: str, value: bytes | None = None) -> Any:
        connection = self._borrow()
        try:
            result = connection.request(operation, key.encode("utf-8"), None if value is None else bytes(value))
        except BaseException:
            connection.close()
            raise
        self._give_back(connection)
        return result

    def _borrow(self) -> _Connection:
        with self._lock:
            address = self._address
            while self._idle:
                connection = self._idle.pop()
                if connection.usable():
                    return connection
                connection.close()
        if address is None:
            raise ConnectionError("the map cache client service is disabled")
        return _Connection(address, self._timeout, self._tls, self._confinement)

    def _give_back(self, connection: _Connection) -> None:
        with self._lock:
            if self._address == connection.address and len(self._idle) < _MAX_IDLE:
                self._idle.append(connection)
                return
        connection.close()


class _Connection:
    """One handshaken connection to the server."""

    def __init__(self, address: tuple[str, int], timeout: float, tls: ssl.SSLContext | None, policy: Policy) -> None:
        self.address = address
        sock = policy.connect(address[0], address[1], timeout=timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if tls is not None:
                sock = tls.wrap_socket(sock, server_hostname=address[0])
            sock.settimeout(timeout)
            write_frame(sock, [MAGIC, list(VERSIONS)])
            status, detail = self._answer(sock)
            if status != "ok":
                raise CacheServerError(f"the map cache server at {address[0]}:{address[1]} refused the "
                                       f"connection: {detail}")
            self.version = detail
        except BaseException:
            sock.close()
            raise
        self.sock = sock

    def request(self, operation: str, key: bytes, value: bytes | None) -> Any:
        write_frame(self.sock, [operation, key, value])
        status, result = self._answer(self.sock)
        if status != "ok":
            raise CacheServerError(f"the map cache server refused {operation}: {result}")
        return result

    def usable(self) -> bool:
        """False when the server closed the connection (or sent something unasked) while it was idle."""
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def _answer(self, sock: socket.socket) -> tuple[str, Any]:
        response = read_frame(sock, _MAX_RESPONSE)
        if response is None:
            raise ConnectionError("the map cache server closed the connection")
        if not (isinstance(response, list) and len(response) == 2):
            raise ConnectionError(f"malformed answer from the map cache server: {str(response)[:100]!r}")
        return response[0], response[1]
