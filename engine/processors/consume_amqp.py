"""ConsumeAMQP: one FlowFile per message of an AMQP 0.9.1 queue, acknowledged after the commit."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field

import pika
import pika.exceptions

from engine.components import (
    AllowableValue,
    InputRequirement,
    Processor,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.confinement import ConfinementError
from engine.processors import _amqp

COMMA_SEPARATED = AllowableValue(
    "Comma-Separated String", "Comma-Separated String",
    "All headers in one string in the attribute 'amqp$headers', separated by Header Separator.")
JSON_STRING = AllowableValue(
    "JSON String", "JSON String", "All headers as a JSON object in the attribute 'amqp$headers', null values included.")
ATTRIBUTES = AllowableValue(
    "FlowFile Attributes", "FlowFile Attributes", "Each header as an attribute named Header Key Prefix + '.' + key.")

QUEUE = PropertyDescriptor(
    "Queue", description="The existing queue to consume from.", required=True, validators=[v.NON_EMPTY])
AUTO_ACKNOWLEDGE = PropertyDescriptor(
    "Auto-Acknowledge Messages", description="false: each message is acknowledged once the session holding its "
    "FlowFile has committed (at least once: a crash before the commit has the broker deliver it again). true: the "
    "broker forgets a message as soon as it sends it (at most once: a crash or restart may lose messages).",
    required=True, default="false", allowed_values=["true", "false"])
BATCH_SIZE = PropertyDescriptor(
    "Batch Size", description="The most messages taken into one session (and acknowledged together).", required=True,
    default="10", validators=[v.POSITIVE_INTEGER])
PREFETCH_COUNT = PropertyDescriptor(
    "Prefetch Count", description="The most unacknowledged messages the broker sends this consumer (0: no limit).",
    required=True, default="0", validators=[v.integer_range(0, 65535)])
HEADER_FORMAT = PropertyDescriptor(
    "Header Output Format", description="How the message's headers are written.", required=True,
    default=COMMA_SEPARATED.value, allowed_values=[COMMA_SEPARATED, JSON_STRING, ATTRIBUTES])
HEADER_KEY_PREFIX = PropertyDescriptor(
    "Header Key Prefix", description="Put before each header key (with a '.') to name its attribute.", required=True,
    default="consume.amqp", validators=[v.NON_EMPTY], depends_on=[PropertyDependency(HEADER_FORMAT.name,
                                                                                     (ATTRIBUTES.value,))])
HEADER_SEPARATOR = PropertyDescriptor(
    "Header Separator", description="The one character between key=value pairs in 'amqp$headers'.", default=",",
    validators=[lambda value, context: None if len(value) == 1 else "must be exactly one character"],
    depends_on=[PropertyDependency(HEADER_FORMAT.name, (COMMA_SEPARATED.value,))])
REMOVE_CURLY_BRACES = PropertyDescriptor(
    "Remove Curly Braces", description="True: 'amqp$headers' is not wrapped in curly braces.", default="False",
    allowed_values=["True", "False"], depends_on=[PropertyDependency(HEADER_FORMAT.name, (COMMA_SEPARATED.value,))])

_WAIT = 0.05  # seconds

SUCCESS = Relationship("success", "All FlowFiles that are received from the AMQP queue are routed to this relationship")


@dataclass
class _Consumer:
    """A connection, its channel subscribed to the queue, and the deliveries not yet taken."""

    connection: pika.BlockingConnection
    channel: object
    broker: str
    pending: deque = field(default_factory=deque)
    last_tag: int = 0

    @property
    def is_open(self) -> bool:
        return self.connection.is_open and self.channel.is_open

    def close(self) -> None:
        # Deliveries never acknowledged go back to the queue when the connection closes.
        _amqp.close_quietly(self.connection)


class ConsumeAMQP(Processor):
    """Consumes messages from an AMQP 0.9.1 broker (RabbitMQ): each message becomes a FlowFile on 'success'.

    Without Auto-Acknowledge, the messages of a task are acknowledged to the broker (one
    ``basic.ack`` with ``multiple``) only after the session that holds their FlowFiles has
    committed, so a node that dies before the commit loses nothing: the broker delivers the
    messages again. A node that dies between the commit and the acknowledgement gets them again
    too (at least once). A session rolled back returns its messages to the queue at once. The
    connection is made through the tenant's network policy; a refused or unreachable broker is
    an error bulletin and the processor yields, then reconnects. Bodies larger than Max Inbound
    Message Body Size are rejected back to the broker (dead-lettered where the queue has a
    dead-letter exchange) with an error bulletin.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.amqp.processors.ConsumeAMQP"
    tags = ("amqp", "rabbit", "get", "message", "receive", "consume")
    properties = (QUEUE, AUTO_ACKNOWLEDGE, BATCH_SIZE, PREFETCH_COUNT, HEADER_FORMAT, HEADER_KEY_PREFIX,
                  HEADER_SEPARATOR, REMOVE_CURLY_BRACES, _amqp.MAX_INBOUND_BODY_SIZE, *_amqp.COMMON_PROPERTIES)
    migrated_properties = {**_amqp.MIGRATED_PROPERTIES, "auto.acknowledge": AUTO_ACKNOWLEDGE.name,
                           "batch.size": BATCH_SIZE.name, "prefetch.count": PREFETCH_COUNT.name,
                           "header.format": HEADER_FORMAT.name, "header.key.prefix": HEADER_KEY_PREFIX.name,
                           "header.separator": HEADER_SEPARATOR.name, "remove.curly.braces": REMOVE_CURLY_BRACES.name}
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.FORBIDDEN
    trigger_when_empty = True
    writes_attributes = (
        *(WrittenAttribute(name, description) for name, _, description in _amqp.PROPERTY_ATTRIBUTES),
        WrittenAttribute(_amqp.HEADERS,
                         "The message's headers, when Header Output Format writes them to one attribute"),
        WrittenAttribute("<Header Key Prefix>.<key>", "Each header, when Header Output Format is FlowFile Attributes"),
        WrittenAttribute(_amqp.ROUTING_KEY, "The routing key of the message"),
        WrittenAttribute(_amqp.EXCHANGE, "The exchange the message came through"),
        WrittenAttribute(_amqp.REDELIVERED, "true when the broker delivered the message before (to a consumer that "
                                            "died or rolled back): it may be a duplicate (Flowsite's addition)"),
    )
    see_also = ("PublishAMQP",)

    def validate(self, context):
        yield from _amqp.validate_authentication(context)

    def on_scheduled(self, context):
        self._idle: _amqp.IdleConnections[_Consumer] = _amqp.IdleConnections()
        self._sessions: dict[int, _Consumer] = {}
        self._queue = context.property(QUEUE).value
        self._auto_ack = context.property(AUTO_ACKNOWLEDGE).value == "true"
        self._batch = context.property(BATCH_SIZE).as_int()
        self._prefetch = context.property(PREFETCH_COUNT).as_int()
        self._max_body = context.property(_amqp.MAX_INBOUND_BODY_SIZE).evaluate().as_data_size()
        self._format = context.property(HEADER_FORMAT).value
        self._prefix = context.property(HEADER_KEY_PREFIX).value
        self._separator = context.property(HEADER_SEPARATOR).value or ","
        self._braces = context.property(REMOVE_CURLY_BRACES).value != "True"

    def on_stopped(self, context):
        self._idle.close_all()

    def on_trigger(self, context, session):
        # With a Run Duration one session spans several triggers: they share its consumer, and
        # the session's commit acknowledges everything they took.
        consumer = self._sessions.get(id(session)) or self._borrow(context)
        if consumer is None:
            return
        try:
            consumer.connection.process_data_events(time_limit=0)
            if not consumer.pending:
                # One poll reads one chunk (128 KB) of the socket: give a large message, or one on its
                # way, a moment to arrive whole (pika returns as soon as a delivery is complete).
                consumer.connection.process_data_events(time_limit=_WAIT)
            taken = []
            while consumer.pending and len(taken) < self._batch:
                taken.append(consumer.pending.popleft())
        except (pika.exceptions.AMQPError, OSError) as error:
            context.logger.error("lost the connection to AMQP broker %s (%s); the messages not acknowledged will "
                                 "be delivered again after reconnecting", consumer.broker, _amqp.describe(error))
            consumer.close()
            context.yield_processor()
            return
        if not taken:
            if id(session) not in self._sessions:
                self._idle.give_back(consumer)
                context.yield_processor()
            return
        consumer.last_tag = taken[-1][0].delivery_tag
        if id(session) not in self._sessions:
            # Registered before anything can fail: a failure rolls the session back, which requeues.
            key = id(session)
            self._sessions[key] = consumer
            session.on_commit(lambda: self._acknowledge(context, self._sessions.pop(key)))
            session.on_rollback(lambda: self._requeue(self._sessions.pop(key)))
        for method, properties, body in self._reject_oversized(context, consumer, taken):
            flowfile = session.write_bytes(session.create(), body)
            flowfile = session.put_all_attributes(flowfile, self._attributes(method, properties))
            session.provenance.receive(flowfile, f"amqp://{consumer.broker}/{self._queue}")
            session.transfer(flowfile, SUCCESS)

    # -- consumers ------------------------------------------------------------------------

    def _borrow(self, context) -> _Consumer | None:
        consumer = self._idle.take(context.logger)  # a dead one's deliveries went back to the queue
        if consumer is not None:
            return consumer
        try:
            connection, broker = _amqp.connect(context, context.confinement)
        except ConfinementError as error:
            context.logger.error("%s; ask the platform operator to open this address to the tenant",
                                 context.refused(error))
            context.yield_processor()
            return None
        except _amqp.BrokerError as error:
            context.logger.error("%s; retrying after the yield duration", error)
            context.yield_processor()
            return None
        consumer = _Consumer(connection, None, broker)
        try:
            consumer.channel = connection.channel()
            consumer.channel.basic_qos(prefetch_count=self._prefetch)
            consumer.channel.basic_consume(
                self._queue, lambda channel, method, properties, body: consumer.pending.append(
                    (method, properties, body)), auto_ack=self._auto_ack)
        except (pika.exceptions.AMQPError, OSError) as error:
            consumer.close()
            context.logger.error("cannot consume from queue %r on AMQP broker %s: %s", self._queue, broker,
                                 _amqp.describe(error))
            context.yield_processor()
            return None
        context.logger.info("consuming from queue %r on AMQP broker %s", self._queue, broker)
        return consumer

    def _acknowledge(self, context, consumer: _Consumer) -> None:
        last_tag = consumer.last_tag
        if not self._auto_ack:
            try:
                consumer.channel.basic_ack(delivery_tag=last_tag, multiple=True)
            except (pika.exceptions.AMQPError, OSError) as error:
                context.logger.warning(
                    "could not acknowledge messages up to delivery tag %d to AMQP broker %s (%s): their FlowFiles "
                    "are committed, and the broker will deliver them again (duplicates)", last_tag, consumer.broker,
                    _amqp.describe(error))
                consumer.close()
        self._idle.give_back(consumer)

    def _requeue(self, consumer: _Consumer) -> None:
        if not self._auto_ack:
            try:
                consumer.channel.basic_nack(delivery_tag=consumer.last_tag, multiple=True, requeue=True)
            except (pika.exceptions.AMQPError, OSError):
                consumer.close()  # closing the connection requeues them as well
        self._idle.give_back(consumer)

    def _reject_oversized(self, context, consumer: _Consumer, taken: list) -> list:
        accepted = []
        for delivery in taken:
            method, _, body = delivery
            if len(body) <= self._max_body:
                accepted.append(delivery)
                continue
            context.logger.error("rejected a message of %d bytes from queue %r (delivery tag %d): larger than %s "
                                 "(%d bytes)", len(body), self._queue, method.delivery_tag,
                                 _amqp.MAX_INBOUND_BODY_SIZE.name, self._max_body)
            if not self._auto_ack:
                try:
                    consumer.channel.basic_reject(delivery_tag=method.delivery_tag, requeue=False)
                except (pika.exceptions.AMQPError, OSError):
                    consumer.close()  # it goes back to the queue, and is refused again at its next delivery
        return accepted

    # -- attributes -----------------------------------------------------------------------

    def _attributes(self, method, properties) -> dict[str, str]:
        attributes = {}
        for name, field_name, _ in _amqp.PROPERTY_ATTRIBUTES:
            value = getattr(properties, field_name)
            if value is not None:
                attributes[name] = str(value * 1000 if name == _amqp.TIMESTAMP else value)
        attributes[_amqp.ROUTING_KEY] = method.routing_key
        attributes[_amqp.EXCHANGE] = method.exchange
        attributes[_amqp.REDELIVERED] = "true" if method.redelivered else "false"
        headers = properties.headers
        if headers is not None:
            if self._format == JSON_STRING.value:
                attributes[_amqp.HEADERS] = json.dumps(headers, default=_text, ensure_ascii=False)
            elif self._format == ATTRIBUTES.value:
                attributes.update({f"{self._prefix}.{key}": _text(value) for key, value in headers.items()
                                   if value is not None})
            else:
                text = self._separator.join(key if value is None else f"{key}={_text(value)}"
                                            for key, value in headers.items())
                attributes[_amqp.HEADERS] = "{" + text + "}" if self._braces else text
        return attributes


def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)
