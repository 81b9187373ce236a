"""ListenHTTP: an HTTP(S) server whose POST requests become FlowFiles."""

from __future__ import annotations

import gzip
import re
import ssl
import struct
import threading
import time
import zlib
from urllib.parse import urlsplit

from engine.components import (
    AllowableValue,
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.processors._http_server import (
    ClientError,
    Handler,
    Listener,
    dn,
    multipart_parts,
    peer_certificate,
    request_body,
    respond,
    verify_mode,
)
from engine.services.apis import SSLContextProvider

_BASE_PATH_SHAPE = re.compile(r"[^/]+.*[^/]+|[^/]+|")


def _base_path(value: str, context) -> str | None:
    if not _BASE_PATH_SHAPE.fullmatch(value):
        return "must not start or end with '/'"
    if any(char.isspace() for char in value) or "?" in value or "#" in value:
        return "must be a URL path (no spaces, '?' or '#')"
    return None


BASE_PATH = PropertyDescriptor(
    "Base Path", description="The path requests are posted to (without leading or trailing '/'): "
    "http://host:port/<Base Path>.", required=True, default="contentListener", validators=[_base_path],
    expression_language=ExpressionScope.ENVIRONMENT)
PORT = PropertyDescriptor(
    "Listening Port", description="The port to listen on (every interface).", required=True, validators=[v.PORT],
    expression_language=ExpressionScope.ENVIRONMENT)
HEALTH_CHECK_PORT = PropertyDescriptor(
    "health-check-port", display_name="Listening Port for Health Check Requests", description="A second port "
    "serving only GET and HEAD on /<Base Path>/healthcheck, for load balancers that cannot present a client "
    "certificate: with TLS it never asks for one.", validators=[v.PORT],
    expression_language=ExpressionScope.ENVIRONMENT)
MAX_DATA_RATE = PropertyDescriptor(
    "Max Data to Receive per Second", description="Throttle the bodies of all requests together to this rate "
    "(not throttled when unset).", validators=[v.DATA_SIZE])
SSL_CONTEXT_SERVICE = PropertyDescriptor(
    "SSL Context Service", description="Serve HTTPS with this service's keystore (and verify client certificates "
    "against its truststore).", service=SSLContextProvider)
HTTP_PROTOCOLS = PropertyDescriptor(
    "HTTP Protocols", description="The protocols offered through TLS negotiation: only HTTP/1.1 is available.",
    required=True, default="HTTP_1_1", allowed_values=[AllowableValue("HTTP_1_1", "http/1.1", "HTTP/1.1")],
    depends_on=[PropertyDependency("SSL Context Service")])
CLIENT_AUTHENTICATION = PropertyDescriptor(
    "client-authentication", display_name="Client Authentication", description="Whether TLS clients must present "
    "a certificate.", default="AUTO", depends_on=[PropertyDependency("SSL Context Service")], allowed_values=[
        AllowableValue("AUTO", "AUTO", "REQUIRED when the SSL Context Service has a truststore, otherwise NONE"),
        AllowableValue("WANT", "WANT", "A certificate is asked for; clients without one are accepted"),
        AllowableValue("REQUIRED", "REQUIRED", "Clients without a trusted certificate are refused"),
        AllowableValue("NONE", "NONE", "No certificate is asked for")])
AUTHORIZED_DN_PATTERN = PropertyDescriptor(
    "Authorized DN Pattern", display_name="Authorized Subject DN Pattern", description="Requests whose client "
    "certificate's subject DN (as 'CN=name, O=org, C=US') does not match this regular expression are answered "
    "403 Forbidden.", required=True, default=".*", validators=[v.REGEX])
AUTHORIZED_ISSUER_DN_PATTERN = PropertyDescriptor(
    "authorized-issuer-dn-pattern", display_name="Authorized Issuer DN Pattern", description="Likewise for the "
    "client certificate's issuer DN.", default=".*", validators=[v.REGEX])
MAX_UNCONFIRMED_TIME = PropertyDescriptor(
    "Max Unconfirmed Flowfile Time", description="Accepted for compatibility: FlowFiles are committed before "
    "the answer, so none waits for a confirmation.", required=True, default="60 secs", validators=[v.TIME_PERIOD])
HEADERS_AS_ATTRIBUTES = PropertyDescriptor(
    "HTTP Headers to receive as Attributes (Regex)", description="Request headers whose names match this regular "
    "expression become attributes.", validators=[v.REGEX])
REQUEST_HEADER_MAX_SIZE = PropertyDescriptor(
    "Request Header Maximum Size", description="The largest request line and headers accepted together; a "
    "request with more is answered 431 Request Header Fields Too Large.", required=True, default="8 KB",
    validators=[v.DATA_SIZE])
RETURN_CODE = PropertyDescriptor(
    "Return Code", description="The status answered once the request's FlowFiles are committed.", default="200",
    validators=[v.integer_range(200, 599)])
MULTIPART_MAX_SIZE = PropertyDescriptor(
    "multipart-request-max-size", display_name="Multipart Request Max Size", description="The largest "
    "multipart/form-data request accepted (larger ones are answered 413); such requests are held in memory.",
    required=True, default="1 MB", validators=[v.DATA_SIZE])
MULTIPART_BUFFER_SIZE = PropertyDescriptor(
    "multipart-read-buffer-size", display_name="Multipart Read Buffer Size", description="Accepted for "
    "compatibility: multipart requests are held in memory, up to Multipart Request Max Size.", required=True,
    default="512 KB", validators=[v.DATA_SIZE])
MAX_THREADS = PropertyDescriptor(
    "max-thread-pool-size", display_name="Maximum Thread Pool Size", description="How many requests (or open "
    "connections) are served at once.", required=True, default="200", validators=[v.integer_range(8, 1000)])

SUCCESS = Relationship("success", "FlowFiles made from received requests")

REMOTE_HOST = "restlistener.remote.source.host"
REQUEST_URI = "restlistener.request.uri"
REMOTE_USER_DN = "restlistener.remote.user.dn"
REMOTE_ISSUER_DN = "restlistener.remote.issuer.dn"
_NO_CERTIFICATE = "none"
_FLOWFILE_V3 = "application/flowfile-v3"
_V3_MAGIC = b"NiFiFF3"
_CHUNK = 64 * 1024
#: How long a stopping server lets requests in progress finish before cutting their connections.
_STOP_GRACE = 10.0


class ListenHTTP(Processor):
    """Runs an HTTP (or HTTPS) server while the processor runs; each POST to
    ``/<Base Path>`` becomes a FlowFile holding the request body, routed to success.

    The body is streamed into the content repository (gzip bodies, sent with ``Content-Encoding:
    gzip`` or ``flowfile-gzipped: true``, are decompressed on the way). The FlowFile gets the
    ``restlistener.*`` attributes (client address, request path, client certificate subject and
    issuer, 'none' without one), ``filename`` from a ``filename`` header, and the headers matching
    HTTP Headers to receive as Attributes. A multipart/form-data request makes one FlowFile per
    part, with the ``http.multipart.*`` attributes. Each FlowFile gets a RECEIVE provenance event.

    The session is committed before the client gets the Return Code, so an acknowledged request
    is never lost; a request whose FlowFiles could not be committed is answered 500 and leaves
    nothing behind (the client may send it again: delivery is at least once). While the success
    connection is full (back pressure) requests are answered 503 Service Unavailable. With an SSL
    Context Service the server speaks HTTPS and can require client certificates; a certificate
    whose DNs do not match the Authorized patterns is answered 403. GET on
    ``/<Base Path>/healthcheck`` answers 200 OK; HEAD on the base path describes the server;
    other methods are answered 405.

    A body of type application/flowfile-v3 (a FlowFile package, as NiFi's MergeContent and
    PackageFlowFile write it) is unpacked: each packaged FlowFile becomes one FlowFile with its
    attributes, its former uuid recorded as the RECEIVE event's source system identifier. The
    older package formats (application/flowfile-v1 and -v2) are answered 415.

    The server starts when the processor is scheduled and stops (its port freed) when it is
    stopped. Only HTTP/1.1 is served. Record readers and writers and the confirmation ("hold")
    protocol of NiFi's retired PostHTTP are not available.

    The ports are confined (``engine.confinement``): in a tenant's group only the tenant's listen
    ports may be bound; starting on another fails with a bulletin saying why.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.standard.ListenHTTP"
    tags = ("ingest", "http", "https", "rest", "listen")
    properties = (BASE_PATH, PORT, HEALTH_CHECK_PORT, MAX_DATA_RATE, SSL_CONTEXT_SERVICE, HTTP_PROTOCOLS,
                  CLIENT_AUTHENTICATION, AUTHORIZED_DN_PATTERN, AUTHORIZED_ISSUER_DN_PATTERN, MAX_UNCONFIRMED_TIME,
                  HEADERS_AS_ATTRIBUTES, REQUEST_HEADER_MAX_SIZE, RETURN_CODE, MULTIPART_MAX_SIZE, MULTIPART_BUFFER_SIZE,
                  MAX_THREADS)
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.FORBIDDEN
    writes_attributes = (
        WrittenAttribute(REMOTE_HOST, "The client's address"),
        WrittenAttribute(REQUEST_URI, "The path the request was posted to"),
        WrittenAttribute(REMOTE_USER_DN, "The subject DN of the client certificate, or 'none'"),
        WrittenAttribute(REMOTE_ISSUER_DN, "The issuer DN of the client certificate, or 'none'"),
        WrittenAttribute("filename", "The value of the request's filename header, when present"),
        WrittenAttribute("http.multipart.*", "Of a multipart part: name, filename, content.type, size, "
                         "fragments.sequence.number, fragments.total.number, and its headers as "
                         "http.headers.multipart.<name>"),
    )
    see_also = ("InvokeHTTP",)

    def validate(self, context):
        health = context.property(HEALTH_CHECK_PORT).evaluate().value
        if health is not None and health.strip() == (context.property(PORT).evaluate().value or "").strip():
            yield "'Listening Port' and 'Listening Port for Health Check Requests' cannot have the same value"

    def on_scheduled(self, context):
        self._listeners: list[Listener] = []
        receiver = _Receiver(context)
        provider = context.property(SSL_CONTEXT_SERVICE).as_service()
        ssl_context = health_context = None
        if provider is not None:
            ssl_context = provider.create_context(server_side=True)
            ssl_context.verify_mode = verify_mode(context.property(CLIENT_AUTHENTICATION).value, ssl_context)
            health_context = provider.create_context(server_side=True)
        threads = context.property(MAX_THREADS).as_int()
        port = context.property(PORT).evaluate().as_int()
        health_port = context.property(HEALTH_CHECK_PORT).evaluate().as_int()
        for checked in (port, health_port):
            if checked is not None:
                context.confinement.check_listen(checked)
        try:
            self._listeners.append(Listener(port, receiver, ssl_context, threads, name="ListenHTTP",
                                            header_limit=receiver.header_max, stop_grace=_STOP_GRACE))
            if health_port is not None:
                self._listeners.append(Listener(health_port, receiver, health_context, threads, health_only=True,
                                                name="ListenHTTP", header_limit=receiver.header_max,
                                                stop_grace=_STOP_GRACE))
        except BaseException:
            self._stop_listeners()
            raise
        context.logger.info("listening on port %s for POST /%s", port, receiver.base_path)

    def on_trigger(self, context, session):
        # The work happens in the server's threads; nothing to do but let them be.
        context.yield_processor()

    def on_unscheduled(self, context):
        for listener in getattr(self, "_listeners", ()):
            listener.close()

    def on_stopped(self, context):
        self._stop_listeners()

    def _stop_listeners(self) -> None:
        for listener in getattr(self, "_listeners", ()):
            listener.close()
            listener.wait()
        self._listeners = []


class _Receiver:
    """What the request threads share: the configuration, and how one request becomes FlowFiles."""

    def __init__(self, context) -> None:
        self.context = context
        self.base_path = (context.property(BASE_PATH).evaluate().value or "").strip()
        self.path = "/" + self.base_path
        self.health_path = self.path.rstrip("/") + "/healthcheck"
        self.return_code = context.property(RETURN_CODE).as_int()
        self.subject_pattern = context.property(AUTHORIZED_DN_PATTERN).as_regex()
        issuer = context.property(AUTHORIZED_ISSUER_DN_PATTERN)
        self.issuer_pattern = issuer.as_regex() if issuer.is_set() else None
        headers = context.property(HEADERS_AS_ATTRIBUTES)
        self.header_pattern = headers.as_regex() if headers.is_set() else None
        self.multipart_max = context.property(MULTIPART_MAX_SIZE).as_data_size()
        self.header_max = context.property(REQUEST_HEADER_MAX_SIZE).as_data_size()
        rate = context.property(MAX_DATA_RATE)
        self.throttle = _Throttle(rate.as_data_size()) if rate.is_set() else None

    # -- dispatch -------------------------------------------------------------------------

    def handle(self, handler: Handler, health_only: bool) -> None:
        path = urlsplit(handler.path).path
        method = handler.command
        if path == self.health_path and method in ("GET", "HEAD"):
            respond(handler, 200, b"OK")
        elif health_only or (path != self.path and path != self.health_path):
            respond(handler, 404, b"Not Found", close=True)
        elif path == self.health_path:
            respond(handler, 405, b"Method Not Allowed", close=True, headers={"Allow": "GET, HEAD"})
        elif method == "POST":
            self.post(handler)
        elif method == "HEAD":
            respond(handler, 200, headers={"Accept-Encoding": "gzip", "Accept": f"{_FLOWFILE_V3},*/*;q=0.8",
                                            "x-nifi-transfer-protocol-version": "3"})
        elif method == "CONNECT":
            respond(handler, 400, b"Bad Request", close=True)
        else:
            respond(handler, 405, b"Method Not Allowed", close=True, headers={"Allow": "POST, HEAD"})

    def post(self, handler: Handler) -> None:
        context = self.context
        if not context.available_relationships():
            respond(handler, 503, b"Service Unavailable: the outgoing connection is full", close=True)
            return
        subject, issuer = _certificate_dns(handler.connection)
        if subject != _NO_CERTIFICATE:
            problem = None
            if not self.subject_pattern.fullmatch(subject):
                problem = "not allowed based on subject dn"
            elif self.issuer_pattern is not None and not self.issuer_pattern.fullmatch(issuer):
                problem = "not allowed based on issuer dn"
            if problem is not None:
                context.logger.warning("access forbidden to %s: subject %r, issuer %r", handler.client_address[0],
                                       subject, issuer)
                respond(handler, 403, f"Forbidden: {problem}".encode(), close=True)
                return
        session = context.create_session()
        try:
            body = self._body(handler)
            content_type = handler.headers.get("Content-Type", "")
            media_type = content_type.split(";", 1)[0].strip().lower()
            if "multipart/form-data" in content_type.lower():
                flowfiles = self._multipart(session, handler, body, content_type, subject, issuer)
            elif media_type == _FLOWFILE_V3:
                flowfiles = self._packaged(session, handler, body, subject, issuer)
            elif media_type.startswith("application/flowfile"):
                raise ClientError(415, f"Unsupported Media Type: {media_type} packages cannot be unpacked; "
                                   f"send {_FLOWFILE_V3}")
            else:
                flowfiles = [self._single(session, handler, body, subject, issuer)]
            for flowfile in flowfiles:
                session.transfer(flowfile, SUCCESS)
            session.commit()
        except ClientError as error:
            session.rollback()
            context.logger.warning("refused a request from %s: %s", handler.client_address[0], error)
            respond(handler, error.status, str(error).encode(), close=True)
            return
        except (ConnectionError, TimeoutError) as error:
            session.rollback()
            context.logger.warning("lost the request from %s: %s", handler.client_address[0], error)
            handler.close_connection = True
            return
        except Exception as error:
            session.rollback()
            context.logger.error("could not receive the request from %s: %s: %s", handler.client_address[0],
                                 type(error).__name__, error)
            respond(handler, 500, f"Internal Server Error: {type(error).__name__}".encode(), close=True)
            return
        context.logger.debug("received %d FlowFile(s) from %s", len(flowfiles), handler.client_address[0])
        respond(handler, self.return_code)

    # -- turning requests into FlowFiles ----------------------------------------------------

    def _body(self, handler: Handler):
        headers = handler.headers
        body = request_body(handler, self.throttle)
        gzipped = (headers.get("flowfile-gzipped", "").strip().lower() == "true"
                   or headers.get("Content-Encoding", "").strip().lower() == "gzip")
        return _Gunzip(body) if gzipped else body

    def _single(self, session, handler, body, subject, issuer):
        started = time.monotonic()
        flowfile = session.create()

        def copy(out) -> None:
            while True:
                chunk = body.read(_CHUNK)
                if not chunk:
                    return
                out.write(chunk)

        flowfile = session.write(flowfile, copy)
        attributes = {}
        filename = handler.headers.get("filename")
        if filename and filename.strip():
            attributes["filename"] = filename
        attributes.update(self._request_attributes(handler, subject, issuer))
        flowfile = session.put_all_attributes(flowfile, attributes)
        session.provenance.receive(flowfile, self._transit_uri(handler),
                                   details=f"Remote DN={subject}, Issuer DN={issuer}",
                                   duration=int((time.monotonic() - started) * 1000))
        return flowfile

    def _packaged(self, session, handler, body, subject, issuer):
        """The FlowFiles of a FlowFile-v3 package (attributes and content of each, one after another)."""
        flowfiles = []
        header = _read_exact(body, len(_V3_MAGIC), allow_end=True)
        if header is None:
            raise ClientError(400, "Bad Request: the FlowFile-v3 package is empty")
        while header is not None:
            started = time.monotonic()
            if header != _V3_MAGIC:
                raise ClientError(400, "Bad Request: not in FlowFile-v3 format")
            count = _field_length(body)
            if count == 0:
                raise ClientError(400, "Bad Request: a packaged FlowFile has no attributes")
            attributes = {}
            for _ in range(count):
                key = _read_exact(body, _field_length(body)).decode("utf-8", errors="replace")
                attributes[key] = _read_exact(body, _field_length(body)).decode("utf-8", errors="replace")
            remaining = struct.unpack(">q", _read_exact(body, 8))[0]
            if remaining < 0:
                raise ClientError(400, "Bad Request: a packaged FlowFile has a negative size")

            def copy(out, remaining=remaining) -> None:
                while remaining > 0:
                    chunk = body.read(min(_CHUNK, remaining))
                    if not chunk:
                        raise ClientError(400, "Bad Request: the FlowFile-v3 package ends inside a content")
                    out.write(chunk)
                    remaining -= len(chunk)

            flowfile = session.write(session.create(), copy)
            source_uuid = attributes.pop("uuid", None)
            filename = handler.headers.get("filename")
            if not (attributes.get("filename") or "").strip() and filename and filename.strip():
                attributes["filename"] = filename
            attributes.update(self._request_attributes(handler, subject, issuer))
            flowfile = session.put_all_attributes(flowfile, attributes)
            session.provenance.receive(
                flowfile, self._transit_uri(handler), details=f"Remote DN={subject}, Issuer DN={issuer}",
                source_system_flowfile_id=f"urn:nifi:{source_uuid}" if source_uuid else None,
                duration=int((time.monotonic() - started) * 1000))
            flowfiles.append(flowfile)
            header = _read_exact(body, len(_V3_MAGIC), allow_end=True)
        return flowfiles

    def _multipart(self, session, handler, body, content_type, subject, issuer):
        started = time.monotonic()
        parts = multipart_parts(body, content_type, self.multipart_max)
        request_attributes = self._request_attributes(handler, subject, issuer)
        transit_uri = self._transit_uri(handler)
        flowfiles = []
        for payload, attributes in parts:
            flowfile = session.write_bytes(session.create(), payload)
            flowfile = session.put_all_attributes(flowfile, {**request_attributes, **attributes})
            session.provenance.receive(flowfile, transit_uri, details=f"Remote DN={subject}, Issuer DN={issuer}",
                                       duration=int((time.monotonic() - started) * 1000))
            flowfiles.append(flowfile)
        return flowfiles

    def _request_attributes(self, handler, subject: str, issuer: str) -> dict[str, str]:
        attributes = {}
        if self.header_pattern is not None:
            for name, value in handler.headers.items():
                if self.header_pattern.fullmatch(name):
                    attributes[name] = value
        attributes[REMOTE_HOST] = handler.client_address[0]
        attributes[REQUEST_URI] = urlsplit(handler.path).path
        attributes[REMOTE_USER_DN] = subject
        attributes[REMOTE_ISSUER_DN] = issuer
        return attributes

    @staticmethod
    def _transit_uri(handler) -> str:
        scheme = "https" if isinstance(handler.connection, ssl.SSLSocket) else "http"
        host = handler.headers.get("Host")
        if not host:
            address, port = handler.connection.getsockname()[:2]
            host = f"{address}:{port}"
        return f"{scheme}://{host}{urlsplit(handler.path).path}"


def _read_exact(body, count: int, allow_end: bool = False) -> bytes | None:
    """``count`` bytes of ``body``; None at a clean end when ``allow_end``."""
    data = bytearray()
    while len(data) < count:
        chunk = body.read(count - len(data))
        if not chunk:
            if allow_end and not data:
                return None
            raise ClientError(400, "Bad Request: the FlowFile-v3 package is truncated")
        data += chunk
    return bytes(data)


def _field_length(body) -> int:
    """A FlowFile-v3 length: two bytes, or 0xFFFF then four bytes."""
    short = struct.unpack(">H", _read_exact(body, 2))[0]
    return short if short != 0xFFFF else struct.unpack(">I", _read_exact(body, 4))[0]


def _certificate_dns(connection) -> tuple[str, str]:
    """The client certificate's subject and issuer DNs, or 'none'."""
    certificate = peer_certificate(connection)
    if certificate is None:
        return _NO_CERTIFICATE, _NO_CERTIFICATE
    return dn(certificate.subject), dn(certificate.issuer)


class _Gunzip:
    """A gzip body, decompressed as it is read."""

    def __init__(self, source) -> None:
        self._file = gzip.GzipFile(fileobj=source, mode="rb")

    def read(self, size: int = -1) -> bytes:
        try:
            return self._file.read(size)
        except (ConnectionError, TimeoutError):
            raise
        except (OSError, EOFError, zlib.error) as error:
            raise ClientError(400, f"Bad Request: the gzip body cannot be decompressed: {error}") from error


class _Throttle:
    """Spreads the bytes of every request over time so that together they stay at ``rate`` per second."""

    def __init__(self, rate: int) -> None:
        self._rate = max(1, rate)
        self.chunk = max(1, min(_CHUNK, self._rate // 4))
        self._lock = threading.Lock()
        self._next = time.monotonic()

    def consume(self, count: int) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + count / self._rate
        if start > now:
            time.sleep(start - now)
