"""HandleHttpRequest: an HTTP(S) server whose requests wait, as FlowFiles go through the flow, for
HandleHttpResponse to answer them."""

from __future__ import annotations

import queue
import ssl
import threading
import time
import uuid
from urllib.parse import parse_qsl, urlsplit

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
from engine.processors._http_request_attributes import (
    CONTEXT_ID,
    content_charset,
    request_attributes,
    transit_uri,
)
from engine.processors._http_server import (
    STOP_GRACE,
    ClientError,
    Handler,
    Listener,
    multipart_parts,
    request_body,
    respond,
)
from engine.services.apis import HttpContextMap, HttpExchange, SSLContextProvider

_TRUE_FALSE = ("true", "false")


def _allow(method: str, default: str) -> PropertyDescriptor:
    return PropertyDescriptor(f"Allow {method}", description=f"Whether {method} requests are accepted (else "
                              "answered 405 Method Not Allowed).", required=True, default=default,
                              allowed_values=_TRUE_FALSE)


PORT = PropertyDescriptor(
    "Listening Port", description="The port to listen on.", required=True, default="80", validators=[v.PORT],
    expression_language=ExpressionScope.ENVIRONMENT)
HOSTNAME = PropertyDescriptor(
    "Hostname", description="The address (or host name) to bind to; every interface when unset.",
    validators=[v.NON_EMPTY])
SSL_CONTEXT_SERVICE = PropertyDescriptor(
    "SSL Context Service", description="Serve HTTPS only, with this service's keystore (and its truststore for "
    "client certificates); plain HTTP only without it.", service=SSLContextProvider)
HTTP_PROTOCOLS = PropertyDescriptor(
    "HTTP Protocols", description="The protocols offered through TLS negotiation: only HTTP/1.1 is available.",
    required=True, default="HTTP_1_1", allowed_values=[AllowableValue("HTTP_1_1", "http/1.1", "HTTP/1.1")],
    depends_on=[PropertyDependency("SSL Context Service")])
HTTP_CONTEXT_MAP = PropertyDescriptor(
    "HTTP Context Map", description="The service holding requests until HandleHttpResponse answers them.",
    required=True, service=HttpContextMap)
ALLOWED_PATHS = PropertyDescriptor(
    "Allowed Paths", description="A regular expression the request path must match whole; other paths are "
    "answered 404 Not Found.", validators=[v.REGEX])
URL_CHARACTER_SET = PropertyDescriptor(
    "Default URL Character Set", description="The character set of URL-encoded query strings and form "
    "parameters when the request names none.", required=True, default="UTF-8", validators=[v.CHARACTER_SET])
ALLOW_GET = _allow("GET", "true")
ALLOW_POST = _allow("POST", "true")
ALLOW_PUT = _allow("PUT", "true")
ALLOW_DELETE = _allow("DELETE", "true")
ALLOW_HEAD = _allow("HEAD", "false")
ALLOW_OPTIONS = _allow("OPTIONS", "false")
MAXIMUM_THREADS = PropertyDescriptor(
    "Maximum Threads", description="How many connections the server serves at once.", required=True,
    default="200", validators=[v.integer_range(8, 1000)])
REQUEST_HEADER_MAX_SIZE = PropertyDescriptor(
    "Request Header Maximum Size", description="The largest request head accepted; a larger one is answered "
    "431 Request Header Fields Too Large.", required=True, default="8 KB", validators=[v.DATA_SIZE])
ADDITIONAL_METHODS = PropertyDescriptor(
    "Additional HTTP Methods", description="Other methods accepted, separated by commas (PATCH, PROPFIND, ...).",
    validators=[v.NON_EMPTY])
CLIENT_AUTHENTICATION = PropertyDescriptor(
    "Client Authentication", description="Whether HTTPS clients must present a certificate the SSL Context "
    "Service's truststore trusts (ignored without a truststore).", required=True, default="No Authentication",
    allowed_values=[
        AllowableValue("No Authentication", "No Authentication", "No certificate is asked for"),
        AllowableValue("Want Authentication", "Want Authentication",
                       "A certificate is asked for; clients without one are accepted"),
        AllowableValue("Need Authentication", "Need Authentication",
                       "Clients without a trusted certificate are refused")])
CONTAINER_QUEUE_SIZE = PropertyDescriptor(
    "Container Queue Size", description="How many received requests may wait for the processor to make them "
    "FlowFiles; more are answered 503 Service Unavailable.", required=True, default="50",
    validators=[v.POSITIVE_INTEGER])
