"""InvokeHTTP: sends an HTTP request for each FlowFile (or on a schedule) and routes by the response."""

from __future__ import annotations

import base64
import codecs
import hashlib
import http.cookiejar
import re
import secrets
import socket
import time
import urllib.request
import uuid
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import BinaryIO
from urllib.parse import urljoin, urlsplit

import urllib3
from cryptography import x509
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError

from engine.components import (
    AllowableValue,
    DynamicProperties,
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.confinement import ConfinementError, Policy
from engine.services.apis import SSLContextProvider
from engine.units import parse_duration

STATUS_CODE = "invokehttp.status.code"
STATUS_MESSAGE = "invokehttp.status.message"
RESPONSE_BODY = "invokehttp.response.body"
REQUEST_URL = "invokehttp.request.url"
REQUEST_DURATION = "invokehttp.request.duration"
RESPONSE_URL = "invokehttp.response.url"
TRANSACTION_ID = "invokehttp.tx.id"
REMOTE_DN = "invokehttp.remote.dn"
EXCEPTION_CLASS = "invokehttp.java.exception.class"
EXCEPTION_MESSAGE = "invokehttp.java.exception.message"

#: Attributes never sent as headers, whatever the Request Header Attributes Pattern says.
_NEVER_SENT = frozenset({STATUS_CODE, STATUS_MESSAGE, RESPONSE_BODY, REQUEST_URL, RESPONSE_URL, TRANSACTION_ID,
                         REMOTE_DN, EXCEPTION_CLASS, EXCEPTION_MESSAGE, "path"})
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_BODY_METHOD_DEPENDENCY = PropertyDependency("HTTP Method", ("PATCH", "POST", "PUT"))
_FORM_PREFIX = "post:form:"
DEFAULT_CONTENT_TYPE = "application/octet-stream"
_TRUE_FALSE = ("true", "false")
_TRUE_FALSE_CAPITALIZED = ("True", "False")


def _regex_matching(pattern: str, what: str):
    compiled = re.compile(pattern)

    def check(value: str, context) -> str | None:
        return None if compiled.fullmatch(value) else f"holds characters not allowed in {what}"

    return check


def _positive_duration(value: str, context) -> str | None:
    try:
        seconds = parse_duration(value)
    except ValueError as error:
        return str(error)
    return None if seconds > 0 else "must be longer than zero"


HTTP_METHOD = PropertyDescriptor(
    "HTTP Method", description="The request method: GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS or any other "
    "token. Only POST, PUT and PATCH send a body (the FlowFile's content).", required=True, default="GET",
    validators=[v.NON_EMPTY], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
HTTP_URL = PropertyDescriptor(
    "HTTP URL", description="The URL to call: http or https, a host, and optionally a port, a path and a query. "
    "Any encoding of the URL is the user's to do.", required=True, validators=[v.URL],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
HTTP2_DISABLED = PropertyDescriptor(
    "HTTP/2 Disabled", description="Accepted for compatibility: requests always use HTTP/1.1.", required=True,
    default="False", allowed_values=_TRUE_FALSE_CAPITALIZED)
SSL_CONTEXT_SERVICE = PropertyDescriptor(
    "SSL Context Service", description="Gives the certificates to trust and the client certificate to present "
    "for https URLs; without it the system's authorities are trusted.", service=SSLContextProvider)
CONNECT_TIMEOUT = PropertyDescriptor(
    "Connection Timeout", description="How long to wait for a connection to the server.", required=True,
    default="5 secs", validators=[_positive_duration])
READ_TIMEOUT = PropertyDescriptor(
    "Socket Read Timeout", description="How long to wait for each read of the response.", required=True,
    default="15 secs", validators=[_positive_duration])
WRITE_TIMEOUT = PropertyDescriptor(
    "Socket Write Timeout", description="How long to wait for each write of the request.", required=True,
    default="15 secs", validators=[_positive_duration])
IDLE_TIMEOUT = PropertyDescriptor(
    "Socket Idle Timeout", description="Pooled connections are closed once no request has used them for this "
    "long.", required=True, default="5 mins", validators=[_positive_duration])
IDLE_CONNECTIONS = PropertyDescriptor(
    "Socket Idle Connections", description="How many idle connections to keep per host for reuse (0: each "
    "request asks the server to close its connection).", required=True, default="5",
    validators=[v.NON_NEGATIVE_INTEGER])
USERNAME = PropertyDescriptor(
    "Request Username", description="The user name for HTTP Basic (or, if enabled, Digest) authentication.",
    validators=[_regex_matching(r"[\x20-\x39\x3b-\x7e\x80-\xff]+", "a user name (no ':' and no control characters)")])
PASSWORD = PropertyDescriptor(
    "Request Password", description="The password for HTTP Basic or Digest authentication.", sensitive=True,
    validators=[_regex_matching(r"[\x20-\x7e\x80-\xff]+", "a password (no control characters)")])
DIGEST_ENABLED = PropertyDescriptor(
    "Request Digest Authentication Enabled", description="Answer Digest challenges (RFC 7616: MD5, SHA-256, qop "
    "auth) with the user name and password instead of sending Basic credentials.", required=True,
    default="false", allowed_values=_TRUE_FALSE, depends_on=[PropertyDependency("Request Username")])
FAILURE_PENALIZATION = PropertyDescriptor(
    "Request Failure Penalization Enabled", description="Penalize FlowFiles routed to No Retry (1xx, 3xx and 4xx "
    "responses).", default="false", allowed_values=_TRUE_FALSE)
BODY_ENABLED = PropertyDescriptor(
    "Request Body Enabled", description="Send the FlowFile's content as the body of POST, PUT and PATCH requests "
    "(if false, the body is empty or holds only the form fields).", default="true", allowed_values=_TRUE_FALSE,
    depends_on=[_BODY_METHOD_DEPENDENCY])
FORM_DATA_NAME = PropertyDescriptor(
    "Request Multipart Form-Data Name", description="Send the body as multipart/form-data, the content being the "
    "part of this name (an expression).", expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    depends_on=[PropertyDependency("Request Body Enabled", ("true",))])
FORM_DATA_FILENAME_ENABLED = PropertyDescriptor(
    "Request Multipart Form-Data Filename Enabled", description="Give the content's part the FlowFile's filename "
    "attribute as its filename.", default="true", allowed_values=_TRUE_FALSE,
    depends_on=[PropertyDependency("Request Multipart Form-Data Name")])
CHUNKED_ENABLED = PropertyDescriptor(
    "Request Chunked Transfer-Encoding Enabled", description="Send the body with Transfer-Encoding: chunked instead "
    "of a Content-Length header.", required=True, default="false", allowed_values=_TRUE_FALSE,
    depends_on=[_BODY_METHOD_DEPENDENCY])
CONTENT_ENCODING = PropertyDescriptor(
    "Request Content-Encoding", description="Compress the body for transmission (the server must accept it).",
    required=True, default="DISABLED", depends_on=[_BODY_METHOD_DEPENDENCY], allowed_values=[
        AllowableValue("DISABLED", "DISABLED", "The body is sent as it is"),
        AllowableValue("GZIP", "GZIP", "The body is gzip-compressed and sent with Content-Encoding: gzip")])
CONTENT_TYPE = PropertyDescriptor(
    "Request Content-Type", description=f"The Content-Type of the body ({DEFAULT_CONTENT_TYPE} when it evaluates "
    "to nothing).", required=True, default="${mime.type}", expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    depends_on=[_BODY_METHOD_DEPENDENCY])
DATE_HEADER_ENABLED = PropertyDescriptor(
    "Request Date Header Enabled", description="Send a Date header.", required=True, default="True",
    allowed_values=_TRUE_FALSE_CAPITALIZED)
HEADER_ATTRIBUTES_PATTERN = PropertyDescriptor(
    "Request Header Attributes Pattern", description="FlowFile attributes whose names match this regular "
    "expression are sent as headers (values trimmed; HTTP allows ASCII only). User-added properties are always "
    "sent as headers.", validators=[v.REGEX])
USER_AGENT = PropertyDescriptor(
    "Request User-Agent", description="The User-Agent header.", validators=[v.NON_EMPTY],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
BODY_ATTRIBUTE_NAME = PropertyDescriptor(
    "Response Body Attribute Name", description="Put the response body into this attribute of the request "
    "FlowFile (routed to Original) instead of into a Response FlowFile.",
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
BODY_ATTRIBUTE_SIZE = PropertyDescriptor(
    "Response Body Attribute Size", description="At most this many bytes of the body go into the attribute; the "
    "rest is cut off.", required=True, default="256", validators=[v.POSITIVE_INTEGER],
    depends_on=[PropertyDependency("Response Body Attribute Name")])
BODY_IGNORED = PropertyDescriptor(
    "Response Body Ignored", description="Do not read the response body (Response FlowFiles are empty).",
    required=True, default="false", allowed_values=_TRUE_FALSE)
CACHE_ENABLED = PropertyDescriptor(
    "Response Cache Enabled", description="HTTP response caching is not available: only false is accepted.",
    required=True, default="false", allowed_values=("false",))
CACHE_SIZE = PropertyDescriptor(
    "Response Cache Size", description="Not used (response caching is not available).", required=True,
    default="10MB", validators=[v.DATA_SIZE], depends_on=[PropertyDependency("Response Cache Enabled", ("true",))])
COOKIE_STRATEGY = PropertyDescriptor(
    "Response Cookie Strategy", description="Whether cookies set by responses are kept and sent with later "
    "requests of this processor.", required=True, default="DISABLED", allowed_values=[
        AllowableValue("DISABLED", "DISABLED", "Cookies are ignored"),
        AllowableValue("ACCEPT_ALL", "ACCEPT_ALL", "Every cookie is kept (in memory, until the processor stops)")])
GENERATION_REQUIRED = PropertyDescriptor(
    "Response Generation Required", description="Make a Response FlowFile whatever the status code (the request "
    "FlowFile still goes to Retry or No Retry when the status is not 2xx).", default="false",
    allowed_values=_TRUE_FALSE)
NAMING_STRATEGY = PropertyDescriptor(
    "Response FlowFile Naming Strategy", description="How Response FlowFiles are named.", required=True,
    default="RANDOM", allowed_values=[
        AllowableValue("RANDOM", "RANDOM", "The filename is inherited from the request FlowFile, or random"),
        AllowableValue("URL_PATH", "URL_PATH", "For GET requests, the filename is the last segment of the URL path "
                       "(it may hold URL-encoded characters); otherwise as RANDOM")])
HEADER_ATTRIBUTES_ENABLED = PropertyDescriptor(
    "Response Header Request Attributes Enabled", description="Also add the response headers as attributes of the "
    "request FlowFile (routed to Original, Retry or No Retry).", default="false", allowed_values=_TRUE_FALSE)
HEADER_ATTRIBUTES_PREFIX = PropertyDescriptor(
    "Response Header Request Attributes Prefix", description="A prefix for those attributes (end it with a "
    "separator such as '.').", validators=[v.NON_EMPTY], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    depends_on=[PropertyDependency("Response Header Request Attributes Enabled", ("true",))])
REDIRECTS_ENABLED = PropertyDescriptor(
    "Response Redirects Enabled", description="Follow redirects (up to 20); if false, a 3xx response is routed "
    "like any other.", required=True, default="True", allowed_values=_TRUE_FALSE_CAPITALIZED)

ORIGINAL = Relationship("Original", "Request FlowFiles whose response had a 2xx status")
RESPONSE = Relationship("Response", "Response FlowFiles of 2xx responses (of every response with Response Generation "
                        "Required)")
RETRY = Relationship("Retry", "Request FlowFiles whose response had a 5xx status; they are penalized")
NO_RETRY = Relationship("No Retry", "Request FlowFiles whose response had a 1xx, 3xx or 4xx status")
FAILURE = Relationship("Failure", "Request FlowFiles whose request failed (no connection, timeout, bad URL); they "
                       "are penalized")

_MAX_REDIRECTS = 20
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_BATCH = 50
_BATCH_SECONDS = 0.5
_CHUNK = 64 * 1024


class InvokeHTTP(Processor):
    """Sends an HTTP request for each FlowFile, or on each run when the processor has no incoming
    connection, and routes by the status of the response: 2xx to Original (the request) and
    Response (a new FlowFile holding the response body and headers), 5xx to Retry, 1xx, 3xx and
    4xx to No Retry, and requests that got no response at all to Failure.

    POST, PUT and PATCH send the FlowFile's content as the body, streamed from the content
    repository; the response body is streamed into the Response FlowFile. Headers come from
    user-added properties (name: header, value: an expression) and from the attributes matching
    Request Header Attributes Pattern. Properties named ``post:form:NAME`` add form fields to a
    multipart/form-data body. Each request gets the ``invokehttp.*`` attributes (status code and
    message, request and final URL, duration, a transaction id, the server certificate's DN);
    the Response FlowFile also gets the response headers and ``mime.type``. A non-2xx response's
    body (its first Response Body Attribute Size bytes) goes into ``invokehttp.response.body`` of
    the request FlowFile.

    Provenance: a SEND event for a request whose body was sent, a FORK and a FETCH event for the
    Response FlowFile (RECEIVE when there is no request FlowFile). Retry and Failure FlowFiles
    are penalized; when the server cannot be reached at all (connection refused, connect
    timeout, unknown host) the processor also yields, so a server that is down is not hammered,
    and the FlowFiles still queued wait. Failure FlowFiles carry the Python exception's class and
    message in ``invokehttp.java.exception.class`` and ``invokehttp.java.exception.message``.
    Connections are confined (``engine.confinement``): each address a host resolves to is
    checked before it is connected to, redirects included, and a refused one fails the FlowFile
    with a bulletin saying what was refused and why; nothing is sent.

    Without an incoming connection each run sends one request (GET, DELETE, HEAD, OPTIONS: POST,
    PUT and PATCH need a FlowFile and do nothing). Delivery is at least once: after a crash a
    request may be sent again. Requests use HTTP/1.1 (HTTP/2 Disabled is accepted for
    compatibility); response caching, OAuth2 token providers and proxies are not available, so
    flows using them are reported invalid.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.standard.InvokeHTTP"
    tags = ("http", "https", "rest", "client")
    properties = (HTTP_METHOD, HTTP_URL, HTTP2_DISABLED, SSL_CONTEXT_SERVICE, CONNECT_TIMEOUT, READ_TIMEOUT,
                  WRITE_TIMEOUT, IDLE_TIMEOUT, IDLE_CONNECTIONS, USERNAME, PASSWORD, DIGEST_ENABLED,
                  FAILURE_PENALIZATION, BODY_ENABLED, FORM_DATA_NAME, FORM_DATA_FILENAME_ENABLED, CHUNKED_ENABLED,
                  CONTENT_ENCODING, CONTENT_TYPE, DATE_HEADER_ENABLED, HEADER_ATTRIBUTES_PATTERN, USER_AGENT,
                  BODY_ATTRIBUTE_NAME, BODY_ATTRIBUTE_SIZE, BODY_IGNORED, CACHE_ENABLED, CACHE_SIZE, COOKIE_STRATEGY,
                  GENERATION_REQUIRED, NAMING_STRATEGY, HEADER_ATTRIBUTES_ENABLED, HEADER_ATTRIBUTES_PREFIX,
                  REDIRECTS_ENABLED)
    relationships = (ORIGINAL, RESPONSE, RETRY, NO_RETRY, FAILURE)
    dynamic_properties = DynamicProperties(
        "Header Name", "Attribute Expression Language",
        "Sends a request header of this name whose value is the evaluated expression; a name 'post:form:NAME' "
        "adds the form field NAME to multipart/form-data POST bodies instead.", ExpressionScope.FLOWFILE_ATTRIBUTES)
    input_requirement = InputRequirement.ALLOWED
    writes_attributes = (
        WrittenAttribute(STATUS_CODE, "The response's status code"),
        WrittenAttribute(STATUS_MESSAGE, "The response's status message"),
        WrittenAttribute(RESPONSE_BODY, "The start of the body of a non-2xx response (on the request FlowFile)"),
        WrittenAttribute(REQUEST_URL, "The requested URL"),
        WrittenAttribute(REQUEST_DURATION, "Milliseconds from sending the request to receiving the response headers"),
        WrittenAttribute(RESPONSE_URL, "The URL finally requested, after redirects"),
        WrittenAttribute(TRANSACTION_ID, "A unique identifier of the exchange"),
        WrittenAttribute(REMOTE_DN, "The distinguished name of the server's certificate (https)"),
        WrittenAttribute(EXCEPTION_CLASS, "The class of the error that made the request fail"),
        WrittenAttribute(EXCEPTION_MESSAGE, "The message of the error that made the request fail"),
        WrittenAttribute("user-defined", "The response body, into the attribute Response Body Attribute Name"),
    )
    migrated_properties = {
        "Read Timeout": "Socket Read Timeout", "Remote URL": "HTTP URL", "disable-http2": "HTTP/2 Disabled",
        "idle-timeout": "Socket Idle Timeout", "max-idle-connections": "Socket Idle Connections",
        "oauth2-access-token-provider": "Request OAuth2 Access Token Provider",
        "Basic Authentication Username": "Request Username", "Basic Authentication Password": "Request Password",
        "Digest Authentication": "Request Digest Authentication Enabled",
        'Penalize on "No Retry"': "Request Failure Penalization Enabled",
        "send-message-body": "Request Body Enabled", "form-body-form-name": "Request Multipart Form-Data Name",
        "set-form-filename": "Request Multipart Form-Data Filename Enabled",
        "Use Chunked Encoding": "Request Chunked Transfer-Encoding Enabled",
        "Content-Encoding": "Request Content-Encoding", "Content-Type": "Request Content-Type",
        "Include Date Header": "Request Date Header Enabled",
        "Attributes to Send": "Request Header Attributes Pattern", "Useragent": "Request User-Agent",
        "Put Response Body In Attribute": "Response Body Attribute Name",
        "Max Length To Put In Attribute": "Response Body Attribute Size",
        "ignore-response-content": "Response Body Ignored", "use-etag": "Response Cache Enabled",
        "etag-max-cache-size": "Response Cache Size", "cookie-strategy": "Response Cookie Strategy",
        "Always Output Response": "Response Generation Required",
        "flow-file-naming-strategy": "Response FlowFile Naming Strategy",
        "Add Response Headers to Request": "Response Header Request Attributes Enabled",
        "Follow Redirects": "Response Redirects Enabled",
    }
    see_also = ("ListenHTTP",)

    @classmethod
    def migrate_properties(cls, properties):
        migrated = super().migrate_properties(properties)
        # Exported flows list these with their defaults even when the feature they tune is unused.
        if migrated.get("Proxy Host") is None:
            migrated.pop("Proxy Type", None)
        if migrated.get("Request OAuth2 Access Token Provider") is None:
            migrated.pop("OAuth2 Access Token Refresh Strategy", None)
        return migrated

    def validate(self, context):
        form_fields = any(name.startswith(_FORM_PREFIX) for name in context.dynamic_properties)
        body_enabled = context.property(BODY_ENABLED).as_bool()
        form_name = context.property(FORM_DATA_NAME).is_set()
        if form_fields and body_enabled and not form_name:
            yield ("'Request Multipart Form-Data Name' is required when form fields (post:form:*) are configured "
                   "and 'Request Body Enabled' is true")
        if not body_enabled and form_name:
            yield "'Request Body Enabled' must be true when 'Request Multipart Form-Data Name' is set"
        for name in context.dynamic_properties:
            feature = _UNAVAILABLE.get(name)
            if feature is not None:
                yield f"'{name}' is set, but {feature} are not available in Flowsite's InvokeHTTP: remove it"
            elif not name.startswith(_FORM_PREFIX) and not _TOKEN.fullmatch(name):
                yield f"dynamic property {name!r} is not a valid HTTP header name"

    # -- life cycle -------------------------------------------------------------------------

    def on_scheduled(self, context):
        provider = context.property(SSL_CONTEXT_SERVICE).as_service()
        ssl_context = provider.create_context(server_side=False) if provider is not None else None
        idle = context.property(IDLE_CONNECTIONS).as_int()
        self._close_after_use = idle == 0
        self._idle_timeout = context.property(IDLE_TIMEOUT).as_duration()
        self._timeout = urllib3.Timeout(connect=context.property(CONNECT_TIMEOUT).as_duration(),
                                        read=context.property(READ_TIMEOUT).as_duration())
        self._pool = urllib3.PoolManager(num_pools=32, maxsize=max(1, idle), block=False, ssl_context=ssl_context,
                                         retries=False, timeout=self._timeout)
        self._pool.pool_classes_by_scheme = _pool_classes(context.property(WRITE_TIMEOUT).as_duration(),
                                                          context.confinement)
        self._last_used = time.monotonic()
        pattern = context.property(HEADER_ATTRIBUTES_PATTERN)
        self._header_pattern = pattern.as_regex() if pattern.is_set() and pattern.value.strip() else None
        self._cookies = (http.cookiejar.CookieJar() if context.property(COOKIE_STRATEGY).value == "ACCEPT_ALL"
                         else None)
        self._username = (context.property(USERNAME).value or "").strip()
        self._password = (context.property(PASSWORD).value or "").strip()
        self._digest = bool(self._username) and context.property(DIGEST_ENABLED).as_bool()
        self._follow_redirects = context.property(REDIRECTS_ENABLED).as_bool()
        self._body_attribute = context.property(BODY_ATTRIBUTE_NAME)
        self._body_attribute_size = context.property(BODY_ATTRIBUTE_SIZE).as_int()
        self._body_ignored = context.property(BODY_IGNORED).as_bool()
        self._generation_required = context.property(GENERATION_REQUIRED).as_bool()
        self._penalize_no_retry = context.property(FAILURE_PENALIZATION).as_bool()
        self._url_naming = context.property(NAMING_STRATEGY).value == "URL_PATH"
        self._headers_to_request = context.property(HEADER_ATTRIBUTES_ENABLED).as_bool()
        self._gzip = context.property(CONTENT_ENCODING).value == "GZIP"
        self._chunked = context.property(CHUNKED_ENABLED).as_bool()
        dynamic = context.dynamic_properties
        self._form_fields = {name[len(_FORM_PREFIX):]: value for name, value in dynamic.items()
                             if name.startswith(_FORM_PREFIX)}
        self._header_properties = {name: value for name, value in dynamic.items()
                                   if not name.startswith(_FORM_PREFIX)}

    def on_stopped(self, context):
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.clear()
            self._pool = None

    # -- the work ---------------------------------------------------------------------------

    def on_trigger(self, context, session):
        if not context.has_incoming_connection():
            self._invoke(context, session, None)
            return
        deadline = time.monotonic() + _BATCH_SECONDS
        for _ in range(_BATCH):
            flowfile = session.get()
            if flowfile is None or not self._invoke(context, session, flowfile):
                return
            if time.monotonic() >= deadline:
                return

    def _invoke(self, context, session, request) -> bool:
        """One exchange for ``request`` (None: a source run); False when the server could not be reached."""
        exchange = _Exchange(request)
        try:
            method = (context.property(HTTP_METHOD).evaluate(request).value or "").strip().upper()
            if request is None:
                if method in _BODY_METHODS:
                    return True
                if self._body_attribute.is_set():
                    exchange.request = session.create()
            url = (context.property(HTTP_URL).evaluate(exchange.request).value or "").strip()
            self._exchange(context, session, exchange, method, url)
        except Exception as error:
            unreachable = isinstance(error, ConnectTimeoutError)
            if isinstance(error, _Refused):
                error = error.refusal
                reason = context.refused(error)
            else:
                reason = f"{type(error).__name__}: {error}"
            if exchange.response is not None:
                session.remove(exchange.response)
            if exchange.request is None:
                context.logger.error("request failed: %s", reason)
                context.yield_processor()
                return False
            context.logger.error("request for %s failed: %s; routing to Failure", exchange.request.uuid, reason)
            flowfile = session.penalize(exchange.request)
            flowfile = session.put_all_attributes(flowfile, {EXCEPTION_CLASS: _class_name(error),
                                                             EXCEPTION_MESSAGE: str(error)})
            session.transfer(flowfile, FAILURE)
            if unreachable:
                context.yield_processor()
                return False
        return True

    def _exchange(self, context, session, exchange: _Exchange, method: str, url: str) -> None:
        request = exchange.request
        headers = self._headers(context, request)
        body = self._body(context, session, request, method, headers)
        started = time.monotonic()
        response, final_url = self._send(method, url, headers, body)
        try:
            statuses = {
                STATUS_CODE: str(response.status), STATUS_MESSAGE: response.reason or "", REQUEST_URL: url,
                REQUEST_DURATION: str(int((time.monotonic() - started) * 1000)), RESPONSE_URL: final_url,
                TRANSACTION_ID: str(uuid.uuid4()),
            }
            if body is not None and request is not None:
                session.provenance.send(request, url, duration=int((time.monotonic() - started) * 1000))
            header_attributes = _header_attributes(response)
            remote_dn = _remote_dn(response)
            if remote_dn is not None:
                header_attributes[REMOTE_DN] = remote_dn
            if request is not None:
                request = exchange.request = session.put_all_attributes(request, statuses)
            success = 200 <= response.status < 300
            to_attribute = self._body_attribute.is_set()
            body_to_attribute = (not success or to_attribute) and request is not None
            body_to_response = (success and not to_attribute) or self._generation_required
            captured = bytearray()
            if body_to_response:
                self._response_flowfile(session, exchange, response, method, url, statuses, header_attributes,
                                        started, captured if body_to_attribute else None)
            elif body_to_attribute and not self._body_ignored:
                captured += _read_at_most(response, self._body_attribute_size)
            if body_to_attribute and not self._body_ignored:
                name = self._body_attribute.evaluate(request).value if to_attribute else None
                name = name or RESPONSE_BODY
                text = bytes(captured[:self._body_attribute_size]).decode(_charset(response), errors="replace")
                request = exchange.request = session.put_attribute(request, name, text)
                millis = int((time.monotonic() - started) * 1000)
                session.provenance.modify_attributes(
                    request, details=f"Response Body Attribute Added [{name}] Processing Duration [{millis} ms]")
            if self._headers_to_request and request is not None:
                prefix = (context.property(HEADER_ATTRIBUTES_PREFIX).evaluate(request).value or "").strip()
                request = exchange.request = session.put_all_attributes(
                    request, {prefix + key if key != REMOTE_DN else key: value
                              for key, value in header_attributes.items()})
        finally:
            self._release(response)
        self._route(context, session, exchange, response.status)

    def _route(self, context, session, exchange: _Exchange, status: int) -> None:
        request, response = exchange.request, exchange.response
        success = 200 <= status < 300
        if not success and request is None:
            context.yield_processor()
        if response is not None and (success or self._generation_required):
            session.transfer(response, RESPONSE)
            exchange.response = None
        if request is None:
            return
        if success:
            session.transfer(request, ORIGINAL)
        elif 500 <= status < 600:
            session.transfer(session.penalize(request), RETRY)
        else:
            session.transfer(session.penalize(request) if self._penalize_no_retry else request, NO_RETRY)

    def _response_flowfile(self, session, exchange: _Exchange, response, method, url, statuses, header_attributes,
                           started, captured: bytearray | None) -> None:
        """Make the Response FlowFile (kept in ``exchange`` at every step, for the error path)."""
        request = exchange.request
        exchange.response = session.create(request) if request is not None else session.create()
        attributes = {**statuses, **header_attributes}
        if self._url_naming and method == "GET":
            name = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]
            if name:
                attributes["filename"] = name
        content_type = response.headers.get("Content-Type")
        if content_type and not self._body_ignored:
            attributes["mime.type"] = content_type
        exchange.response = session.put_all_attributes(exchange.response, attributes)
        if self._body_ignored:
            return

        def copy(out: BinaryIO) -> None:
            for chunk in response.stream(_CHUNK):
                if captured is not None and len(captured) < self._body_attribute_size:
                    captured.extend(chunk[:self._body_attribute_size - len(captured)])
                out.write(chunk)

        exchange.response = session.write(exchange.response, copy)
        millis = int((time.monotonic() - started) * 1000)
        if request is not None:
            session.provenance.fetch(exchange.response, url, duration=millis)
        else:
            session.provenance.receive(exchange.response, url, duration=millis)

    # -- building the request ---------------------------------------------------------------

    def _headers(self, context, request) -> urllib3.HTTPHeaderDict:
        headers = urllib3.HTTPHeaderDict()
        user_agent = context.property(USER_AGENT)
        if user_agent.is_set():
            headers["User-Agent"] = (user_agent.evaluate(request).value or "").strip()
        if context.property(DATE_HEADER_ENABLED).as_bool():
            headers["Date"] = formatdate(usegmt=True)
        if self._close_after_use:
            headers["Connection"] = "close"
        if self._username and not self._digest:
            credentials = f"{self._username}:{self._password}"
            try:
                encoded = credentials.encode("latin-1")
            except UnicodeEncodeError:
                encoded = credentials.encode("utf-8")
            headers["Authorization"] = "Basic " + base64.b64encode(encoded).decode("ascii")
        for name, value in self._header_properties.items():
            headers.add(name, value.evaluate(request).value or "")
        if self._header_pattern is not None and request is not None:
            for name, value in request.attributes.items():
                name = name.strip()
                if name not in _NEVER_SENT and self._header_pattern.fullmatch(name):
                    headers.add(name, value.strip())
        return headers

    def _body(self, context, session, request, method, headers) -> _Body | None:
        """The request body (None: the method sends none); sets the body's headers."""
        if method not in _BODY_METHODS or request is None:
            return None
        body_enabled = context.property(BODY_ENABLED).as_bool()
        content_type = (context.property(CONTENT_TYPE).evaluate(request).value or "").strip() or DEFAULT_CONTENT_TYPE
        form_name = context.property(FORM_DATA_NAME).evaluate(request).value if body_enabled else None
        if self._form_fields or form_name:
            fields = [(name, value.evaluate(request).value or "") for name, value in self._form_fields.items()]
            filename = None
            if context.property(FORM_DATA_FILENAME_ENABLED).as_bool():
                filename = request.attributes.get("filename")
            body = _multipart(session, request, fields, form_name if body_enabled else None, filename, content_type)
            headers["Content-Type"] = f"multipart/form-data; boundary={body.boundary}"
        elif body_enabled:
            body = _Body(lambda: _content_chunks(session, request), request.size)
            headers["Content-Type"] = content_type
        else:
            body = _Body(lambda: iter(()), 0)
        if self._gzip:
            headers["Content-Encoding"] = "gzip"
            body = _Body(_gzipped(body.open), None, body.boundary)
        if self._chunked:
            body = _Body(body.open, None, body.boundary)
        return body

    # -- the exchange itself ----------------------------------------------------------------

    def _send(self, method: str, url: str, headers, body: _Body | None):
        """Send the request, following redirects and answering a Digest challenge; returns the
        response (its body unread) and the URL it came from."""
        now = time.monotonic()
        if now - self._last_used > self._idle_timeout:
            self._pool.clear()
        self._last_used = now
        digest_tried = False
        for _ in range(_MAX_REDIRECTS + 1):
            scheme = urlsplit(url).scheme.lower()
            if scheme not in ("http", "https"):
                raise ValueError(f"{url!r} is not an http or https URL")
            sent = urllib3.HTTPHeaderDict(headers)
            if self._cookies is not None:
                cookie = _cookie_header(self._cookies, method, url)
                if cookie:
                    sent["Cookie"] = cookie
            if body is not None and body.length is not None:
                sent["Content-Length"] = str(body.length)
            response = self._pool.urlopen(
                method, url, body=body.open() if body is not None else None, headers=sent,
                chunked=body is not None and body.length is None, redirect=False, retries=False,
                preload_content=False, timeout=self._timeout)
            self._last_used = time.monotonic()
            if self._cookies is not None:
                self._cookies.extract_cookies(_CookieResponse(response.headers),
                                              urllib.request.Request(url, method=method))
            if response.status == 401 and self._digest and not digest_tried:
                authorization = _digest_authorization(response, method, url, self._username, self._password)
                if authorization is not None:
                    digest_tried = True
                    headers = urllib3.HTTPHeaderDict(headers)
                    headers["Authorization"] = authorization
                    self._release(response)
                    continue
            location = response.headers.get("Location")
            if not (self._follow_redirects and response.status in _REDIRECTS and location):
                return response, url
            self._release(response)
            target = urljoin(url, location)
            if urlsplit(target).netloc.lower() != urlsplit(url).netloc.lower():
                headers = urllib3.HTTPHeaderDict(headers)
                headers.discard("Authorization")
                headers.discard("Cookie")
            if response.status in (301, 302, 303) and method not in ("GET", "HEAD"):
                method, body = "GET", None
                headers = urllib3.HTTPHeaderDict(headers)
                for name in ("Content-Type", "Content-Encoding", "Content-Length", "Transfer-Encoding"):
                    headers.discard(name)
            url = target
            digest_tried = False
        raise _TooManyRedirects(f"more than {_MAX_REDIRECTS} redirects, the last to {url!r}")

    def _release(self, response) -> None:
        """Give the connection back to the pool, or close it when reading the rest of an unwanted
        body would cost more than a new connection."""
        remaining = response.length_remaining
        try:
            if response.closed or (remaining is not None and remaining <= _CHUNK):
                response.drain_conn()
            else:
                response.close()
        finally:
            response.release_conn()


@dataclass
class _Exchange:
    """The FlowFiles of one exchange, kept current for the error path."""

    request: object | None
    response: object | None = None


@dataclass
class _Body:
    """A request body: ``open()`` gives a fresh iterator of its bytes (a redirect or an
    authentication challenge sends it again); ``length`` is None when unknown (sent chunked)."""

    open: Callable[[], Iterator[bytes]]
    length: int | None
    boundary: str | None = field(default=None)


class _TooManyRedirects(Exception):
    """The server kept redirecting."""


#: Properties of NiFi's InvokeHTTP for features Flowsite does not offer (they would otherwise be
#: taken for header properties).
_UNAVAILABLE = {
    **dict.fromkeys(("Proxy Host", "Proxy Port", "Proxy Type", "invokehttp-proxy-user", "invokehttp-proxy-password",
                     "proxy-configuration-service", "Proxy Configuration Service"), "proxies"),
    **dict.fromkeys(("Request OAuth2 Access Token Provider", "OAuth2 Access Token Refresh Strategy"),
                    "OAuth2 access token providers"),
}
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def _content_chunks(session, flowfile) -> Iterator[bytes]:
    with session.read(flowfile) as stream:
        while True:
            chunk = stream.read(_CHUNK)
            if not chunk:
                return
            yield chunk


def _gzipped(source: Callable[[], Iterator[bytes]]) -> Callable[[], Iterator[bytes]]:
    def chunks() -> Iterator[bytes]:
        compressor = zlib.compressobj(wbits=31)
        for chunk in source():
            compressed = compressor.compress(chunk)
            if compressed:
                yield compressed
        yield compressor.flush()

    return chunks


def _multipart(session, request, fields, file_name, filename, content_type) -> _Body:
    boundary = secrets.token_hex(16)
    parts = []
    for name, value in fields:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote(name)}"\r\n\r\n'.encode()
                     + value.encode() + b"\r\n")
    head = b""
    if file_name:
        disposition = f'form-data; name="{_quote(file_name)}"'
        if filename:
            disposition += f'; filename="{_quote(filename)}"'
        head = (f"--{boundary}\r\nContent-Disposition: {disposition}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {request.size}\r\n\r\n").encode()
    tail = f"--{boundary}--\r\n".encode()
    prefix = b"".join(parts) + head

    def chunks() -> Iterator[bytes]:
        yield prefix
        if file_name:
            yield from _content_chunks(session, request)
            yield b"\r\n"
        yield tail

    length = len(prefix) + len(tail) + (request.size + 2 if file_name else 0)
    return _Body(chunks, length, boundary)


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "%0D").replace("\n", "%0A")


def _header_attributes(response) -> dict[str, str]:
    """The response headers as attributes (repeated headers joined with ', ')."""
    return {name: ", ".join(response.headers.getlist(name)) for name in response.headers}


def _remote_dn(response) -> str | None:
    connection = response.connection
    sock = getattr(connection, "sock", None) if connection is not None else None
    getpeercert = getattr(sock, "getpeercert", None)
    if getpeercert is None:
        return None
    der = getpeercert(binary_form=True)
    return x509.load_der_x509_certificate(der).subject.rfc4514_string() if der else None


def _charset(response) -> str:
    match = re.search(r"charset=\"?([^\";]+)", response.headers.get("Content-Type", ""), re.IGNORECASE)
    if match:
        try:
            return codecs.lookup(match.group(1).strip()).name
        except LookupError:
            pass
    return "utf-8"


def _read_at_most(response, limit: int) -> bytes:
    data = bytearray()
    while len(data) < limit:
        chunk = response.read(limit - len(data))
        if not chunk:
            break
        data += chunk
    return bytes(data)


def _class_name(error: Exception) -> str:
    cls = type(error)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


class _CookieResponse:
    """What ``http.cookiejar`` needs of a response: its headers."""

    def __init__(self, headers) -> None:
        self._headers = headers

    def info(self):
        return self

    def get_all(self, name, default=None):
        return self._headers.getlist(name) or default


def _cookie_header(jar: http.cookiejar.CookieJar, method: str, url: str) -> str | None:
    request = urllib.request.Request(url, method=method)
    jar.add_cookie_header(request)
    return request.get_header("Cookie") or request.unredirected_hdrs.get("Cookie")


_DIGEST_HASHES = {"MD5": hashlib.md5, "SHA-256": hashlib.sha256}


def _digest_authorization(response, method: str, url: str, username: str, password: str) -> str | None:
    """The Authorization header answering the response's Digest challenge (None: no usable challenge)."""
    for challenge in response.headers.getlist("WWW-Authenticate"):
        scheme, _, rest = challenge.strip().partition(" ")
        if scheme.lower() != "digest":
            continue
        params = urllib.request.parse_keqv_list(urllib.request.parse_http_list(rest))
        algorithm = params.get("algorithm", "MD5")
        base = algorithm.upper().removesuffix("-SESS")
        hash_function = _DIGEST_HASHES.get(base)
        qops = [qop.strip() for qop in params.get("qop", "").split(",") if qop.strip()]
        if hash_function is None or "nonce" not in params or (qops and "auth" not in qops):
            continue

        def digest(text: str, hash_function=hash_function) -> str:
            return hash_function(text.encode("utf-8")).hexdigest()

        realm, nonce = params.get("realm", ""), params["nonce"]
        parts = urlsplit(url)
        uri = parts.path or "/"
        if parts.query:
            uri += "?" + parts.query
        cnonce = secrets.token_hex(8)
        ha1 = digest(f"{username}:{realm}:{password}")
        if algorithm.upper().endswith("-SESS"):
            ha1 = digest(f"{ha1}:{nonce}:{cnonce}")
        ha2 = digest(f"{method}:{uri}")
        fields = [f'username="{_quote(username)}"', f'realm="{_quote(realm)}"', f'nonce="{_quote(nonce)}"',
                  f'uri="{uri}"', f"algorithm={algorithm}"]
        if qops:
            answer = digest(f"{ha1}:{nonce}:00000001:{cnonce}:auth:{ha2}")
            fields += ["qop=auth", "nc=00000001", f'cnonce="{cnonce}"']
        else:
            answer = digest(f"{ha1}:{nonce}:{ha2}")
        fields.append(f'response="{answer}"')
        if "opaque" in params:
            fields.append(f'opaque="{_quote(params["opaque"])}"')
        return "Digest " + ", ".join(fields)
    return None


class _Refused(Exception):
    """A connection the confinement policy refused (not an OSError, so urllib3 does not wrap it)."""

    def __init__(self, refusal: ConfinementError) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


def _pool_classes(write_timeout: float, policy: Policy) -> dict[str, type]:
    """Connection pool classes whose connections go through ``policy`` and write the request
    under ``write_timeout`` (urllib3 itself bounds writes by the connect timeout)."""

    class WriteTimeout:
        def _new_conn(self):
            try:
                sock = policy.connect(self._dns_host, self.port, self.timeout, self.source_address)
            except ConfinementError as refusal:
                raise _Refused(refusal) from None
            except socket.gaierror as error:
                raise NameResolutionError(self.host, self, error) from error
            except TimeoutError as error:
                raise ConnectTimeoutError(self, f"Connection to {self.host} timed out. (connect timeout="
                                                f"{self.timeout})") from error
            except OSError as error:
                raise NewConnectionError(self, f"Failed to establish a new connection: {error}") from error
            for option in self.socket_options or ():
                sock.setsockopt(*option)
            return sock

        def request(self, method, url, body=None, headers=None, **kwargs):
            if self.sock is None:
                self.connect()  # under the connect timeout the pool has set
            self.timeout = write_timeout
            super().request(method, url, body=body, headers=headers, **kwargs)

    class HTTPConnection(WriteTimeout, urllib3.connection.HTTPConnection):
        pass

    class HTTPSConnection(WriteTimeout, urllib3.connection.HTTPSConnection):
        pass

    class HTTPConnectionPool(urllib3.HTTPConnectionPool):
        ConnectionCls = HTTPConnection

    class HTTPSConnectionPool(urllib3.HTTPSConnectionPool):
        ConnectionCls = HTTPSConnection

    return {"http": HTTPConnectionPool, "https": HTTPSConnectionPool}
