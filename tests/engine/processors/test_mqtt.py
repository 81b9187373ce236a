"""PublishMQTT and ConsumeMQTT against a real Mosquitto started for the module."""

from __future__ import annotations

import threading
import time

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from engine.confinement import ConfinementSettings
from engine.testing import ProcessorTestRunner
from tests.brokers import MosquittoServer
from tests.engine.pki import Pki
from tests.engine.tmpfs import mounted_tmpfs
from tests.servers import free_port

SSL_SERVICE = "StandardSSLContextService"


@pytest.fixture(scope="module")
def mosquitto(tmp_path_factory):
    server = MosquittoServer(tmp_path_factory.mktemp("mosquitto"))
    server.start()
    yield server
    server.stop()


def subscriber(mosquitto, topic, qos=1):
    """A plain paho client collecting what arrives on ``topic``."""
    received, ready = [], threading.Event()
    client = paho.Client(CallbackAPIVersion.VERSION2)
    client.on_connect = lambda c, u, f, rc, p: c.subscribe(topic, qos)
    client.on_subscribe = lambda *args: ready.set()
    client.on_message = lambda c, u, message: received.append(message)
    client.connect("127.0.0.1", mosquitto.port)
    client.loop_start()
    assert ready.wait(10)
    return client, received


def publish(mosquitto, topic, payload, qos=1, retain=False):
    client = paho.Client(CallbackAPIVersion.VERSION2)
    client.connect("127.0.0.1", mosquitto.port)
    client.loop_start()
    client.publish(topic, payload, qos, retain).wait_for_publish(10)
    client.disconnect()
    client.loop_stop()


def run_until(runner, count, tasks=100):
    for _ in range(tasks):
        runner.run(stop=False)
        if len(runner.output("Message")) >= count:
            break
        time.sleep(0.05)
    return runner.output("Message")


def consumer_properties(mosquitto, topic, **extra):
    return {"Broker URI": mosquitto.uri, "Topic Filter": topic, "Quality of Service": "1", "Max Queue Size": "100",
            **extra}


def test_publish_then_consume_round_trip(tmp_path, mosquitto):
    with ProcessorTestRunner("ConsumeMQTT", tmp_path, consumer_properties(mosquitto, "rt/#"),
                             input=False) as consumer:
        consumer.run(stop=False)  # connects and subscribes
        with ProcessorTestRunner("PublishMQTT", tmp_path, {"Broker URI": mosquitto.uri, "Topic": "rt/${kind}",
                                                           "Quality of Service": "1",
                                                           "Retain Message": "false"}) as publisher:
            publisher.enqueue(b"hello mqtt", kind="greeting")
            publisher.run()
            assert publisher.output("success") and not publisher.output("failure")
            (send,) = [e for e in publisher.events() if e.event_type.value == "SEND"]
            assert send.transit_uri == f"{mosquitto.uri}/rt/greeting"
        (message,) = run_until(consumer, 1)
        consumer.stop()
        assert consumer.content(message) == b"hello mqtt"
        assert message.attributes["mqtt.broker"] == mosquitto.uri
        assert message.attributes["mqtt.topic"] == "rt/greeting"
        assert message.attributes["mqtt.qos"] == "1"
        assert message.attributes["mqtt.isDuplicate"] == "false"
        assert message.attributes["mqtt.isRetained"] == "false"


def test_retained_message_and_demarcator(tmp_path, mosquitto):
    publish(mosquitto, "dem/kept", b"retained one", retain=True)
    with ProcessorTestRunner("ConsumeMQTT", tmp_path, consumer_properties(mosquitto, "dem/#", **{
            "Message Demarcator": "|"}), input=False) as consumer:
        consumer.run(stop=False)
        time.sleep(0.5)
        publish(mosquitto, "dem/kept", b"two")
        publish(mosquitto, "dem/kept", b"three")
        time.sleep(0.5)
        messages = run_until(consumer, 1)
        consumer.stop()
        assert b"|".join(consumer.content(m) for m in messages) == b"retained one|two|three"
    publish(mosquitto, "dem/kept", b"", retain=True)  # clears the retained message


def test_publish_splits_on_the_demarcator_and_retains(tmp_path, mosquitto):
    client, received = subscriber(mosquitto, "split")
    try:
        with ProcessorTestRunner("PublishMQTT", tmp_path, {"Broker URI": mosquitto.uri, "Topic": "split",
                                                           "Quality of Service": "2", "Retain Message": "true",
                                                           "Message Demarcator": "\n"}) as publisher:
            publisher.enqueue(b"a\nb\nc")
            publisher.run()
            assert publisher.output("success")
        deadline = time.monotonic() + 10
        while len(received) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [m.payload for m in received] == [b"a", b"b", b"c"]
    finally:
        client.disconnect()
        client.loop_stop()
    publish(mosquitto, "split", b"", retain=True)


