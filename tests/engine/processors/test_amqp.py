"""PublishAMQP and ConsumeAMQP against a real RabbitMQ node started once for the module."""

from __future__ import annotations

import json
import time

import pika
import pytest

from engine.confinement import ConfinementSettings
from engine.testing import ProcessorTestRunner
from tests.brokers import PASSWORD, USER, RabbitMQServer
from tests.engine.pki import Pki
from tests.engine.tmpfs import mounted_tmpfs
from tests.servers import free_port


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki.create(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def rabbit(tmp_path_factory, pki):
    server = RabbitMQServer(tmp_path_factory.mktemp("rabbitmq"), tls=(pki.pem_truststore("ca.pem"),
                                                                      pki.pem_keystore(pki.server, "server.pem")))
    server.start()
    yield server
    server.close()


@pytest.fixture
def queue(rabbit, request):
    name = f"q-{request.node.name}"[:200]
    with rabbit.connection() as connection:
        channel = connection.channel()
        channel.queue_delete(name)
        channel.queue_declare(name, durable=True)
        channel.queue_bind(name, "amq.direct", routing_key=name)
    return name


def broker(rabbit, **extra):
    return {"Host Name": "127.0.0.1", "Port": str(rabbit.port), "Username": USER, "Password": PASSWORD, **extra}


def publish_raw(rabbit, queue, body, properties=pika.BasicProperties(delivery_mode=2)):
    with rabbit.connection() as connection:
        connection.channel().basic_publish("", queue, body, properties)


def drain(rabbit, queue):
    bodies = []
    with rabbit.connection() as connection:
        channel = connection.channel()
        while True:
            method, properties, body = channel.basic_get(queue, auto_ack=True)
            if method is None:
                return bodies
            bodies.append((properties, body))


def test_round_trip_keeps_properties_and_headers(tmp_path, rabbit, queue):
    sent = {"amqp$contentType": "text/plain", "amqp$contentEncoding": "utf-8", "amqp$deliveryMode": "2",
            "amqp$priority": "3", "amqp$correlationId": "corr-1", "amqp$replyTo": "replies",
            "amqp$expiration": "60000", "amqp$messageId": "m-1", "amqp$timestamp": "1700000000000",
            "amqp$type": "greeting", "amqp$appId": "flowsite-test", "amqp$clusterId": "c-1",
            "amqp$userId": USER, "amqp$headers": "colour=blue,size=9,flag"}
    with ProcessorTestRunner("PublishAMQP", tmp_path, broker(
            rabbit, **{"Exchange Name": "amq.direct", "Routing Key": "${target}",
                       "Delivery Guarantee": "AT_LEAST_ONCE"})) as publisher:
        publisher.enqueue(b"hello amqp", target=queue, **sent)
        publisher.run()
        (out,) = publisher.output("success")
        assert not publisher.output("failure")
        send = [e for e in publisher.events() if e.event_type.value == "SEND"]
        assert send and send[0].transit_uri == f"amqp://127.0.0.1:{rabbit.port}/E:amq.direct/RK:{queue}"

    with ProcessorTestRunner("ConsumeAMQP", tmp_path, broker(rabbit, Queue=queue), input=False) as consumer:
        (received,) = run_until(consumer, 1)
        assert consumer.content(received) == b"hello amqp"
        attributes = received.attributes
        for name, value in sent.items():
            if name != "amqp$headers":
                assert attributes[name] == value, name
        assert attributes["amqp$headers"] == "{colour=blue,size=9,flag}"
        assert attributes["amqp$routingKey"] == queue
        assert attributes["amqp$exchange"] == "amq.direct"
        assert attributes["amqp$redelivered"] == "false"
        assert [e.event_type.value for e in consumer.events()].count("RECEIVE") == 1
    assert rabbit.queue_counts(queue) == (0, 0)  # acknowledged after the commit


def test_header_formats(tmp_path, rabbit, queue):
    properties = pika.BasicProperties(headers={"a": "1", "b": None, "n": 5})
    publish_raw(rabbit, queue, b"one", properties)
    publish_raw(rabbit, queue, b"two", properties)
    publish_raw(rabbit, queue, b"three", properties)
    formats = [({"Header Output Format": "JSON String"}, lambda a: json.loads(a["amqp$headers"]) == {
                    "a": "1", "b": None, "n": 5}),
               ({"Header Output Format": "FlowFile Attributes", "Header Key Prefix": "h"},
                lambda a: a["h.a"] == "1" and a["h.n"] == "5" and "h.b" not in a and "amqp$headers" not in a),
               ({"Header Separator": "|", "Remove Curly Braces": "True"}, lambda a: a["amqp$headers"] == "a=1|b|n=5")]
    for extra, check in formats:
        with ProcessorTestRunner("ConsumeAMQP", tmp_path, broker(rabbit, Queue=queue, **{"Batch Size": "1"}, **extra),
                                 input=False) as consumer:
            (received,) = run_until(consumer, 1)
            assert check(received.attributes), received.attributes


def test_publish_from_attributes_matching_a_pattern(tmp_path, rabbit, queue):
    with ProcessorTestRunner("PublishAMQP", tmp_path, broker(
            rabbit, **{"Routing Key": queue, "Headers Source": "FLOWFILE_ATTRIBUTES",
                       "Headers Pattern": "x-.*"})) as publisher:
        publisher.enqueue(b"body", **{"x-one": "1", "x-two": "2", "other": "3"})
        publisher.run()
        assert publisher.output("success")
    ((properties, body),) = drain(rabbit, queue)
    assert body == b"body" and properties.headers == {"x-one": "1", "x-two": "2"}


def test_a_batch_is_acknowledged_only_after_the_commit(tmp_path, rabbit, queue):
    for index in range(5):
        publish_raw(rabbit, queue, f"m{index}".encode())
    with ProcessorTestRunner("ConsumeAMQP", tmp_path, broker(rabbit, Queue=queue, **{"Batch Size": "3"}),
                             input=False) as consumer:
        session = held_session(consumer)
        # the FlowFiles are in a session not yet committed: the broker still counts the messages unacknowledged
        assert rabbit.queue_counts(queue)[1] >= 3
        session.commit()
        received = consumer.output("success")
        assert [consumer.content(f) for f in received] == [b"m0", b"m1", b"m2"]
        ready, unacked = rabbit.queue_counts(queue)
        assert ready + unacked == 2
        assert unacked < 5  # the three committed ones were acknowledged
        consumer.stop()


def run_until(runner, count, tasks=50, stop=True):
    """Run tasks until ``count`` FlowFiles went to success (deliveries arrive asynchronously)."""
    for _ in range(tasks):
        runner.run(stop=False)
        if len(runner.output("success")) >= count:
            break
        time.sleep(0.05)
    if stop:
        runner.stop()
    return runner.output("success")


def held_session(runner):
    """Run the processor's on_trigger until it takes messages, and return its session uncommitted."""
    runner.controller.start_component(runner.node)
    node = runner.node
    for _ in range(50):
        session = node.new_session()
        node.processor.on_trigger(node.context, session)
        if session.counts.bytes_written:
            return session
        session.commit()
        time.sleep(0.1)
    raise AssertionError("no message arrived")


def test_a_rolled_back_session_returns_its_messages(tmp_path, rabbit, queue):
    publish_raw(rabbit, queue, b"again")
    with ProcessorTestRunner("ConsumeAMQP", tmp_path, broker(rabbit, Queue=queue), input=False) as consumer:
        session = held_session(consumer)
        session.rollback()
        assert not consumer.output("success")
        (received,) = run_until(consumer, 1, stop=False)
        assert consumer.content(received) == b"again"
        assert received.attributes["amqp$redelivered"] == "true"
        consumer.stop()
    assert rabbit.queue_counts(queue) == (0, 0)


def test_unroutable_message_goes_to_failure_with_confirms(tmp_path, rabbit):
    with ProcessorTestRunner("PublishAMQP", tmp_path, broker(
            rabbit, **{"Exchange Name": "amq.direct", "Routing Key": "nobody-bound",
                       "Delivery Guarantee": "AT_LEAST_ONCE"})) as publisher:
        publisher.enqueue(b"lost?")
        publisher.run()
        assert publisher.output("failure") and not publisher.output("success")
        assert any("could not route" in b and "nobody-bound" in b for b in publisher.bulletins), publisher.bulletins


def test_broker_down_publish_fails_with_a_clear_message(tmp_path):
    port = free_port()
    with ProcessorTestRunner("PublishAMQP", tmp_path, {"Host Name": "127.0.0.1", "Port": str(port),
                                                       "Username": USER, "Password": PASSWORD,
                                                       "Routing Key": "q"}) as publisher:
        publisher.enqueue(b"nowhere")
        publisher.run()
        assert publisher.output("failure") and not publisher.output("success")
        assert any(f"cannot connect to the AMQP broker: 127.0.0.1:{port}" in b and "routed to failure" in b
                   for b in publisher.bulletins), publisher.bulletins


def test_broker_restart_consumer_reconnects_and_publisher_recovers(tmp_path, rabbit, queue):
    publish_raw(rabbit, queue, b"before")
    with ProcessorTestRunner("ConsumeAMQP", tmp_path, broker(rabbit, Queue=queue), input=False) as consumer, \
            ProcessorTestRunner("PublishAMQP", tmp_path, broker(rabbit, **{"Routing Key": queue})) as publisher, \
            ProcessorTestRunner("PublishAMQP", tmp_path, broker(rabbit, **{"Routing Key": queue})) as idle:
        idle.enqueue(b"idle one", **{"amqp$deliveryMode": "2"})
        idle.run(stop=False)
        run_until(consumer, 2, stop=False)
        assert sorted(consumer.content(f) for f in consumer.output("success")) == [b"before", b"idle one"]
        publisher.enqueue(b"first", **{"amqp$deliveryMode": "2"})  # persistent: survives the restart
        publisher.run(stop=False)
        assert len(publisher.output("success")) == 1
        rabbit.stop()
        try:
            publisher.enqueue(b"while down")
            publisher.run(stop=False)
            assert len(publisher.output("failure")) == 1
            assert any("AMQP broker" in b and "routed to failure" in b for b in publisher.bulletins)
            consumer.run(2, stop=False)
            assert any("AMQP broker" in b for b in consumer.bulletins), consumer.bulletins
        finally:
            rabbit.start()
        publisher.enqueue(b"after")
        publisher.run(stop=False)
        assert len(publisher.output("success")) == 2 and len(publisher.output("failure")) == 1
        idle.enqueue(b"idle two")  # its pooled connection went stale in the restart: a new one takes over
        idle.run(stop=False)
        assert len(idle.output("success")) == 2 and not idle.output("failure"), idle.bulletins
        run_until(consumer, 5, stop=False)
        contents = sorted(consumer.content(f) for f in consumer.output("success"))
        assert contents == [b"after", b"before", b"first", b"idle one", b"idle two"]
        for runner in (consumer, publisher, idle):
            runner.stop()


def test_a_tenant_without_the_grant_is_refused(tmp_path, rabbit, queue):
    settings = ConfinementSettings()
    publish_raw(rabbit, queue, b"private")
    with ProcessorTestRunner("ConsumeAMQP", tmp_path, broker(rabbit, Queue=queue), input=False, tenant={},
                             confinement=settings) as consumer:
        consumer.run(2)
        assert not consumer.output("success")
        assert any(f"ConsumeAMQP[processor-under-test] refused 127.0.0.1:{rabbit.port}: 127.0.0.1 is this machine"
                   in b for b in consumer.bulletins), consumer.bulletins
    with ProcessorTestRunner("PublishAMQP", tmp_path, broker(rabbit, **{"Routing Key": queue}), tenant={},
                             confinement=settings) as publisher:
        publisher.enqueue(b"x")
        publisher.run()
        assert publisher.output("failure")
        assert any(f"PublishAMQP[processor-under-test] refused 127.0.0.1:{rabbit.port}" in b
                   for b in publisher.bulletins), publisher.bulletins
    assert rabbit.queue_counts(queue) == (1, 0)
    with ProcessorTestRunner("PublishAMQP", tmp_path, broker(rabbit, **{"Routing Key": queue}),
                             tenant={"network": {"allow": [f"127.0.0.1:{rabbit.port}"]}},
                             confinement=settings) as allowed:
        allowed.enqueue(b"granted")
        allowed.run()
        assert allowed.output("success")


def test_authentication_must_be_configured(tmp_path):
    with ProcessorTestRunner("ConsumeAMQP", tmp_path, {"Queue": "q"}, input=False) as runner:
        assert any("either 'Username' with 'Password'" in problem for problem in runner.validate())



def test_triggers_sharing_a_session_share_its_consumer_and_its_acknowledgement(tmp_path, rabbit, queue):
    """A Run Duration runs several triggers in one session: one consumer serves them, one commit acks all."""
    for index in range(3):
        publish_raw(rabbit, queue, f"r{index}".encode())
    with ProcessorTestRunner("ConsumeAMQP", tmp_path, broker(rabbit, Queue=queue, **{"Batch Size": "1"}),
                             input=False) as consumer:
        session = held_session(consumer)
        node = consumer.node
        for _ in range(2):
            node.processor.on_trigger(node.context, session)
        assert session.counts.bytes_written == 6
        assert rabbit.queue_counts(queue) == (0, 3)
        session.commit()
        assert [consumer.content(f) for f in consumer.output("success")] == [b"r0", b"r1", b"r2"]
        assert rabbit.queue_counts(queue) == (0, 0)
        consumer.stop()


def test_brokers_are_tried_in_turn(tmp_path, rabbit, queue):
    closed = free_port()
    properties = {"Brokers": f"127.0.0.1:{closed}, 127.0.0.1:{rabbit.port}", "Username": USER, "Password": PASSWORD,
                  "Routing Key": queue}
    with ProcessorTestRunner("PublishAMQP", tmp_path, properties) as publisher:
        publisher.enqueue(b"second broker")
        publisher.run()
        assert publisher.output("success")
    ((_, body),) = drain(rabbit, queue)
    assert body == b"second broker"


def test_tls(tmp_path, rabbit, pki, queue):
    services = {"ssl": ("StandardSSLContextService", pki.client_service("PEM", with_key=False))}
    tls = {"Host Name": "localhost", "Port": str(rabbit.tls_port), "Username": USER, "Password": PASSWORD,
           "SSL Context Service": "ssl"}
    with ProcessorTestRunner("PublishAMQP", tmp_path, {**tls, "Routing Key": queue}, services=services) as publisher:
        publisher.enqueue(b"over tls")
        publisher.run()
        assert publisher.output("success"), publisher.bulletins
    with ProcessorTestRunner("ConsumeAMQP", tmp_path, {**tls, "Queue": queue}, services=services,
                             input=False) as consumer:
        (received,) = run_until(consumer, 1)
        assert consumer.content(received) == b"over tls"
    other = Pki.create(tmp_path / "other-pki")
    with ProcessorTestRunner("PublishAMQP", tmp_path, {**tls, "Routing Key": queue}, services={
            "ssl": ("StandardSSLContextService", other.client_service("PEM", with_key=False))}) as untrusted:
        untrusted.enqueue(b"x")
        untrusted.run()
        assert untrusted.output("failure")
        assert any("cannot connect to the AMQP broker" in b and "CERTIFICATE_VERIFY_FAILED" in b
                   for b in untrusted.bulletins), untrusted.bulletins


def test_a_missing_queue_is_named_in_the_bulletin(tmp_path, rabbit):
    with ProcessorTestRunner("ConsumeAMQP", tmp_path, broker(rabbit, Queue="no-such-queue"), input=False) as consumer:
        consumer.run()
        assert not consumer.output("success")
        assert any("cannot consume from queue 'no-such-queue'" in b and "NOT_FOUND" in b
                   for b in consumer.bulletins), consumer.bulletins


def test_a_body_over_the_limit_is_rejected_with_a_bulletin(tmp_path, rabbit, queue):
    publish_raw(rabbit, queue, b"x" * 100)
    publish_raw(rabbit, queue, b"small")
    with ProcessorTestRunner("ConsumeAMQP", tmp_path, broker(rabbit, Queue=queue, **{
            "Max Inbound Message Body Size": "10 B"}), input=False) as consumer:
        (received,) = run_until(consumer, 1)
        assert consumer.content(received) == b"small"
        assert any("rejected a message of 100 bytes" in b for b in consumer.bulletins), consumer.bulletins
    assert rabbit.queue_counts(queue) == (0, 0)


def test_nifi_1_property_names_load(tmp_path):
    with ProcessorTestRunner("ConsumeAMQP", tmp_path, {"Queue": "q", "User Name": "u", "Password": "p",
                                                       "auto.acknowledge": "true", "batch.size": "5",
                                                       "header.format": "JSON String"}, input=False) as runner:
        assert runner.validate() == []
        assert runner.node.properties["Batch Size"] == "5" and runner.node.properties["Username"] == "u"


def test_client_certificate_authentication(tmp_path, rabbit, pki, queue):
    rabbit.ctl("add_user", "client-one", "unused-password")
    rabbit.ctl("set_permissions", "client-one", ".*", ".*", ".*")
    services = {"ssl": ("StandardSSLContextService", pki.client_service("PKCS12"))}
    properties = {"Host Name": "localhost", "Port": str(rabbit.tls_port), "SSL Context Service": "ssl",
                  "Client Certificate Authentication Enabled": "true", "Routing Key": queue}
    with ProcessorTestRunner("PublishAMQP", tmp_path, properties, services=services) as publisher:
        assert publisher.validate() == []
        publisher.enqueue(b"as client-one", **{"amqp$userId": "client-one"})
        publisher.run()
        assert publisher.output("success"), publisher.bulletins
    ((properties, body),) = drain(rabbit, queue)
    assert body == b"as client-one" and properties.user_id == "client-one"  # the broker checks user_id


def test_a_full_disk_rolls_back_and_the_broker_keeps_the_message(tmp_path, rabbit, queue):
    publish_raw(rabbit, queue, b"x" * (6 << 20))
    with mounted_tmpfs(tmp_path / "small-disk", "4m") as disk:
        with ProcessorTestRunner("ConsumeAMQP", disk, broker(rabbit, Queue=queue), input=False) as consumer:
            for _ in range(20):
                consumer.run(stop=False)
                if consumer.bulletins:
                    break
                time.sleep(0.1)
            consumer.stop()
            assert not consumer.output("success")
            assert any("No space left on device" in b for b in consumer.bulletins), consumer.bulletins
    assert rabbit.queue_counts(queue) == (1, 0)  # requeued on the rollback, nothing acknowledged


def test_a_large_message_arrives_within_a_few_tasks(tmp_path, rabbit, queue):
    body = bytes(range(256)) * (32 << 10)  # 8 MB: 64 frames of 128 KB
    publish_raw(rabbit, queue, body)
    with ProcessorTestRunner("ConsumeAMQP", tmp_path, broker(rabbit, Queue=queue), input=False) as consumer:
        (received,) = run_until(consumer, 1, tasks=10)
        assert consumer.content(received) == body
