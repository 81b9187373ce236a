"""PublishAMQP: sends each FlowFile's content as a message to an AMQP 0.9.1 exchange."""

from __future__ import annotations

import re

import pika
import pika.exceptions

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
from engine.confinement import ConfinementError
from engine.expression import ExpressionError
from engine.processors import _amqp

_FLOWFILE = ExpressionScope.FLOWFILE_ATTRIBUTES

AT_MOST_ONCE = AllowableValue(
    "AT_MOST_ONCE", "At most once", "The message is sent without waiting for the broker: an unroutable message is "
    "a warning and its FlowFile still goes to success.")
AT_LEAST_ONCE = AllowableValue(
    "AT_LEAST_ONCE", "At least once", "Publisher confirms: the FlowFile goes to success only once the broker "
    "has taken the message; a message the broker refuses or cannot route goes to failure.")
FROM_ATTRIBUTES = AllowableValue(
    "FLOWFILE_ATTRIBUTES", "FlowFile Attributes", "Headers are the attributes whose names match Headers Pattern.")
FROM_HEADERS_ATTRIBUTE = AllowableValue(
    "AMQP_HEADERS_ATTRIBUTE", "AMQP Headers Attribute", "Headers are read from the 'amqp$headers' attribute "
    "(key=value pairs split by Header Separator).")

EXCHANGE = PropertyDescriptor(
    "Exchange Name", description="The exchange to send to; empty: the default exchange, where the routing key "
    "names the queue.", required=True, default="", expression_language=_FLOWFILE)
