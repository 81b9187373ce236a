"""What ConsumeMQTT and PublishMQTT share: NiFi's connection properties and an MQTT client
(paho-mqtt 2) whose every connection, reconnections included, goes through the processor's
confinement policy."""

from __future__ import annotations

import threading
import uuid
from urllib.parse import urlsplit

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from engine.components import AllowableValue, ExpressionScope, PropertyDependency, PropertyDescriptor
from engine.components import validators as v
from engine.confinement import ConfinementError, Policy
from engine.services.apis import SSLContextProvider
from engine.units import parse_duration

_ENV = ExpressionScope.ENVIRONMENT

QOS_VALUES = (
    AllowableValue("0", "0 - At most once", "Best effort: the message is neither acknowledged nor sent again."),
    AllowableValue("1", "1 - At least once", "The message is sent until acknowledged; it may arrive twice."),
    AllowableValue("2", "2 - Exactly once", "A two-step handshake delivers the message once."),
)
VERSION_AUTO = AllowableValue("0", "v3 AUTO", "Start with v3.1.1 and fall back to v3.1.0 if the broker refuses it")
VERSION_5 = AllowableValue("5", "v5.0")
VERSION_311 = AllowableValue("4", "v3.1.1")
VERSION_310 = AllowableValue("3", "v3.1.0")
CLEAN_SESSION = AllowableValue(
    "true", "Clean Session", "Client and broker discard any previous session and start a new one, which lasts as "
    "long as the connection.")
RESUME_SESSION = AllowableValue(
    "false", "Resume Session", "The broker keeps the session (of this Client ID) across disconnections, and stores "
    "the QoS 1 and 2 messages of its subscriptions meanwhile.")

BROKER_URI = PropertyDescriptor(
    "Broker URI", description="The broker's URI (tcp://localhost:1883; ssl://... with an SSL Context Service); "
    "with a comma-separated list the next URI is tried when a connection fails.", required=True,
    expression_language=_ENV, validators=[v.NON_EMPTY])
MQTT_VERSION = PropertyDescriptor(
    "MQTT Specification Version", description="The MQTT version to connect with.", required=True,
    default=VERSION_AUTO.value, allowed_values=[VERSION_AUTO, VERSION_5, VERSION_311, VERSION_310])
USERNAME = PropertyDescriptor("Username", description="The user to connect as.", expression_language=_ENV,
                              validators=[v.NON_EMPTY])
PASSWORD = PropertyDescriptor("Password", description="The user's password.", sensitive=True,
                              validators=[v.NON_EMPTY])
SSL_CONTEXT_SERVICE = PropertyDescriptor(
    "SSL Context Service", description="Key and trust material for ssl:// brokers.", service=SSLContextProvider)
SESSION_STATE = PropertyDescriptor(
    "Session State", description="Whether to start a fresh session or resume the previous one.", required=True,
    default=CLEAN_SESSION.value, allowed_values=[CLEAN_SESSION, RESUME_SESSION])
SESSION_EXPIRY = PropertyDescriptor(
    "Session Expiry Interval", description="With MQTT 5 and a resumed session: how long the broker keeps the "
    "session after a disconnection.", default="24 hrs", validators=[v.TIME_PERIOD],
    depends_on=[PropertyDependency(MQTT_VERSION.name, (VERSION_5.value,)),
                PropertyDependency(SESSION_STATE.name, (RESUME_SESSION.value,))])
CLIENT_ID = PropertyDescriptor(
    "Client ID", description="The MQTT client ID (a random UUID when unset; set it to resume sessions).",
    expression_language=_ENV, validators=[v.NON_EMPTY])
CONNECTION_TIMEOUT = PropertyDescriptor(
    "Connection Timeout", description="Seconds to wait for the connection to the broker.", default="30",
    validators=[v.POSITIVE_INTEGER])
KEEP_ALIVE = PropertyDescriptor(
    "Keep Alive", description="The most seconds between packets; the client pings the broker when idle.",
    default="60", validators=[v.POSITIVE_INTEGER])