@pytest.mark.parametrize("version", ["0", "5"])
def test_acknowledged_only_after_commit_and_redelivered_after_rollback(tmp_path, mosquitto, version):
    properties = consumer_properties(mosquitto, f"ack{version}/#", **{
        "Client ID": f"ack-test-{version}", "Session State": "false", "MQTT Specification Version": version})
    with ProcessorTestRunner("ConsumeMQTT", tmp_path, properties, input=False) as consumer:
        consumer.run(stop=False)
        publish(mosquitto, f"ack{version}/one", b"payload")
        node = consumer.node
        for _ in range(100):
            session = node.new_session()
            node.processor.on_trigger(node.context, session)
            if session.counts.bytes_written:
                break
            session.commit()
            time.sleep(0.05)
        session.rollback()  # not committed: back to the processor's queue, not acknowledged
        (message,) = run_until(consumer, 1)
        assert consumer.content(message) == b"payload"
        consumer.stop()
    # Acknowledged after the commit: the resumed session gets nothing again.
    with ProcessorTestRunner("ConsumeMQTT", tmp_path, properties, input=False) as again:
        again.run(stop=False)
        time.sleep(1)
        again.run(3)
        assert again.output("Message") == []


def test_broker_down_publish_fails_with_a_clear_message_and_consumer_reconnects(tmp_path):
    server = MosquittoServer(tmp_path / "own-broker")
    server.start()
    properties = consumer_properties(server, "down/#", **{"Client ID": "down-test", "Session State": "false"})
    try:
        with ProcessorTestRunner("ConsumeMQTT", tmp_path, properties, input=False) as consumer, \
                ProcessorTestRunner("PublishMQTT", tmp_path, {"Broker URI": server.uri, "Topic": "down/x",
                                                              "Quality of Service": "1",
                                                              "Retain Message": "false"}) as publisher:
            consumer.run(stop=False)
            publisher.enqueue(b"first")
            publisher.run(stop=False)
            assert len(run_until(consumer, 1)) == 1
            server.stop()
            time.sleep(0.5)
            publisher.enqueue(b"while down")
            publisher.run(stop=False)
            assert len(publisher.output("failure")) == 1
            assert any("could not publish" in b and "routed to failure" in b for b in publisher.bulletins), \
                publisher.bulletins
            publisher.enqueue(b"still down")
            publisher.run(stop=False)
            assert len(publisher.output("failure")) == 2
            assert any(f"cannot connect to the MQTT broker: {server.uri}" in b for b in publisher.bulletins), \
                publisher.bulletins
            assert any(f"lost the connection to MQTT broker {server.uri}" in b for b in consumer.bulletins), \
                consumer.bulletins
            server.start()  # same port: the consumer's client reconnects by itself
            deadline = time.monotonic() + 40
            publisher.enqueue(b"after")
            while not publisher.output("success")[1:] and time.monotonic() < deadline:
                publisher.run(stop=False)
                time.sleep(0.2)
            assert len(publisher.output("success")) == 2
            for _ in range(600):
                consumer.run(stop=False)
                if b"after" in [consumer.content(m) for m in consumer.output("Message")]:
                    break
                time.sleep(0.05)
            first, *rest = consumer.output("Message")
            assert consumer.content(first) == b"first"
            # Stopped right after the consumer acknowledged "first", the broker may not have read the
            # acknowledgement: the resumed session then sends "first" again, flagged as a duplicate.
            again = [m for m in rest if consumer.content(m) == b"first"]
            assert all(m.attributes["mqtt.isDuplicate"] == "true" for m in again), [m.attributes for m in again]
            assert [consumer.content(m) for m in rest if consumer.content(m) != b"first"] == [b"after"]
            publisher.stop()
            consumer.stop()
    finally:
        server.stop()


def test_a_tenant_without_the_grant_is_refused(tmp_path, mosquitto):
    settings = ConfinementSettings()
    with ProcessorTestRunner("ConsumeMQTT", tmp_path, consumer_properties(mosquitto, "t/#"), input=False,
                             tenant={}, confinement=settings) as consumer:
        consumer.run()
        assert any(f"ConsumeMQTT[processor-under-test] refused 127.0.0.1:{mosquitto.port}: 127.0.0.1 is this "
                   "machine" in b for b in consumer.bulletins), consumer.bulletins
    with ProcessorTestRunner("PublishMQTT", tmp_path, {"Broker URI": mosquitto.uri, "Topic": "t/x",
                                                       "Quality of Service": "0", "Retain Message": "false"},
                             tenant={}, confinement=settings) as publisher:
        publisher.enqueue(b"x")
        publisher.run()
        assert publisher.output("failure")
        assert any(f"PublishMQTT[processor-under-test] refused 127.0.0.1:{mosquitto.port}" in b
                   for b in publisher.bulletins), publisher.bulletins
    with ProcessorTestRunner("PublishMQTT", tmp_path, {"Broker URI": mosquitto.uri, "Topic": "t/x",
                                                       "Quality of Service": "0", "Retain Message": "false"},
                             tenant={"network": {"allow": [f"127.0.0.1:{mosquitto.port}"]}},
                             confinement=settings) as allowed:
        allowed.enqueue(b"x")
        allowed.run()
        assert allowed.output("success")


