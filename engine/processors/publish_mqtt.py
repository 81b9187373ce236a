"""PublishMQTT: publishes each FlowFile's content as a message to an MQTT topic."""

from __future__ import annotations

import threading

from paho.mqtt.enums import MQTTErrorCode

from engine.components import ExpressionScope, InputRequirement, Processor, PropertyDescriptor, Relationship
from engine.components import validators as v
from engine.confinement import ConfinementError
from engine.expression import ExpressionError
from engine.processors import _mqtt

_FLOWFILE = ExpressionScope.FLOWFILE_ATTRIBUTES

TOPIC = PropertyDescriptor("Topic", description="The topic to publish the message to.", required=True,
                           expression_language=_FLOWFILE, validators=[v.NON_EMPTY])
QOS = PropertyDescriptor(
    "Quality of Service", description="The QoS to publish with: 0 (at most once), 1 (at least once) or 2 (exactly "
    "once); an expression must give one of these.", required=True, expression_language=_FLOWFILE,
    validators=[lambda value, context: None if value in ("0", "1", "2") else "QoS must be an integer between 0 and 2."])
RETAIN = PropertyDescriptor(
    "Retain Message", description="Whether the broker keeps the message as the topic's last one.", required=True,
    expression_language=_FLOWFILE,
    validators=[lambda value, context: None if value.lower() in ("true", "false") else "must be true or false"])
MESSAGE_DEMARCATOR = PropertyDescriptor(
    "Message Demarcator", description="When set, the content is split at this text (UTF-8) and each part is "
    "published as a message of its own; unset: the whole content is one message.",
    expression_language=ExpressionScope.ENVIRONMENT)

SUCCESS = Relationship("success", "FlowFiles that are sent successfully to the destination are transferred to "
                                  "this relationship.")
FAILURE = Relationship("failure", "FlowFiles that failed to send to the destination are transferred to this "
                                  "relationship.")


class PublishMQTT(Processor):
    """Publishes the content of each FlowFile as a message to an MQTT topic.

    With QoS 1 or 2 a FlowFile goes to success only once the broker acknowledged its message(s)
    (within Connection Timeout); with QoS 0 once the message was written to the connection. A
    broker that cannot be reached, refuses the connection or does not acknowledge in time sends
    the FlowFile to failure with an error bulletin saying why; the client reconnects at the next
    task after the yield. Connections go through the tenant's network policy. Record Reader and
    Writer are not supported yet: a flow that sets them is invalid.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.mqtt.PublishMQTT"
    tags = ("publish", "MQTT", "IOT")
    properties = (*_mqtt.CONNECTION_PROPERTIES, TOPIC, RETAIN, QOS, MESSAGE_DEMARCATOR, *_mqtt.TAIL_PROPERTIES)
    migrated_properties = {**_mqtt.MIGRATED_PROPERTIES, "Quality of Service(QoS)": QOS.name}
    relationships = (SUCCESS, FAILURE)
    input_requirement = InputRequirement.REQUIRED
    see_also = ("ConsumeMQTT",)

    def validate(self, context):
        yield from _mqtt.validate(context)

    def on_scheduled(self, context):
        self._lock = threading.Lock()
        self._connection: _mqtt.Connection | None = None
        self._timeout = float(context.property(_mqtt.CONNECTION_TIMEOUT).value)
        demarcator = context.property(MESSAGE_DEMARCATOR).evaluate().value
        self._demarcator = demarcator.encode() if demarcator else None

    def on_stopped(self, context):
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def on_trigger(self, context, session):
        flowfile = session.get()
        if flowfile is None:
            return
        try:
            topic = context.property(TOPIC).evaluate(flowfile).value
            qos_text = context.property(QOS).evaluate(flowfile).value
            retain_text = (context.property(RETAIN).evaluate(flowfile).value or "").lower()
        except ExpressionError as error:
            context.logger.error("cannot evaluate the topic, QoS or retain flag for %s: %s", flowfile.uuid, error)
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        if not topic or qos_text not in ("0", "1", "2") or retain_text not in ("true", "false"):
            context.logger.error("%s: topic %r, QoS %r and retain %r must be a topic, 0/1/2 and true/false; routed "
                                 "to failure", flowfile.uuid, topic, qos_text, retain_text)
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        connection = self._connected(context)
        if connection is None:
            context.logger.error("%s routed to failure: no connection to the MQTT broker", flowfile.uuid)
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        content = session.read_bytes(flowfile)
        payloads = content.split(self._demarcator) if self._demarcator else [content]
        problem = self._publish(connection, topic, payloads, int(qos_text), retain_text == "true")
        if problem is not None:
            context.logger.error("could not publish %s to %r on MQTT broker %s: %s; routed to failure",
                                 flowfile.uuid, topic, connection.broker, problem)
            session.transfer(session.penalize(flowfile), FAILURE)
            if not connection.is_connected:
                self._drop(connection)
                context.yield_processor()
            return
        session.provenance.send(flowfile, f"{connection.broker}/{topic}")
        session.transfer(flowfile, SUCCESS)

    def _publish(self, connection, topic, payloads, qos, retain) -> str | None:
        """None when every payload was published, else why not."""
        for payload in payloads:
            # paho queues a QoS 1/2 message while disconnected and sends it after reconnecting: that
            # would be a second copy of a FlowFile already routed to failure.
            if not connection.is_connected:
                return "the connection is down"
            info = connection.client.publish(topic, payload, qos, retain)
            if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
                return _mqtt.error_text(info.rc)
            try:
                info.wait_for_publish(self._timeout)
            except RuntimeError as error:
                return str(error)
            if not info.is_published():
                return f"no acknowledgement within {self._timeout:g} s"
        return None

    def _connected(self, context) -> _mqtt.Connection | None:
        with self._lock:
            if self._connection is not None:
                return self._connection
            connection = _mqtt.Connection(context, context.confinement)
            try:
                connection.open()
            except ConfinementError as error:
                context.logger.error("%s; ask the platform operator to open this address to the tenant",
                                     context.refused(error))
            except _mqtt.BrokerError as error:
                context.logger.error("%s; retrying after the yield duration", error)
            else:
                self._connection = connection
                return connection
        context.yield_processor()
        return None

    def _drop(self, connection) -> None:
        with self._lock:
            if self._connection is connection:
                self._connection = None
        connection.close()
