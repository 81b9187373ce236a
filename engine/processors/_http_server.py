"""The HTTP(S) server of the listening processors (ListenHTTP, HandleHttpRequest).

A ``Listener`` binds one port and serves each connection in a bounded pool of threads; every
request goes to its receiver's ``handle(handler, health_only)``, which answers it through the
``BaseHTTPRequestHandler`` it is given (``respond`` for short answers).
"""

from __future__ import annotations

import email.parser
import email.policy
import http.server
import socket
import socketserver
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from cryptography import x509

CONNECTION_TIMEOUT = 30.0
#: How long a stopping server lets requests in progress finish before cutting their connections.
STOP_GRACE = 10.0


class Receiver(Protocol):
    """What a listener hands its requests to."""

    def handle(self, handler: Handler, health_only: bool) -> None: ...


def verify_mode(policy: str | None, context: ssl.SSLContext) -> ssl.VerifyMode:
    """The certificate check of a server context under a client-authentication policy (NiFi's
    ``REQUIRED``/``WANT``/``NONE``/``AUTO``, where AUTO requires one when there is a truststore)."""
    if policy == "REQUIRED":
        return ssl.CERT_REQUIRED
    if policy == "WANT":
        return ssl.CERT_OPTIONAL
    if policy == "AUTO" and context.cert_store_stats().get("x509", 0) > 0:
        return ssl.CERT_REQUIRED
    return ssl.CERT_NONE


class ClientError(Exception):
    """A request answered with ``status`` (the connection is closed: its body may be unread)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def peer_certificate(connection) -> x509.Certificate | None:
    """The client certificate of a TLS connection, or None."""
    getpeercert = getattr(connection, "getpeercert", None)
    der = getpeercert(binary_form=True) if getpeercert is not None else None
    return x509.load_der_x509_certificate(der) if der else None


def dn(name: x509.Name) -> str:
    """A DN written most specific first with ', ' between elements ('CN=a, O=b, C=US')."""
    return ", ".join(rdn.rfc4514_string() for rdn in reversed(name.rdns))


def respond(handler: Handler, status: int, body: bytes = b"", *, close: bool = False,
            headers: dict[str, str] | None = None) -> None:
    """Answer with a short plain-text ``body``."""
    handler.send_response(status)
    handler.send_header("Content-Type", "text/plain")
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    if status >= 200 and status not in (204, 304):
        handler.send_header("Content-Length", str(len(body) if handler.command != "HEAD" else 0))
    if close:
        handler.send_header("Connection", "close")
        handler.close_connection = True
    handler.end_headers()
    if body and handler.command != "HEAD" and status >= 200 and status not in (204, 304):
        handler.wfile.write(body)


def request_body(handler: Handler, throttle=None) -> RequestBody:
    """The body of the handler's request, as its Content-Length or chunked encoding delimits it."""
    headers = handler.headers
    chunked = "chunked" in headers.get("Transfer-Encoding", "").lower()
    length = headers.get("Content-Length")
    if not chunked and length is not None:
        try:
            size = int(length)
        except ValueError:
            raise ClientError(400, f"Bad Request: Content-Length {length!r}") from None
        if size < 0:
            raise ClientError(400, f"Bad Request: Content-Length {length!r}")
    else:
        size = None if chunked else 0
    return RequestBody(handler.rfile, size, throttle)


class RequestBody:
    """The body of a request, read from the connection: ``size`` bytes, or chunked (None).
    ``throttle`` (optional) has ``chunk`` (the most to read at once) and ``consume(count)``."""

    def __init__(self, rfile, size: int | None, throttle=None) -> None:
        self._rfile = rfile
        self._remaining = size  # in the body, or in the current chunk when chunked
        self._chunked = size is None
        self._done = size == 0
        self._throttle = throttle

    def read(self, size: int = -1) -> bytes:
        if self._done:
            return b""
        if self._chunked and self._remaining in (None, 0):
            self._next_chunk()
            if self._done:
                return b""
        wanted = self._remaining if size is None or size < 0 else min(size, self._remaining)
        if self._throttle is not None:
            wanted = min(wanted, self._throttle.chunk)
        data = self._rfile.read(wanted)
        if len(data) < wanted:
            raise ConnectionError("the client closed the connection before sending the whole body")
        self._remaining -= len(data)
        if self._remaining == 0 and not self._chunked:
            self._done = True
        if self._throttle is not None:
            self._throttle.consume(len(data))
        return data

    def _next_chunk(self) -> None:
        # After a chunk's data comes its CRLF (not before the first chunk, where _remaining is None).
        if self._remaining == 0 and self._rfile.readline(1024) not in (b"\r\n", b"\n"):
            raise ClientError(400, "Bad Request: malformed chunked body")
        line = self._rfile.readline(1024)
        if not line:
            raise ConnectionError("the client closed the connection in the middle of a chunked body")
        try:
            self._remaining = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise ClientError(400, "Bad Request: malformed chunk size") from None
        if self._remaining == 0:
            while self._rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            self._done = True