ROUTING_KEY = PropertyDescriptor(
    "Routing Key", description="The routing key the exchange routes the message by (with the default exchange: "
    "the queue's name).", required=True, validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
DELIVERY_GUARANTEE = PropertyDescriptor(
    "Delivery Guarantee", description="Whether the processor waits for the broker's confirmation before routing "
    "the FlowFile.", required=True, default=AT_MOST_ONCE.value, allowed_values=[AT_MOST_ONCE, AT_LEAST_ONCE])
MAX_INPUT_SIZE = PropertyDescriptor(
    "Maximum Input FlowFile Size", description="FlowFiles larger than this go to failure unread (the content is "
    "held in memory to be sent).", required=True, default="128 MB", validators=[v.DATA_SIZE],
    expression_language=ExpressionScope.ENVIRONMENT)
HEADERS_SOURCE = PropertyDescriptor(
    "Headers Source", description="Where the message's headers come from.", required=True,
    default=FROM_HEADERS_ATTRIBUTE.value, allowed_values=[FROM_ATTRIBUTES, FROM_HEADERS_ATTRIBUTE])
HEADERS_PATTERN = PropertyDescriptor(
    "Headers Pattern", description="A regular expression; the attributes whose whole name matches become headers.",
    required=True, validators=[v.NON_EMPTY, v.REGEX], expression_language=ExpressionScope.ENVIRONMENT,
    depends_on=[PropertyDependency(HEADERS_SOURCE.name, (FROM_ATTRIBUTES.value,))])
HEADER_SEPARATOR = PropertyDescriptor(
    "Header Separator", description="The one character between key=value pairs in 'amqp$headers'.", default=",",
    validators=[lambda value, context: None if len(value) == 1 else "must be exactly one character"],
    depends_on=[PropertyDependency(HEADERS_SOURCE.name, (FROM_HEADERS_ATTRIBUTE.value,))])

SUCCESS = Relationship("success", "All FlowFiles that are sent to the AMQP destination are routed to this relationship")
FAILURE = Relationship("failure", "All FlowFiles that cannot be routed to the AMQP destination are routed to this "
                                  "relationship")


class _Publisher:
    """A connection and a channel to publish on."""

    def __init__(self, connection: pika.BlockingConnection, broker: str, confirms: bool, logger) -> None:
        self.connection = connection
        self.broker = broker
        self.channel = connection.channel()
        if confirms:
            self.channel.confirm_delivery()
        else:
            self.channel.add_on_return_callback(
                lambda channel, method, properties, body: logger.warning(
                    "AMQP broker %s returned a message as unroutable (exchange %r, routing key %r): %s %s",
                    broker, method.exchange, method.routing_key, method.reply_code, method.reply_text))

    @property
    def is_open(self) -> bool:
        return self.connection.is_open and self.channel.is_open

    def close(self) -> None:
        _amqp.close_quietly(self.connection)


class PublishAMQP(Processor):
    """Sends the content of each FlowFile as a message to an AMQP 0.9.1 exchange (RabbitMQ).

    The message's properties come from the FlowFile's ``amqp$...`` attributes (as ConsumeAMQP
    writes them; ``amqp$timestamp`` in milliseconds) and its headers from ``amqp$headers`` or
    from the attributes matching Headers Pattern. The exchange routes it by Routing Key; with
    Delivery Guarantee "At least once" the FlowFile goes to success only after the broker
    confirmed the message, and a message it cannot route goes to failure. A broker that cannot
    be reached (or that the tenant's network policy refuses) sends the FlowFile to failure with
    an error bulletin saying why, and the processor yields before it tries again.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.amqp.processors.PublishAMQP"
    tags = ("amqp", "rabbit", "put", "message", "send", "publish")
    properties = (EXCHANGE, ROUTING_KEY, DELIVERY_GUARANTEE, MAX_INPUT_SIZE, HEADERS_SOURCE, HEADERS_PATTERN,
                  HEADER_SEPARATOR, *_amqp.COMMON_PROPERTIES)
    migrated_properties = {**_amqp.MIGRATED_PROPERTIES, "header.separator": HEADER_SEPARATOR.name}
    relationships = (SUCCESS, FAILURE)
    input_requirement = InputRequirement.REQUIRED
    reads_attributes = (
        *(WrittenAttribute(name, description) for name, _, description in _amqp.PROPERTY_ATTRIBUTES),
        WrittenAttribute(_amqp.HEADERS, "The headers of the message, when Headers Source is AMQP Headers Attribute"),
    )
    see_also = ("ConsumeAMQP",)

    def validate(self, context):
        yield from _amqp.validate_authentication(context)

    def on_scheduled(self, context):
        self._idle: _amqp.IdleConnections[_Publisher] = _amqp.IdleConnections()
        self._confirms = context.property(DELIVERY_GUARANTEE).value == AT_LEAST_ONCE.value
        self._max_size = context.property(MAX_INPUT_SIZE).evaluate().as_data_size()
        self._from_attributes = context.property(HEADERS_SOURCE).value == FROM_ATTRIBUTES.value
        self._pattern = (re.compile(context.property(HEADERS_PATTERN).evaluate().value)
                         if self._from_attributes else None)
        self._separator = context.property(HEADER_SEPARATOR).value or ","

    def on_stopped(self, context):
        self._idle.close_all()

    def on_trigger(self, context, session):
        flowfile = session.get()
        if flowfile is None:
            return
        if flowfile.size > self._max_size:
            context.logger.warning("FlowFile %s of %d bytes is larger than %s (%d bytes): routed to failure",
                                   flowfile.uuid, flowfile.size, MAX_INPUT_SIZE.name, self._max_size)
            session.transfer(flowfile, FAILURE)
            return
        try:
            exchange = context.property(EXCHANGE).evaluate(flowfile).value or ""
            routing_key = context.property(ROUTING_KEY).evaluate(flowfile).value
        except ExpressionError as error:
            context.logger.error("cannot evaluate the exchange or routing key for %s: %s", flowfile.uuid, error)
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        if not routing_key:
            context.logger.error("the routing key of %s evaluates to nothing: routed to failure", flowfile.uuid)
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        properties = self._properties(context, flowfile)
        body = session.read_bytes(flowfile)
        publisher = self._borrow(context, flowfile)
        if publisher is None:
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        try:
            publisher.channel.basic_publish(exchange, routing_key, body, properties, mandatory=True)
        except pika.exceptions.UnroutableError:
            publisher.connection.process_data_events(time_limit=0)
            self._idle.give_back(publisher)
            context.logger.error("AMQP broker %s could not route %s (exchange %r, routing key %r; no queue bound): "
                                 "routed to failure", publisher.broker, flowfile.uuid, exchange, routing_key)
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        except pika.exceptions.NackError:
            self._idle.give_back(publisher)
            context.logger.error("AMQP broker %s refused %s (negative confirm): routed to failure", publisher.broker,
                                 flowfile.uuid)
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        except (pika.exceptions.AMQPError, OSError) as error:
            publisher.close()
            context.logger.error("could not publish %s to AMQP broker %s: %s; routed to failure", flowfile.uuid,
                                 publisher.broker, _amqp.describe(error))
            session.transfer(session.penalize(flowfile), FAILURE)
            context.yield_processor()
            return
        try:
            publisher.connection.process_data_events(time_limit=0)  # returned messages, heartbeats
        except (pika.exceptions.AMQPError, OSError):
            publisher.close()
        self._idle.give_back(publisher)
        session.provenance.send(flowfile, f"amqp://{publisher.broker}/E:{exchange}/RK:{routing_key}")
        session.transfer(flowfile, SUCCESS)

    def _borrow(self, context, flowfile) -> _Publisher | None:
        publisher = self._idle.take(context.logger)
        if publisher is not None:
            return publisher
        try:
            connection, broker = _amqp.connect(context, context.confinement)
            return _Publisher(connection, broker, self._confirms, context.logger)
        except ConfinementError as error:
            context.logger.error("%s; %s routed to failure (ask the platform operator to open this address to the "
                                 "tenant)", context.refused(error), flowfile.uuid)
        except _amqp.BrokerError as error:
            context.logger.error("%s; %s routed to failure, retrying after the yield duration", error, flowfile.uuid)
        except (pika.exceptions.AMQPError, OSError) as error:
            context.logger.error("cannot open a channel to the AMQP broker: %s; %s routed to failure",
                                 _amqp.describe(error), flowfile.uuid)
        context.yield_processor()
        return None

    def _properties(self, context, flowfile) -> pika.BasicProperties:
        attributes = flowfile.attributes
        values = {}
        for name, field_name, _ in _amqp.PROPERTY_ATTRIBUTES:
            text = attributes.get(name)
            if text is None:
                continue
            try:
                if field_name in ("delivery_mode", "priority"):
                    values[field_name] = int(text)
                elif field_name == "timestamp":
                    values[field_name] = int(text) // 1000
                else:
                    values[field_name] = text
            except ValueError:
                context.logger.warning("attribute %s of %s is %r, not a number: the message goes without it",
                                       name, flowfile.uuid, text)
        values["headers"] = self._headers(context, flowfile)
        return pika.BasicProperties(**values)

    def _headers(self, context, flowfile) -> dict[str, str | None]:
        if self._from_attributes:
            return {name: value for name, value in flowfile.attributes.items() if self._pattern.fullmatch(name)}
        text = flowfile.attributes.get(_amqp.HEADERS)
        headers: dict[str, str | None] = {}
        if text is None:
            return headers
        for entry in text.split(self._separator):
            parts = entry.split("=")
            if len(parts) > 2:
                context.logger.warning("malformed key=value pair %r in %s of %s: left out", entry, _amqp.HEADERS,
                                       flowfile.uuid)
                continue
            key = parts[0].strip()
            if not key:
                context.logger.warning("header with an empty key in %s of %s: left out", _amqp.HEADERS,
                                       flowfile.uuid)
                continue
            headers[key] = parts[1].strip() if len(parts) == 2 else None
        return headers
