"""What ConsumeAMQP and PublishAMQP share: NiFi's connection properties, the message attributes,
and connections to an AMQP 0.9.1 broker (pika) made through the processor's confinement policy."""

from __future__ import annotations

import logging
import socket
import threading
from collections import deque
from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar

import pika
import pika.exceptions

from engine.components import ExpressionScope, PropertyDescriptor
from engine.components import validators as v
from engine.confinement import ConfinementError, Policy
from engine.services.apis import SSLContextProvider

_ENV = ExpressionScope.ENVIRONMENT

# pika logs every connection step, and each failure with a traceback; the processors report
# what matters (which broker, why, what happens next) in their own bulletins.
logging.getLogger("pika").setLevel(logging.CRITICAL)

APP_ID = "amqp$appId"
CONTENT_ENCODING = "amqp$contentEncoding"
CONTENT_TYPE = "amqp$contentType"
HEADERS = "amqp$headers"
DELIVERY_MODE = "amqp$deliveryMode"
PRIORITY = "amqp$priority"
CORRELATION_ID = "amqp$correlationId"
REPLY_TO = "amqp$replyTo"
EXPIRATION = "amqp$expiration"
MESSAGE_ID = "amqp$messageId"
TIMESTAMP = "amqp$timestamp"
TYPE = "amqp$type"
USER_ID = "amqp$userId"
CLUSTER_ID = "amqp$clusterId"
ROUTING_KEY = "amqp$routingKey"
EXCHANGE = "amqp$exchange"
REDELIVERED = "amqp$redelivered"

#: Message properties carried as attributes: (attribute, pika field, description).
PROPERTY_ATTRIBUTES = (
    (APP_ID, "app_id", "The App ID field of the AMQP message"),
    (CONTENT_ENCODING, "content_encoding", "The content encoding of the AMQP message"),
    (CONTENT_TYPE, "content_type", "The content type of the AMQP message"),
    (DELIVERY_MODE, "delivery_mode", "The numeric delivery mode of the message (1 transient, 2 persistent)"),
    (PRIORITY, "priority", "The message priority"),
    (CORRELATION_ID, "correlation_id", "The message's correlation ID"),
    (REPLY_TO, "reply_to", "The message's Reply-To field"),
    (EXPIRATION, "expiration", "The message expiration"),
    (MESSAGE_ID, "message_id", "The unique ID of the message"),
    (TIMESTAMP, "timestamp", "The timestamp of the message, in milliseconds since the epoch"),
    (TYPE, "type", "The type of the message"),
    (USER_ID, "user_id", "The ID of the user"),
    (CLUSTER_ID, "cluster_id", "The ID of the AMQP cluster"),
)

BROKERS = PropertyDescriptor(
    "Brokers", description="Comma-separated host:port addresses of brokers of one AMQP cluster, tried in turn "
    "(localhost:5672). When set, Host Name and Port are ignored.", expression_language=_ENV,
    validators=[v.NON_EMPTY])
HOST = PropertyDescriptor(
    "Host Name", description="The broker's address; ignored when Brokers is set.", default="localhost",
    expression_language=_ENV, validators=[v.NON_EMPTY])
PORT = PropertyDescriptor(
    "Port", description="The broker's port; ignored when Brokers is set.", default="5672", expression_language=_ENV,
    validators=[v.PORT])
VIRTUAL_HOST = PropertyDescriptor(
    "Virtual Host", description="The virtual host to use (the broker's default, '/', when unset).",
    expression_language=_ENV, validators=[v.NON_EMPTY])
USERNAME = PropertyDescriptor(
    "Username", description="The user to authenticate as.", expression_language=_ENV, validators=[v.NON_EMPTY])
PASSWORD = PropertyDescriptor("Password", description="The user's password.", sensitive=True,
                              validators=[v.NON_EMPTY])
AMQP_VERSION = PropertyDescriptor(
    "AMQP Version", description="The AMQP protocol version; only 0.9.1 is supported.", required=True,
    default="0.9.1", allowed_values=["0.9.1"])
SSL_CONTEXT_SERVICE = PropertyDescriptor(
    "SSL Context Service", description="Makes the connection TLS, with this service's key and trust material.",
    service=SSLContextProvider)
CERT_AUTHENTICATION = PropertyDescriptor(
    "Client Certificate Authentication Enabled", description="Authenticate with the TLS client certificate "
    "(SASL EXTERNAL) instead of a user name and password.", default="false", allowed_values=["true", "false"])
MAX_INBOUND_BODY_SIZE = PropertyDescriptor(
    "Max Inbound Message Body Size", description="The largest message body accepted from the broker.",
    required=True, default="64 MB", expression_language=_ENV, validators=[v.DATA_SIZE])

COMMON_PROPERTIES = (BROKERS, HOST, PORT, VIRTUAL_HOST, USERNAME, PASSWORD, AMQP_VERSION, SSL_CONTEXT_SERVICE,
                     CERT_AUTHENTICATION)

#: NiFi 1.x names of the common properties.
MIGRATED_PROPERTIES = {"User Name": USERNAME.name, "ssl-context-service": SSL_CONTEXT_SERVICE.name,
                       "cert-authentication": CERT_AUTHENTICATION.name}


def validate_authentication(context) -> Iterator[str]:
    """NiFi's rule: a user name with a password, or client-certificate authentication over TLS."""
    user = context.property(USERNAME).is_set()
    password = context.property(PASSWORD).is_set()
    certificate = context.property(CERT_AUTHENTICATION).value == "true"
    if certificate and (user or password):
        yield (f"'{USERNAME.name}' with '{PASSWORD.name}' and '{CERT_AUTHENTICATION.name}' cannot be configured "
               "at the same time")
    if not certificate and not (user and password):
        yield f"either '{USERNAME.name}' with '{PASSWORD.name}' or '{CERT_AUTHENTICATION.name}' must be configured"
    if certificate and not context.property(SSL_CONTEXT_SERVICE).is_set():
        yield f"'{CERT_AUTHENTICATION.name}' has been set but no '{SSL_CONTEXT_SERVICE.name}' configured"