def test_validation(tmp_path):
    port = free_port()
    with ProcessorTestRunner("ConsumeMQTT", tmp_path, {"Broker URI": f"ws://127.0.0.1:{port}", "Topic Filter": "x",
                                                       "Max Queue Size": "10", "Username": "u"},
                             input=False) as runner:
        problems = " ".join(runner.validate())
        assert "the scheme must be tcp or ssl" in problems
        assert "if username or password is set, both must be set" in problems


def test_messages_held_in_memory_survive_a_stop_and_start_of_a_clean_session(tmp_path, mosquitto):
    properties = consumer_properties(mosquitto, "held/#", **{"Quality of Service": "0"})
    with ProcessorTestRunner("ConsumeMQTT", tmp_path, properties, input=False) as consumer:
        consumer.run(stop=False)
        publish(mosquitto, "held/a", b"kept", qos=0)
        time.sleep(0.5)
        consumer.stop()  # the message waits in memory, not yet in a session
        (message,) = run_until(consumer, 1)
        consumer.stop()
        assert consumer.content(message) == b"kept"


@pytest.mark.parametrize("kind", ["PKCS12", "PEM"])
def test_tls_with_a_client_certificate(tmp_path, kind):
    pki = Pki.create(tmp_path / "pki")
    server = MosquittoServer(tmp_path / "tls-broker", tls=(pki.pem_truststore("ca.pem"),
                                                           pki.pem_keystore(pki.server, "server.pem")))
    server.start()
    uri = f"ssl://localhost:{server.tls_port}"
    try:
        with ProcessorTestRunner("ConsumeMQTT", tmp_path, {"Broker URI": uri, "Topic Filter": "tls",
                                                           "Quality of Service": "1", "Max Queue Size": "10",
                                                           "SSL Context Service": "ssl"},
                                 services={"ssl": (SSL_SERVICE, pki.client_service(kind))},
                                 input=False) as consumer:
            consumer.run(stop=False)
            assert not consumer.bulletins, consumer.bulletins
            with ProcessorTestRunner("PublishMQTT", tmp_path, {"Broker URI": uri, "Topic": "tls",
                                                               "Quality of Service": "1", "Retain Message": "false",
                                                               "SSL Context Service": "ssl"},
                                     services={"ssl": (SSL_SERVICE, pki.client_service(kind))}) as publisher:
                publisher.enqueue(b"secret")
                publisher.run()
                assert publisher.output("success"), publisher.bulletins
            (message,) = run_until(consumer, 1)
            consumer.stop()
            assert consumer.content(message) == b"secret" and message.attributes["mqtt.broker"] == uri
        other = Pki.create(tmp_path / "other-pki")
        with ProcessorTestRunner("PublishMQTT", tmp_path, {"Broker URI": uri, "Topic": "tls",
                                                           "Quality of Service": "1", "Retain Message": "false",
                                                           "SSL Context Service": "ssl"},
                                 services={"ssl": (SSL_SERVICE, other.client_service(kind))}) as untrusted:
            untrusted.enqueue(b"x")
            untrusted.run()
            assert untrusted.output("failure")
            assert any("cannot connect to the MQTT broker" in b and "CERTIFICATE_VERIFY_FAILED" in b
                       for b in untrusted.bulletins), untrusted.bulletins
    finally:
        server.stop()


def test_nifi_1_property_names_load(tmp_path):
    with ProcessorTestRunner("ConsumeMQTT", tmp_path, {"Broker URI": "tcp://localhost:1883", "Topic Filter": "x",
                                                       "Max Queue Size": "10", "Session state": "false",
                                                       "Quality of Service(QoS)": "1",
                                                       "Keep Alive Interval (seconds)": "30"},
                             input=False) as runner:
        assert runner.validate() == []
        assert runner.node.properties["Session State"] == "false"
        assert runner.node.properties["Quality of Service"] == "1" and runner.node.properties["Keep Alive"] == "30"


def test_a_full_disk_rolls_back_and_the_message_comes_again(tmp_path, mosquitto):
    properties = consumer_properties(mosquitto, "disk/#", **{"Client ID": "disk-test", "Session State": "false"})
    body = b"y" * (6 << 20)
    with mounted_tmpfs(tmp_path / "small-disk", "4m") as disk:
        with ProcessorTestRunner("ConsumeMQTT", disk, properties, input=False) as consumer:
            consumer.run(stop=False)
            publish(mosquitto, "disk/big", body)
            outcomes = []
            for _ in range(50):
                outcomes += consumer.run(stop=False)
                if consumer.bulletins:
                    break
                time.sleep(0.1)
            consumer.stop()
            assert not consumer.output("Message")
            assert any("No space left on device" in b for b in consumer.bulletins), (outcomes, consumer.bulletins)
    with ProcessorTestRunner("ConsumeMQTT", tmp_path, properties, input=False) as again:
        (message,) = run_until(again, 1)
        again.stop()
        assert again.content(message) == body and message.attributes["mqtt.isDuplicate"] == "true"
