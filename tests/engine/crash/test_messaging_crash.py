"""A node SIGKILLed after its consumer received messages and before its session committed them
loses none: after a restart the broker delivers them again, and each reaches the output once.

The consumer (ConsumeAMQP, or ConsumeMQTT with QoS 1 and a resumed session) runs every 10
minutes: its first task connects and subscribes, so messages published afterwards are delivered
to the node's client and wait there, unacknowledged, for a next task that the kill prevents. The
node restarts with the consumer running every 100 ms; PutFile writes each FlowFile as a file.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pika
import pytest

from engine.testing.flows import connection, flow, processor
from tests.brokers import PASSWORD, USER, MosquittoServer, RabbitMQServer
from tests.engine.node_process import NodeProcess
from tests.engine.processors.test_mqtt import publish as mqtt_publish

MESSAGES = [f"message-{index}".encode() for index in range(5)]


def write_flow(path: Path, consumer: dict, outputs: Path, relationship: str) -> None:
    document = flow(
        processors=[consumer,
                    processor("put", "PutFile", {"Directory": str(outputs)}, auto_terminate=["success", "failure"],
                              schedulingPeriod="50 millis")],
        connections=[connection("got", consumer["identifier"], "put", [relationship])])
    path.write_text(json.dumps(document))


def contents(outputs: Path) -> list[bytes]:
    if not outputs.is_dir():
        return []
    return sorted(p.read_bytes() for p in outputs.iterdir() if not p.name.startswith("."))


def kill_and_restart(tmp_path, make_consumer, relationship, publish_all, delivered) -> list[bytes]:
    outputs, data_dir, flow_file = tmp_path / "out", tmp_path / "node", tmp_path / "flow.json"
    write_flow(flow_file, make_consumer("10 min"), outputs, relationship)
    node = NodeProcess(tmp_path / "node.log", "--flow", str(flow_file), "--data-dir", str(data_dir))
    try:
        node.wait_for(r"consuming from queue|subscribed to")
        time.sleep(1)  # the first task is over: the next one is 10 minutes away
        publish_all()
        delivered()
        assert contents(outputs) == []
        node.stop(signal.SIGKILL)
    finally:
        node.kill()
    write_flow(flow_file, make_consumer("100 millis"), outputs, relationship)
    node = NodeProcess(tmp_path / "node-2.log", "--flow", str(flow_file), "--data-dir", str(data_dir))
    try:
        deadline = time.monotonic() + 60
        while len(contents(outputs)) < len(MESSAGES) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2)  # a duplicate would arrive by now
        assert node.stop() == 0, node.output()[-3000:]
    finally:
        node.kill()
    return contents(outputs)


@pytest.fixture
def rabbit(tmp_path):
    server = RabbitMQServer(tmp_path / "rabbitmq")
    server.start()
    yield server
    server.close()


def test_amqp_messages_received_but_not_committed_are_redelivered_once(tmp_path, rabbit):
    with rabbit.connection() as conn:
        conn.channel().queue_declare("orders", durable=True)

    def consumer(period):
        return processor("consume", "ConsumeAMQP", {"Host Name": "127.0.0.1", "Port": str(rabbit.port),
                                                    "Username": USER, "Password": PASSWORD, "Queue": "orders"},
                         schedulingPeriod=period)

    def publish_all():
        with rabbit.connection() as conn:
            channel = conn.channel()
            for body in MESSAGES:
                channel.basic_publish("", "orders", body, pika.BasicProperties(delivery_mode=2))

    def delivered():
        deadline = time.monotonic() + 30
        while rabbit.queue_counts("orders") != (0, len(MESSAGES)):  # all delivered to the node, none acknowledged
            assert time.monotonic() < deadline, rabbit.queue_counts("orders")
            time.sleep(0.2)

    assert kill_and_restart(tmp_path, consumer, "success", publish_all, delivered) == sorted(MESSAGES)
    assert rabbit.queue_counts("orders") == (0, 0)


def test_mqtt_messages_received_but_not_committed_are_redelivered_once(tmp_path):
    broker = MosquittoServer(tmp_path / "mosquitto")
    broker.start()
    try:
        def consumer(period):
            return processor("consume", "ConsumeMQTT", {
                "Broker URI": broker.uri, "Topic Filter": "orders/#", "Quality of Service": "1",
                "Session State": "false", "Client ID": "crash-test", "Max Queue Size": "100"},
                schedulingPeriod=period)

        def publish_all():
            for index, body in enumerate(MESSAGES):
                mqtt_publish(broker, f"orders/{index}", body)

        def delivered():
            time.sleep(2)  # loopback delivery takes milliseconds; the broker has no per-client count to wait on

        assert kill_and_restart(tmp_path, consumer, "Message", publish_all, delivered) == sorted(MESSAGES)
    finally:
        broker.stop()