MULTIPART_REQUEST_MAX_SIZE = PropertyDescriptor(
    "Multipart Request Max Size", description="The largest multipart/form-data request accepted (larger ones are "
    "answered 413); such requests are held in memory.", required=True, default="1 MB", validators=[v.DATA_SIZE])
MULTIPART_READ_BUFFER_SIZE = PropertyDescriptor(
    "Multipart Read Buffer Size", description="Accepted for compatibility: multipart requests are held in memory, "
    "up to Multipart Request Max Size.", required=True, default="512 KB", validators=[v.DATA_SIZE])
PARAMETERS_TO_ATTRIBUTES = PropertyDescriptor(
    "Parameters to Attributes", description="Query or form parameters, separated by commas, whose values become "
    "http.param.<name> attributes.", validators=[v.NON_EMPTY])

SUCCESS = Relationship("success", "FlowFiles made from received requests")

_VERIFY = {"Want Authentication": ssl.CERT_OPTIONAL, "Need Authentication": ssl.CERT_REQUIRED}
_CHUNK = 64 * 1024
_POLL = 0.01


class HandleHttpRequest(Processor):
    """Runs an HTTP (or HTTPS) server while the processor runs; each request becomes a FlowFile
    routed to success, and its client waits until HandleHttpResponse answers it.

    The request is kept in the HTTP Context Map under the FlowFile's ``http.context.identifier``;
    HandleHttpResponse (in the same flow, referencing the same map) answers it with the status,
    headers and content of the FlowFile it gets. A request nobody answers within the map's
    Request Expiration is answered 503 Service Unavailable. The FlowFile holds the request body
    (a multipart/form-data request makes one FlowFile per part, with the ``http.multipart.*``
    attributes, sharing one context identifier) and gets the ``http.*`` attributes below, every
    request header as ``http.headers.<name>``, every query parameter as
    ``http.query.param.<name>``, and a RECEIVE provenance event.

    Refused at once: a method not allowed (405), a path that Allowed Paths does not match (404),
    a request head over Request Header Maximum Size (431), and with 503 Service Unavailable a
    request that finds the success connection full, the Container Queue Size reached or the
    context map's Maximum Outstanding Requests reached. A body that cannot be read is answered
    400, and a request whose FlowFile could not be committed 500.

    With an SSL Context Service the server speaks HTTPS only; Client Authentication decides
    whether clients must present a certificate, whose subject, issuer and subject alternative
    names become ``http.subject.dn``, ``http.issuer.dn`` and ``http.certificate.sans.N.*``.
    No authentication scheme sets ``http.remote.user``, ``http.auth.type`` or
    ``http.principal.name`` (as in NiFi without a login service), so they are not written.
    Only HTTP/1.1 is served; form parameters for Parameters to Attributes come from the query
    string, a application/x-www-form-urlencoded body up to 1 MB, or the file-less parts of a
    multipart body.

    A request no task takes within the map's Request Expiration (as on the nodes that are not
    primary when the processor runs on the primary node only) is answered 503 as well.

    The server starts when the processor is scheduled and stops (its port freed) when it is
    stopped: requests not yet FlowFiles are answered 503, and those still waiting for
    HandleHttpResponse are answered 503 after a grace period. The port is confined
    (``engine.confinement``): in a tenant's group only the tenant's listen ports may be bound.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.standard.HandleHttpRequest"
    tags = ("http", "https", "request", "listen", "ingress", "web service")
    properties = (PORT, HOSTNAME, SSL_CONTEXT_SERVICE, HTTP_PROTOCOLS, HTTP_CONTEXT_MAP, ALLOWED_PATHS,
                  URL_CHARACTER_SET, ALLOW_GET, ALLOW_POST, ALLOW_PUT, ALLOW_DELETE, ALLOW_HEAD, ALLOW_OPTIONS,
                  MAXIMUM_THREADS, REQUEST_HEADER_MAX_SIZE, ADDITIONAL_METHODS, CLIENT_AUTHENTICATION,
                  CONTAINER_QUEUE_SIZE, MULTIPART_REQUEST_MAX_SIZE, MULTIPART_READ_BUFFER_SIZE,
                  PARAMETERS_TO_ATTRIBUTES)
    migrated_properties = {"parameters-to-attributes": "Parameters to Attributes",
                           "container-queue-size": "Container Queue Size",
                           "multipart-request-max-size": "Multipart Request Max Size",
                           "multipart-read-buffer-size": "Multipart Read Buffer Size"}
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.FORBIDDEN
    trigger_when_empty = True
    writes_attributes = (
        WrittenAttribute(CONTEXT_ID, "Identifies the request for HandleHttpResponse"),
        WrittenAttribute("mime.type", "The request's Content-Type"),
        WrittenAttribute("http.servlet.path", "The request path (decoded)"),
        WrittenAttribute("http.context.path", "Always empty (the server has one root context)"),
        WrittenAttribute("http.method", "The request method"),
        WrittenAttribute("http.local.addr", "The server address the request came to"),
        WrittenAttribute("http.local.name", "The server address the request came to"),
        WrittenAttribute("http.server.name", "The host the client addressed (Host header)"),
        WrittenAttribute("http.server.port", "The port the client addressed"),
        WrittenAttribute("http.query.string", "The query string, decoded"),
        WrittenAttribute("http.remote.host", "The client's address"),
        WrittenAttribute("http.remote.addr", "The client's address"),
        WrittenAttribute("http.protocol", "The protocol, HTTP/1.1"),
        WrittenAttribute("http.request.uri", "The request path, as sent"),
        WrittenAttribute("http.request.url", "The full request URL, without the query string"),
        WrittenAttribute("http.character.encoding", "The charset of the Content-Type, when given"),
        WrittenAttribute("http.locale", "The first language of Accept-Language (en_US without one)"),
        WrittenAttribute("http.dispatcher.type", "REQUEST"),
        WrittenAttribute("http.query.param.*", "Each query parameter"),
        WrittenAttribute("http.param.*", "The parameters named in Parameters to Attributes"),
        WrittenAttribute("http.headers.*", "Each request header"),
        WrittenAttribute("http.cookie.*", "Each cookie: value, max.age (-1) and secure (false)"),
        WrittenAttribute("http.subject.dn", "The client certificate's subject DN"),
        WrittenAttribute("http.issuer.dn", "The client certificate's issuer DN"),
        WrittenAttribute("http.certificate.sans.N.name", "The client certificate's subject alternative names"),
        WrittenAttribute("http.certificate.sans.N.nameType", "Their types (dNSName, iPAddress, rfc822Name, ...)"),
        WrittenAttribute("http.headers.multipart.*", "Of a multipart part: its headers"),
        WrittenAttribute("http.multipart.*", "Of a multipart part: name, filename, content.type, size, "
                         "fragments.sequence.number, fragments.total.number"),
    )
    see_also = ("HandleHttpResponse", "StandardHttpContextMap", "ListenHTTP")

    def on_scheduled(self, context):
        self._receiver = None
        self._listener = None
        provider = context.property(SSL_CONTEXT_SERVICE).as_service()
        ssl_context = None
        if provider is not None:
            ssl_context = provider.create_context(server_side=True)
            has_truststore = ssl_context.cert_store_stats().get("x509", 0) > 0
            mode = _VERIFY.get(context.property(CLIENT_AUTHENTICATION).value)
            ssl_context.verify_mode = mode if mode is not None and has_truststore else ssl.CERT_NONE
        port = context.property(PORT).evaluate().as_int()
        context.confinement.check_listen(port)
        receiver = _Receiver(context, https=ssl_context is not None)
        host = context.property(HOSTNAME).value or "0.0.0.0"
        self._listener = Listener(port, receiver, ssl_context, context.property(MAXIMUM_THREADS).as_int(),
                                  host=host.strip(), name="HandleHttpRequest",
                                  header_limit=context.property(REQUEST_HEADER_MAX_SIZE).as_data_size(),
                                  stop_grace=STOP_GRACE)
        self._receiver = receiver
        receiver.ready = True
        context.logger.info("listening on %s:%s", host, port)

    def on_trigger(self, context, session):
        receiver = self._receiver
        try:
            exchange = receiver.pending.get(timeout=_POLL)
        except queue.Empty:
            return
        if exchange.take():
            receiver.receive(session, exchange)

    def on_unscheduled(self, context):
        receiver = getattr(self, "_receiver", None)
        if receiver is not None:
            receiver.ready = False
        if getattr(self, "_listener", None) is not None:
            self._listener.close()
        if receiver is not None:
            receiver.drain()

    def on_stopped(self, context):
        receiver, listener = getattr(self, "_receiver", None), getattr(self, "_listener", None)
        if listener is None:
            return
        listener.close()
        if receiver is not None:
            receiver.drain()
            receiver.abandon(STOP_GRACE)
        listener.wait()
        self._listener = None


_STOPPED = "Service Unavailable: HandleHttpRequest stopped"


class _Exchange(HttpExchange):
    """A request waiting in its connection's thread for its answer."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self._lock = threading.Lock()
        self._claimed = False
        self._taken = False
        self._done = threading.Event()

    def take(self) -> bool:
        """A task takes the request to make its FlowFiles; False when it was answered meanwhile."""
        with self._lock:
            self._taken = not self._claimed
            return self._taken

    def claim(self) -> bool:
        with self._lock:
            if self._claimed:
                return False
            self._claimed = True
            return True

    def send(self, status: int, headers, body, length: int) -> None:
        handler = self.handler
        try:
            handler.send_response(status)
            for name, value in headers:
                handler.send_header(name, value)
            if status >= 200 and status not in (204, 304):
                handler.send_header("Content-Length", str(length))
            handler.end_headers()
            if handler.command != "HEAD" and status >= 200 and status not in (204, 304):
                while chunk := body.read(_CHUNK):
                    handler.wfile.write(chunk)
            handler.wfile.flush()
        except BaseException:
            handler.close_connection = True
            raise

    def finish(self) -> None:
        self._done.set()

    def refuse(self, status: int, message: str) -> bool:
        if not self.claim():
            return False
        self._answer(status, message)
        return True

    def _answer(self, status: int, message: str) -> None:
        try:
            respond(self.handler, status, message.encode(), close=True)
        except OSError:
            pass  # the client is gone: nobody to tell
        finally:
            self.finish()

    def wait(self, receiver: _Receiver) -> None:
        """Wait for the answer; a request no task took within the map's Request Expiration (the
        processor is not triggered on this node) is answered 503 like an expired one."""
        deadline = time.monotonic() + receiver.context_map.request_timeout
        while not self._done.wait(0.5):
            if receiver.abandoned:
                self.refuse(503, _STOPPED)
            elif time.monotonic() > deadline and self._claim_untaken():
                self._answer(503, "Service Unavailable: Timeout occurred")

    def _claim_untaken(self) -> bool:
        with self._lock:
            if self._claimed or self._taken:
                return False
            self._claimed = True
            return True