LAST_WILL_MESSAGE = PropertyDescriptor("Last Will Message", description="The message the broker publishes when "
                                       "this client disconnects without saying goodbye.", validators=[v.NON_EMPTY])
_WILL = [PropertyDependency(LAST_WILL_MESSAGE.name)]
LAST_WILL_TOPIC = PropertyDescriptor("Last Will Topic", description="The topic of the Last Will.", required=True,
                                     validators=[v.NON_EMPTY], depends_on=_WILL)
LAST_WILL_RETAIN = PropertyDescriptor("Last Will Retain", description="Whether the Last Will is retained.",
                                      required=True, default="false", allowed_values=["true", "false"],
                                      depends_on=_WILL)
LAST_WILL_QOS = PropertyDescriptor("Last Will QoS Level", description="The QoS of the Last Will.", required=True,
                                   default="0", allowed_values=QOS_VALUES, depends_on=_WILL)

CONNECTION_PROPERTIES = (BROKER_URI, MQTT_VERSION, USERNAME, PASSWORD, SSL_CONTEXT_SERVICE, SESSION_STATE,
                         SESSION_EXPIRY, CLIENT_ID)
TAIL_PROPERTIES = (CONNECTION_TIMEOUT, KEEP_ALIVE, LAST_WILL_MESSAGE, LAST_WILL_TOPIC, LAST_WILL_RETAIN, LAST_WILL_QOS)

#: NiFi 1.x names.
MIGRATED_PROPERTIES = {"Connection Timeout (seconds)": CONNECTION_TIMEOUT.name,
                       "Keep Alive Interval (seconds)": KEEP_ALIVE.name, "Session state": SESSION_STATE.name,
                       "message-demarcator": "Message Demarcator"}


def validate(context):
    """Problems NiFi reports: half-set credentials, URIs Flowsite cannot use."""
    if context.property(USERNAME).is_set() != context.property(PASSWORD).is_set():
        yield "Username and Password: if username or password is set, both must be set."
    uris = context.property(BROKER_URI).evaluate().value or ""
    for uri in filter(None, (u.strip() for u in uris.split(","))):
        problem = _uri_problem(uri, context.property(SSL_CONTEXT_SERVICE).is_set())
        if problem:
            yield f"'{BROKER_URI.name}' {problem}"


def _uri_problem(uri: str, has_ssl: bool) -> str | None:
    parts = urlsplit(uri)
    if parts.scheme not in ("tcp", "ssl"):
        return f"{uri!r}: the scheme must be tcp or ssl (Flowsite does not connect over WebSockets)"
    if not parts.hostname:
        return f"{uri!r} names no host"
    if parts.scheme == "ssl" and not has_ssl:
        return f"{uri!r} is ssl:// but no SSL Context Service is set"
    return None


class _ConfinedClient(paho.Client):
    """A paho client whose TCP connections are made by the confinement policy."""

    def __init__(self, policy: Policy, **kwargs) -> None:
        super().__init__(**kwargs)
        self._policy = policy

    def _create_socket_connection(self):  # paho's one place that opens the TCP connection
        return self._policy.connect(self._host, self._port, self._connect_timeout)


class BrokerError(Exception):
    """The broker could not be reached or refused the connection; the message says which and why."""