def multipart_parts(body, content_type: str, max_size: int) -> list[tuple[bytes, dict[str, str]]]:
    """The parts of a multipart/form-data body (held in memory, at most ``max_size`` bytes, else
    413): each part's content and its ``http.multipart.*`` and ``http.headers.multipart.*``
    attributes, as NiFi's listening processors write them."""
    data = body.read(max_size + 1)
    if len(data) > max_size:
        raise ClientError(413, f"Payload Too Large: multipart requests are limited to {max_size} bytes")
    if body.read(1):
        raise ClientError(413, "Payload Too Large")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + data)
    if not message.is_multipart():
        raise ClientError(400, "Bad Request: the multipart/form-data body could not be parsed")
    parts = list(message.iter_parts())
    made = []
    for number, part in enumerate(parts, 1):
        payload = part.get_payload(decode=True) or b""
        attributes = {f"http.headers.multipart.{name}": str(value) for name, value in part.items()}
        attributes["http.multipart.size"] = str(len(payload))
        if part.get("Content-Type") is not None:
            attributes["http.multipart.content.type"] = str(part.get("Content-Type"))
        name = part.get_param("name", header="Content-Disposition")
        if name is not None:
            attributes["http.multipart.name"] = str(name)
        filename = part.get_filename()
        if filename is not None:
            attributes["http.multipart.filename"] = filename
        attributes["http.multipart.fragments.sequence.number"] = str(number)
        attributes["http.multipart.fragments.total.number"] = str(len(parts))
        made.append((payload, attributes))
    return made


class Handler(http.server.BaseHTTPRequestHandler):
    """Hands every request, whatever its method, to the listener's receiver."""

    protocol_version = "HTTP/1.1"
    timeout = CONNECTION_TIMEOUT
    server: _Server

    def version_string(self) -> str:
        return f"Flowsite-{self.server.listener.name}"

    def handle_one_request(self) -> None:
        listener = self.server.listener
        listener.set_busy(self.connection, False)
        super().handle_one_request()
        if listener.closed:
            self.close_connection = True

    def parse_request(self) -> bool:
        listener = self.server.listener
        listener.set_busy(self.connection, True)
        if not super().parse_request():
            return False
        limit = listener.header_limit
        head = len(self.requestline) + 2 + sum(len(name) + len(value) + 4 for name, value in self.headers.items())
        if limit is not None and head > limit:
            respond(self, 431, f"Request Header Fields Too Large: the limit is {limit} bytes".encode(), close=True)
            return False
        return True

    def _dispatch(self) -> None:
        self.server.listener.receiver.handle(self, self.server.listener.health_only)

    def __getattr__(self, name: str):
        # BaseHTTPRequestHandler looks up do_<METHOD>: every method reaches the receiver, which decides.
        if name.startswith("do_"):
            return self._dispatch
        raise AttributeError(name)

    def log_message(self, format, *args) -> None:
        pass


class _Server(http.server.HTTPServer):
    allow_reuse_address = True

    def __init__(self, listener: Listener, host: str, port: int) -> None:
        self.listener = listener
        super().__init__((host, port), Handler)

    def server_bind(self) -> None:
        # HTTPServer would look its host name up (a DNS query that may hang); it is not needed.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def process_request(self, request, client_address) -> None:
        self.listener.submit(request, client_address)

    def handle_error(self, request, client_address) -> None:
        pass  # a client that went away, a failed TLS handshake: nothing the flow must hear about


class Listener:
    """One listening port: an accepting thread and a bounded pool of request threads.

    ``host`` is the address bound ("0.0.0.0": every interface); ``header_limit`` the largest
    request head accepted (larger ones are answered 431); ``stop_grace`` how long ``wait``
    lets requests in progress finish."""

    def __init__(self, port: int, receiver: Receiver, ssl_context: ssl.SSLContext | None, threads: int, *,
                 health_only: bool = False, host: str = "0.0.0.0", name: str = "HTTP",
                 header_limit: int | None = None, stop_grace: float = STOP_GRACE) -> None:
        self.receiver = receiver
        self.health_only = health_only
        self.name = name
        self.header_limit = header_limit
        self.closed = False
        self._stop_grace = stop_grace
        self._ssl_context = ssl_context
        self._connections: dict[socket.socket, bool] = {}
        self._lock = threading.Lock()
        self._server = _Server(self, host, port)
        self.port = self._server.server_address[1]
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"{name}-{self.port}")
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name=f"{name}-{self.port}-accept", daemon=True)
        self._thread.start()

    def submit(self, request: socket.socket, client_address) -> None:
        try:
            self._executor.submit(self._serve, request, client_address)
        except RuntimeError:  # closing: the executor takes no more work
            self._server.shutdown_request(request)

    def _serve(self, request: socket.socket, client_address) -> None:
        connection = request
        try:
            with self._lock:
                if self.closed:
                    return
                self._connections[request] = True
            if self._ssl_context is not None:
                request.settimeout(CONNECTION_TIMEOUT)
                connection = self._ssl_context.wrap_socket(request, server_side=True)
                with self._lock:
                    self._connections.pop(request, None)
                    if self.closed:
                        return
                    self._connections[connection] = False
            self._server.finish_request(connection, client_address)
        except (OSError, ssl.SSLError):
            pass  # the client went away or failed the TLS handshake
        finally:
            with self._lock:
                self._connections.pop(request, None)
                self._connections.pop(connection, None)
            self._server.shutdown_request(connection)

    def set_busy(self, connection: socket.socket, busy: bool) -> None:
        with self._lock:
            if connection in self._connections:
                self._connections[connection] = busy

    def close(self) -> None:
        """Stop accepting and free the port; idle kept-alive connections are closed, requests in
        progress finish."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            idle = [connection for connection, busy in self._connections.items() if not busy]
        self._server.shutdown()
        self._server.server_close()
        _cut(idle)

    def wait(self) -> None:
        """Wait for the requests in progress to end; after the grace period their connections are
        cut (their sessions roll back: nothing was acknowledged)."""
        deadline = time.monotonic() + self._stop_grace
        while time.monotonic() < deadline:
            with self._lock:
                if not self._connections:
                    break
            time.sleep(0.05)
        with self._lock:
            remaining = list(self._connections)
        _cut(remaining)
        self._executor.shutdown(wait=True)
        self._thread.join(timeout=5)


def _cut(connections) -> None:
    for connection in connections:
        try:
            connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