class _Receiver:
    """What the request threads and the processor's tasks share."""

    def __init__(self, context, https: bool) -> None:
        self.context = context
        self.https = https
        self.ready = False
        self.abandoned = False
        self.pending: queue.Queue[_Exchange] = queue.Queue(context.property(CONTAINER_QUEUE_SIZE).as_int())
        self.context_map: HttpContextMap = context.property(HTTP_CONTEXT_MAP).as_service()
        methods = {name for name, descriptor in (("GET", ALLOW_GET), ("POST", ALLOW_POST), ("PUT", ALLOW_PUT),
                                                 ("DELETE", ALLOW_DELETE), ("HEAD", ALLOW_HEAD),
                                                 ("OPTIONS", ALLOW_OPTIONS))
                   if context.property(descriptor).as_bool()}
        additional = context.property(ADDITIONAL_METHODS).value or ""
        methods.update(method.strip().upper() for method in additional.split(",") if method.strip())
        self.methods = methods
        paths = context.property(ALLOWED_PATHS)
        self.path_pattern = paths.as_regex() if paths.is_set() else None
        self.charset = context.property(URL_CHARACTER_SET).value
        self.multipart_max = context.property(MULTIPART_REQUEST_MAX_SIZE).as_data_size()
        names = context.property(PARAMETERS_TO_ATTRIBUTES).value or ""
        self.parameters = {name.strip() for name in names.split(",") if name.strip()}
        self._live: set[_Exchange] = set()
        self._lock = threading.Lock()

    # -- the request threads ----------------------------------------------------------------

    def handle(self, handler: Handler, health_only: bool) -> None:
        method = handler.command.upper()
        if method not in self.methods:
            respond(handler, 405, b"Method Not Allowed", close=True)
            return
        if self.path_pattern is not None and not self.path_pattern.fullmatch(urlsplit(handler.path).path):
            respond(handler, 404, b"Path Not Found", close=True)
            return
        if not self.context.available_relationships():
            respond(handler, 503, b"Service Unavailable: No Available Relationships", close=True)
            return
        if not self.ready:
            respond(handler, 503, b"Service Unavailable: Server Not Ready", close=True)
            return
        exchange = _Exchange(handler)
        with self._lock:
            self._live.add(exchange)
        try:
            try:
                self.pending.put_nowait(exchange)
            except queue.Full:
                exchange.refuse(503, "Service Unavailable: Request Queue Full")
                return
            exchange.wait(self)
        finally:
            with self._lock:
                self._live.discard(exchange)

    def drain(self) -> None:
        """Answer 503 to the requests not yet made FlowFiles."""
        while True:
            try:
                exchange = self.pending.get_nowait()
            except queue.Empty:
                return
            exchange.refuse(503, "Service Unavailable: Stopping Server")

    def abandon(self, grace: float) -> None:
        """Let the requests waiting for HandleHttpResponse have ``grace`` seconds, then answer them 503."""
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            with self._lock:
                if not self._live:
                    return
            time.sleep(0.05)
        self.abandoned = True
        with self._lock:
            live = list(self._live)
        # Answered here, not when each request's thread next looks: the listener cuts the
        # connections still open after its own grace, which could fall between a 503's head
        # and its body.
        for exchange in live:
            exchange.refuse(503, _STOPPED)

    # -- the processor's tasks ------------------------------------------------------------------

    def receive(self, session, exchange: _Exchange) -> None:
        """Make the request's FlowFile(s), register the request and route them to success."""
        try:
            self._receive(session, exchange)
        except BaseException as error:
            exchange.refuse(500, f"Internal Server Error: {type(error).__name__}")
            raise

    def _receive(self, session, exchange: _Exchange) -> None:
        context = self.context
        handler = exchange.handler
        started = time.monotonic()
        identifier = str(uuid.uuid4())
        content_type = handler.headers.get("Content-Type")
        flowfiles = []
        try:
            body = request_body(handler)
            if content_type is not None and "multipart/form-data" in content_type.lower():
                try:
                    parts = multipart_parts(body, content_type, self.multipart_max)
                except (ConnectionError, TimeoutError, ssl.SSLError) as error:
                    raise ClientError(400, f"Bad Request: {error}") from error
                for payload, part_attributes in parts:
                    flowfile = session.write_bytes(session.create(), payload)
                    flowfiles.append(session.put_all_attributes(flowfile, part_attributes))
                form = {attributes["http.multipart.name"]: payload.decode(self.charset, errors="replace")
                        for payload, attributes in parts
                        if "http.multipart.filename" not in attributes and "http.multipart.name" in attributes}
            else:
                flowfiles.append(session.create())
                flowfiles[0] = session.write(flowfiles[0], lambda out: _copy(body, out))
                form = self._urlencoded_form(session, flowfiles[0], content_type)
        except (ClientError, OSError) as error:
            for made in flowfiles:
                session.remove(made)
            where = f"the {handler.command} request for {urlsplit(handler.path).path} from {handler.client_address[0]}"
            if isinstance(error, ClientError):
                context.logger.error("could not read %s: %s", where, error)
                exchange.refuse(error.status, f"Stream Processing Failed: {error}")
            else:
                context.logger.error("could not store %s (answered 500): %s: %s", where, type(error).__name__, error)
                exchange.refuse(500, f"Internal Server Error: the request could not be stored: {error}")
            return
        attributes = request_attributes(handler, identifier, https=self.https, default_charset=self.charset,
                                        parameters=self.parameters, form=form)
        flowfiles = [session.put_all_attributes(flowfile, attributes) for flowfile in flowfiles]
        if not self.context_map.register(identifier, exchange):
            for flowfile in flowfiles:
                session.remove(flowfile)
            context.logger.warning("the HTTP Context Map is full: answered 503 to %s", handler.client_address[0])
            exchange.refuse(503, "Service Unavailable: Request Registration Failed")
            return
        session.on_rollback(lambda: self._rolled_back(identifier, exchange))
        subject = attributes.get("http.subject.dn")
        details = f"Received from {handler.client_address[0]}" + (f" with DN={subject}" if subject else "")
        for flowfile in flowfiles:
            session.provenance.receive(flowfile, transit_uri(attributes), details=details,
                                       duration=int((time.monotonic() - started) * 1000))
            session.transfer(flowfile, SUCCESS)

    def _rolled_back(self, identifier: str, exchange: _Exchange) -> None:
        exchange.refuse(500, "Internal Server Error: the request could not be committed")
        try:
            self.context_map.complete(identifier)
        except KeyError:
            pass

    def _urlencoded_form(self, session, flowfile, content_type: str | None) -> dict[str, str]:
        if not self.parameters or content_type is None:
            return {}
        if content_type.split(";", 1)[0].strip().lower() != "application/x-www-form-urlencoded":
            return {}
        if flowfile.size > 1024 * 1024:
            return {}
        text = session.read_bytes(flowfile).decode("latin-1")
        return dict(parse_qsl(text, keep_blank_values=True, encoding=content_charset(content_type) or self.charset))


def _copy(body, out) -> None:
    """Copy the request body into the content; the client's failures become ClientErrors (400),
    the content repository's stay OSErrors."""
    while True:
        try:
            chunk = body.read(_CHUNK)
        except (ConnectionError, TimeoutError, ssl.SSLError) as error:
            raise ClientError(400, f"Bad Request: {error}") from error
        if not chunk:
            return
        out.write(chunk)