class Connection:
    """A connected MQTT client running its network loop in a thread of its own; paho reconnects
    it (through the policy) when the connection drops. ``on_connect(client, session_present)``
    runs after each CONNACK that accepts the connection (in paho's thread)."""

    def __init__(self, context, policy: Policy, *, manual_ack: bool = False, on_message=None,
                 on_connect=None) -> None:
        self.uris = [u.strip() for u in context.property(BROKER_URI).evaluate().value.split(",") if u.strip()]
        self.broker = self.uris[0]
        self._context = context
        self._policy = policy
        self._manual_ack = manual_ack
        self._on_message = on_message
        self._on_connect = on_connect
        self._connacked = threading.Event()
        self._refusal: str | None = None
        self.client: paho.Client | None = None
        self._closing = False
        self.client_id = context.property(CLIENT_ID).evaluate().value or str(uuid.uuid4())

    def open(self) -> None:
        """Connect to the first URI that accepts; raises BrokerError (or ConfinementError)."""
        failures = []
        version = self._context.property(MQTT_VERSION).value
        protocols = {"0": [paho.MQTTv311, paho.MQTTv31], "5": [paho.MQTTv5], "4": [paho.MQTTv311],
                     "3": [paho.MQTTv31]}[version]
        for uri in self.uris:
            for protocol in protocols:
                try:
                    self._open(uri, protocol)
                    self.broker = uri
                    return
                except BrokerError as error:
                    failures.append(f"{uri}: {error}")
                    if "protocol version" not in str(error):
                        break
                except ConfinementError:
                    raise
                except OSError as error:
                    failures.append(f"{uri}: {error}")
                    break
        raise BrokerError("cannot connect to the MQTT broker: " + "; ".join(failures))

    def _open(self, uri: str, protocol) -> None:
        context = self._context
        parts = urlsplit(uri)
        clean = context.property(SESSION_STATE).value == CLEAN_SESSION.value
        client = _ConfinedClient(self._policy, callback_api_version=CallbackAPIVersion.VERSION2,
                                 client_id=self.client_id, protocol=protocol, manual_ack=self._manual_ack,
                                 clean_session=None if protocol == paho.MQTTv5 else clean)
        client.connect_timeout = float(context.property(CONNECTION_TIMEOUT).value)
        if context.property(USERNAME).is_set():
            client.username_pw_set(context.property(USERNAME).evaluate().value, context.property(PASSWORD).value)
        if parts.scheme == "ssl":
            client.tls_set_context(context.property(SSL_CONTEXT_SERVICE).as_service().create_context())
        if context.property(LAST_WILL_MESSAGE).is_set():
            client.will_set(context.property(LAST_WILL_TOPIC).value, context.property(LAST_WILL_MESSAGE).value,
                            int(context.property(LAST_WILL_QOS).value),
                            context.property(LAST_WILL_RETAIN).value == "true")
        client.reconnect_delay_set(1, 8)
        client.on_connect = self._connected
        client.on_disconnect = self._disconnected
        if self._on_message is not None:
            client.on_message = lambda client, userdata, message: self._on_message(message)
        properties = None
        if protocol == paho.MQTTv5 and not clean:
            properties = Properties(PacketTypes.CONNECT)
            properties.SessionExpiryInterval = int(parse_duration(context.property(SESSION_EXPIRY).value))
        self._connacked.clear()
        self._refusal = None
        client.connect(parts.hostname, parts.port or (8883 if parts.scheme == "ssl" else 1883),
                       keepalive=int(context.property(KEEP_ALIVE).value),
                       clean_start=clean if protocol == paho.MQTTv5 else paho.MQTT_CLEAN_START_FIRST_ONLY,
                       properties=properties)
        client.loop_start()
        if not self._connacked.wait(client.connect_timeout) or self._refusal is not None:
            reason = self._refusal or f"no CONNACK within {client.connect_timeout:g} s"
            client.loop_stop()
            client.disconnect()
            raise BrokerError(reason)
        self.client = client

    def _connected(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            self._refusal = f"the broker refused the connection: {reason_code}"
            client.disconnect()
        elif self._on_connect is not None:
            self._on_connect(client, flags.session_present)
        self._connacked.set()

    def _disconnected(self, client, userdata, flags, reason_code, properties) -> None:
        if self.client is client and not self._closing:
            self._context.logger.warning("lost the connection to MQTT broker %s (%s); reconnecting", self.broker,
                                         reason_code)

    @property
    def is_connected(self) -> bool:
        return self.client is not None and self.client.is_connected()

    def close(self) -> None:
        self._closing = True
        if self.client is not None:
            self.client.disconnect()
            self.client.loop_stop()
            self.client = None


def error_text(code: MQTTErrorCode | int) -> str:
    """paho's text for an error code."""
    return paho.error_string(code)
