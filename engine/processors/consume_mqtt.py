"""ConsumeMQTT: subscribes to an MQTT topic filter; messages become FlowFiles, acknowledged after the commit."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

from engine.components import (
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.confinement import ConfinementError
from engine.processors import _mqtt

GROUP_ID = PropertyDescriptor(
    "Group ID", description="A shared-subscription group: the clients of one group share the topic's messages "
    "($share/<group>/<filter>). Unset: this client gets every message.", validators=[v.NON_EMPTY])
TOPIC_FILTER = PropertyDescriptor(
    "Topic Filter", description="The topic filter to subscribe to (wildcards + and # allowed).", required=True,
    expression_language=ExpressionScope.ENVIRONMENT, validators=[v.NON_EMPTY])
QOS = PropertyDescriptor(
    "Quality of Service", description="The QoS to subscribe with.", required=True, default="0",
    allowed_values=_mqtt.QOS_VALUES)
MAX_QUEUE_SIZE = PropertyDescriptor(
    "Max Queue Size", description="The most messages held in memory between tasks; when full, the client stops "
    "reading from the broker until a task takes some.", required=True, validators=[v.POSITIVE_INTEGER])
MESSAGE_DEMARCATOR = PropertyDescriptor(
    "Message Demarcator", description="When set, the messages a task takes go into one FlowFile, separated by "
    "this text (UTF-8); unset: one FlowFile per message.", expression_language=ExpressionScope.ENVIRONMENT)

MESSAGE = Relationship("Message", "The MQTT message output")

_MAX_MESSAGES_PER_TASK = 10_000


@dataclass(frozen=True)
class _Received:
    message: object
    generation: int


class ConsumeMQTT(Processor):
    """Subscribes to a topic filter of an MQTT broker and receives its messages.

    With QoS 1 and Session State "Resume Session" (and a fixed Client ID) no message is lost
    when the node dies: the client acknowledges a message (PUBACK, paho's manual
    acknowledgement) only after the session holding its FlowFile has committed, and the broker
    sends the unacknowledged ones again when the client reconnects (``mqtt.isDuplicate`` true).
    A crash between the commit and the acknowledgement delivers the message twice. With QoS 2 the
    broker hands the message over at PUBREC, before the commit, so a node that dies in between
    loses it; QoS 0 messages are never sent again. Messages wait in memory (at most Max Queue
    Size) between tasks, and across a stop and start of the processor (not of the node). The
    client reconnects by itself when the connection drops; connections go through the tenant's
    network policy. Record Reader and Writer are not supported yet: a flow that sets them is
    invalid.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.mqtt.ConsumeMQTT"
    tags = ("subscribe", "MQTT", "IOT", "consume", "listen")
    properties = (*_mqtt.CONNECTION_PROPERTIES, GROUP_ID, TOPIC_FILTER, QOS, MESSAGE_DEMARCATOR,
                  *_mqtt.TAIL_PROPERTIES, MAX_QUEUE_SIZE)
    migrated_properties = {**_mqtt.MIGRATED_PROPERTIES, "Quality of Service(QoS)": QOS.name}
    relationships = (MESSAGE,)
    input_requirement = InputRequirement.FORBIDDEN
    trigger_serially = True
    trigger_when_empty = True
    writes_attributes = (
        WrittenAttribute("mqtt.broker", "MQTT broker that was the message source"),
        WrittenAttribute("mqtt.topic", "MQTT topic on which message was received"),
        WrittenAttribute("mqtt.qos", "The quality of service for this message."),
        WrittenAttribute("mqtt.isDuplicate", "Whether or not this message might be a duplicate of one which has "
                                             "already been received."),
        WrittenAttribute("mqtt.isRetained", "Whether or not this message was from a current publisher, or was "
                                            "\"retained\" by the server as the last message published on the topic."),
    )
    see_also = ("PublishMQTT",)

    def validate(self, context):
        yield from _mqtt.validate(context)

    def on_scheduled(self, context):
        self._capacity = context.property(MAX_QUEUE_SIZE).as_int()
        # Kept across a stop and start: a clean session's messages would not come again.
        self._queue: deque[_Received] = getattr(self, "_queue", deque())
        self._space = threading.Condition()
        self._generation = getattr(self, "_generation", 0)  # never reused: acks must not reach a newer connection
        self._stopping = False
        self._qos = int(context.property(QOS).value)
        filter_ = context.property(TOPIC_FILTER).evaluate().value
        group = context.property(GROUP_ID).value
        self._filter = f"$share/{group}/{filter_}" if group else filter_
        demarcator = context.property(MESSAGE_DEMARCATOR).evaluate().value
        self._demarcator = demarcator.encode() if demarcator is not None else None
        self._connection: _mqtt.Connection | None = None

    def on_stopped(self, context):
        with self._space:
            self._stopping = True
            self._space.notify_all()
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def on_trigger(self, context, session):
        if self._connection is None and not self._connect(context):
            return
        taken = []
        with self._space:
            while self._queue and len(taken) < _MAX_MESSAGES_PER_TASK:
                taken.append(self._queue.popleft())
            self._space.notify_all()
        if not taken:
            context.yield_processor()
            return
        broker = self._connection.broker
        if self._demarcator is None:
            for received in taken:
                message = received.message
                flowfile = session.write_bytes(session.create(), message.payload)
                flowfile = session.put_all_attributes(flowfile, _attributes(broker, message))
                session.provenance.receive(flowfile, f"{broker}/{message.topic}")
                session.transfer(flowfile, MESSAGE)
        else:
            self._demarcated(session, broker, taken)
        connection = self._connection
        session.on_commit(lambda: self._acknowledge(context, connection, taken))
        session.on_rollback(lambda: self._put_back(taken))

    def _demarcated(self, session, broker, taken) -> None:
        by_topic: dict[str, list] = {}
        for received in taken:
            by_topic.setdefault(received.message.topic, []).append(received.message)
        for topic, messages in by_topic.items():
            flowfile = session.write_bytes(session.create(), self._demarcator.join(m.payload for m in messages))
            flowfile = session.put_all_attributes(flowfile, {"mqtt.broker": broker, "mqtt.topic": topic})
            session.provenance.receive(flowfile, f"{broker}/{topic}")
            session.transfer(flowfile, MESSAGE)

    # -- the client -----------------------------------------------------------------------

    def _connect(self, context) -> bool:
        connection = _mqtt.Connection(context, context.confinement, manual_ack=True, on_message=self._received,
                                      on_connect=self._connected)
        try:
            connection.open()
        except ConfinementError as error:
            context.logger.error("%s; ask the platform operator to open this address to the tenant",
                                 context.refused(error))
        except _mqtt.BrokerError as error:
            context.logger.error("%s; retrying after the yield duration", error)
        else:
            self._connection = connection
            context.logger.info("subscribed to %r on MQTT broker %s as client %s", self._filter, connection.broker,
                                connection.client_id)
            return True
        context.yield_processor()
        return False

    def _connected(self, client, session_present: bool) -> None:
        """Each (re)connection: a new generation of message ids; subscribe again."""
        with self._space:
            self._generation += 1
            if session_present and self._qos > 0:
                # The broker sends the unacknowledged ones again; the copies held here would be duplicates.
                kept = [r for r in self._queue if r.message.qos == 0]
                self._queue.clear()
                self._queue.extend(kept)
                self._space.notify_all()
        client.subscribe(self._filter, self._qos)

    def _received(self, message) -> None:
        with self._space:
            while len(self._queue) >= self._capacity and not self._stopping:
                self._space.wait(1)
            if not self._stopping:
                self._queue.append(_Received(message, self._generation))

    def _acknowledge(self, context, connection, taken) -> None:
        current = self._generation
        stale = 0
        for received in taken:
            message = received.message
            if message.qos == 0:
                continue
            if received.generation != current or connection.client is None:
                stale += 1  # its id belongs to a connection that is gone; the broker sends it again
                continue
            connection.client.ack(message.mid, message.qos)
        if stale:
            context.logger.warning("%d committed message(s) arrived on a connection that has since dropped and "
                                   "could not be acknowledged: the broker will send them again (duplicates)", stale)

    def _put_back(self, taken) -> None:
        with self._space:
            self._queue.extendleft(reversed(taken))


def _attributes(broker: str, message) -> dict[str, str]:
    return {"mqtt.broker": broker, "mqtt.topic": message.topic, "mqtt.qos": str(message.qos),
            "mqtt.isDuplicate": str(bool(message.dup)).lower(), "mqtt.isRetained": str(bool(message.retain)).lower()}