class BrokerError(Exception):
    """The broker cannot be reached or refused the connection; the message says which and why."""


def brokers(context) -> list[tuple[str, int]]:
    """The (host, port) pairs to try, in order."""
    listed = context.property(BROKERS).evaluate().value
    if listed:
        found = []
        for item in listed.split(","):
            host, _, port = item.strip().rpartition(":")
            if not host or not port.isdigit():
                raise BrokerError(f"'{BROKERS.name}' holds {item.strip()!r}, which is not host:port")
            found.append((host.strip("[]"), int(port)))
        return found
    return [(context.property(HOST).evaluate().value, int(context.property(PORT).evaluate().value))]


def connect(context, policy: Policy) -> tuple[pika.BlockingConnection, str]:
    """A connection to the first broker that answers, and its address (for transit URIs).

    Every address a broker's name resolves to is checked against ``policy`` and only an address
    it allows is connected to (pika is handed the checked IP, and the name for TLS). Raises
    ConfinementError when every address is refused, BrokerError when none answers.
    """
    ssl_service = context.property(SSL_CONTEXT_SERVICE)
    tls = ssl_service.as_service().create_context() if ssl_service.is_set() else None
    if context.property(CERT_AUTHENTICATION).value == "true":
        credentials = pika.credentials.ExternalCredentials()
    else:
        credentials = pika.PlainCredentials(context.property(USERNAME).evaluate().value or "",
                                            context.property(PASSWORD).value or "")
    virtual_host = context.property(VIRTUAL_HOST).evaluate().value or "/"
    refusals: list[ConfinementError] = []
    failures: list[str] = []
    for host, port in brokers(context):
        try:
            addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as error:
            failures.append(f"{host}:{port}: {error}")
            continue
        for *_, sockaddr in addresses:
            reason = policy.address_refusal(host, sockaddr[0], port)
            if reason is not None:
                refusals.append(ConfinementError(f"{host}:{port}", reason))
                continue
            parameters = pika.ConnectionParameters(
                host=sockaddr[0], port=port, virtual_host=virtual_host, credentials=credentials,
                ssl_options=pika.SSLOptions(tls, server_hostname=host) if tls is not None else None,
                connection_attempts=1, socket_timeout=10, stack_timeout=15, blocked_connection_timeout=60,
                client_properties={"connection_name": "Flowsite"})
            try:
                return pika.BlockingConnection(parameters), f"{host}:{port}"
            except pika.exceptions.ProbableAuthenticationError as error:
                failures.append(f"{host}:{port}: the broker refused the credentials ({error})")
            except pika.exceptions.ProbableAccessDeniedError as error:
                failures.append(f"{host}:{port}: access to virtual host {virtual_host!r} denied ({error})")
            except (pika.exceptions.AMQPError, OSError) as error:
                failures.append(f"{host}:{port}: {describe(error)}")
    if refusals and not failures:
        raise refusals[0]
    raise BrokerError("cannot connect to the AMQP broker: " + "; ".join(failures + [str(r) for r in refusals]))


def describe(error: BaseException) -> str:
    """A readable reason for a pika or socket error (pika's own texts are often empty)."""
    inner = getattr(error, "exception", None)  # pika's connector errors wrap the socket's
    if inner is None and getattr(error, "exceptions", None):
        inner = error.exceptions[-1]
    if inner is None and error.args and isinstance(error.args[0], BaseException):
        inner = error.args[0]
    if isinstance(inner, BaseException):
        return describe(inner)
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def close_quietly(connection: pika.BlockingConnection) -> None:
    """Close ``connection`` if it is open; a connection already broken has nothing left to close."""
    try:
        if connection.is_open:
            connection.close()
    except Exception:
        pass



class _Pooled(Protocol):
    connection: pika.BlockingConnection
    broker: str

    @property
    def is_open(self) -> bool: ...

    def close(self) -> None: ...


P = TypeVar("P", bound=_Pooled)


class IdleConnections(Generic[P]):
    """A processor's idle broker connections (consumers or publishers), shared by its tasks."""

    def __init__(self) -> None:
        self._idle: deque[P] = deque()
        self._lock = threading.Lock()

    def take(self, logger) -> P | None:
        """An idle connection still alive, or None; dead ones (idle past the heartbeat timeout, or
        cut by a broker restart) are closed on the way, without an error bulletin."""
        while True:
            with self._lock:
                if not self._idle:
                    return None
                item = self._idle.popleft()
            if is_alive(item.connection) and item.is_open:
                return item
            logger.info("the idle connection to AMQP broker %s was closed; reconnecting", item.broker)
            item.close()

    def give_back(self, item: P) -> None:
        """Keep ``item`` for the next task, or close it if its channel or connection is gone."""
        if not item.is_open:
            item.close()
            return
        with self._lock:
            self._idle.append(item)

    def close_all(self) -> None:
        """Close every idle connection (the processor stops)."""
        with self._lock:
            idle, self._idle = list(self._idle), deque()
        for item in idle:
            item.close()

def is_alive(connection: pika.BlockingConnection) -> bool:
    """Whether a pooled connection still works: its pending I/O (heartbeats, closes) is handled first."""
    try:
        connection.process_data_events(time_limit=0)
    except (pika.exceptions.AMQPError, OSError):
        return False
    return connection.is_open
