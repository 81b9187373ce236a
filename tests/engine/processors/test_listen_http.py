"""ListenHTTP: a real server, real HTTP(S) clients."""

from __future__ import annotations

import gzip
import http.client
import socket
import ssl
import struct
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.processors import listen_http
from engine.processors.listen_http import ListenHTTP
from engine.queue import QueueSettings
from engine.testing import ProcessorTestRunner
from tests.engine.pki import Pki
from tests.servers import free_port

SSL_SERVICE = "StandardSSLContextService"


def port_is_free(port: int) -> bool:
    """True when a server (which, like any, sets SO_REUSEADDR) could listen on ``port``."""
    probe = socket.socket()
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        probe.bind(("0.0.0.0", port))
        probe.listen()
        return True
    except OSError:
        return False
    finally:
        probe.close()


@pytest.fixture
def port():
    return free_port()


@pytest.fixture
def pki(tmp_path):
    return Pki.create(tmp_path / "pki")


class Listening:
    """A ListenHTTP runner started (its server up) for the duration of a ``with`` block."""

    def __init__(self, tmp_path, properties, **kwargs):
        self.runner = ProcessorTestRunner(ListenHTTP, tmp_path, properties, input=False, **kwargs)

    def __enter__(self):
        self.runner.run(1, stop=False)
        return self.runner

    def __exit__(self, *exc_info):
        self.runner.stop()
        self.runner.close()


def post(port, body=b"", path="/contentListener", headers=None, method="POST", context=None):
    """Send one request on a new connection; returns (status, body, response headers)."""
    if context is None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    else:
        connection = http.client.HTTPSConnection("localhost", port, timeout=10, context=context)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        connection.close()


def test_post_becomes_a_flowfile_committed_before_the_answer(tmp_path, port):
    properties = {"Listening Port": str(port), "HTTP Headers to receive as Attributes (Regex)": "X-.*"}
    with Listening(tmp_path, properties) as runner:
        status, _, headers = post(port, b"hello listener", path="/contentListener?q=1",
                                  headers={"filename": "greeting.txt", "X-Trace": "t-9", "Other": "no"})
        assert status == 200 and headers["Content-Type"] == "text/plain"
        (flowfile,) = runner.output("success")  # already there when the answer came
        assert runner.content(flowfile) == b"hello listener"
        attributes = flowfile.attributes
        assert attributes["filename"] == "greeting.txt"
        assert attributes["X-Trace"] == "t-9" and "Other" not in attributes
        assert attributes["restlistener.remote.source.host"] == "127.0.0.1"
        assert attributes["restlistener.request.uri"] == "/contentListener"
        assert attributes["restlistener.remote.user.dn"] == "none"
        assert attributes["restlistener.remote.issuer.dn"] == "none"
        (event,) = runner.events(flowfile_uuid=flowfile.uuid)
        assert event.event_type.value == "RECEIVE"
        assert event.transit_uri == f"http://127.0.0.1:{port}/contentListener"
        assert event.details == "Remote DN=none, Issuer DN=none"


def test_return_code_and_base_path(tmp_path, port):
    properties = {"Listening Port": str(port), "Return Code": "204", "Base Path": "ingest/v1"}
    with Listening(tmp_path, properties) as runner:
        assert post(port, b"a", path="/ingest/v1")[0] == 204
        assert post(port, b"b", path="/contentListener")[0] == 404
        assert len(runner.output("success")) == 1


def test_other_methods_paths_and_the_health_check(tmp_path, port):
    with Listening(tmp_path, {"Listening Port": str(port)}) as runner:
        assert post(port, method="GET")[0] == 405
        assert post(port, method="PUT", body=b"x")[0] == 405
        assert post(port, method="DELETE")[0] == 405
        status, _, headers = post(port, method="HEAD")
        assert status == 200 and headers["Accept-Encoding"] == "gzip"
        assert post(port, path="/contentListener/healthcheck", method="GET")[:2] == (200, b"OK")
        assert post(port, path="/elsewhere", body=b"x")[0] == 404
        assert runner.output("success") == []


def test_separate_health_check_port_serves_only_the_health_check(tmp_path, port):
    health = free_port()
    with Listening(tmp_path, {"Listening Port": str(port), "health-check-port": str(health)}) as runner:
        assert post(health, path="/contentListener/healthcheck", method="GET")[:2] == (200, b"OK")
        assert post(health, b"data")[0] == 404
        assert post(port, b"data")[0] == 200
        assert len(runner.output("success")) == 1


def test_concurrent_posts_all_arrive(tmp_path, port):
    with Listening(tmp_path, {"Listening Port": str(port)}) as runner:
        bodies = [f"message {n}".encode() * 50 for n in range(60)]
        with ThreadPoolExecutor(max_workers=12) as pool:
            statuses = list(pool.map(lambda body: post(port, body)[0], bodies))
        assert statuses == [200] * len(bodies)
        received = sorted(runner.content(f) for f in runner.output("success"))
        assert received == sorted(bodies)


def test_keep_alive_connection_serves_several_posts(tmp_path, port):
    with Listening(tmp_path, {"Listening Port": str(port)}) as runner:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for n in range(3):
            connection.request("POST", "/contentListener", body=f"n{n}".encode())
            response = connection.getresponse()
            response.read()
            assert response.status == 200
        connection.close()
        assert sorted(runner.content(f) for f in runner.output("success")) == [b"n0", b"n1", b"n2"]


def test_back_pressure_is_answered_503(tmp_path, port):
    with Listening(tmp_path, {"Listening Port": str(port)}) as runner:
        runner.controller.queue("out-success").update_settings(QueueSettings(back_pressure_object_threshold=1))
        assert post(port, b"first")[0] == 200
        status, body, _ = post(port, b"second")
        assert status == 503 and b"full" in body
        assert [runner.content(f) for f in runner.output("success")] == [b"first"]


def test_large_bodies_are_streamed_with_length_or_chunked(tmp_path, port):
    data = bytes(range(256)) * (16 * 4096)  # 16 MiB
    with Listening(tmp_path, {"Listening Port": str(port)}) as runner:
        assert post(port, data)[0] == 200

        def chunks():
            for start in range(0, len(data), 1 << 20):
                yield data[start:start + (1 << 20)]

        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("POST", "/contentListener", body=chunks(), encode_chunked=True,
                           headers={"Transfer-Encoding": "chunked"})
        assert connection.getresponse().status == 200
        connection.close()
        first, second = runner.output("success")
        assert first.size == second.size == len(data)
        assert runner.content(first) == data and runner.content(second) == data


def test_gzip_bodies_are_decompressed_and_bad_ones_refused(tmp_path, port):
    with Listening(tmp_path, {"Listening Port": str(port)}) as runner:
        assert post(port, gzip.compress(b"zipped" * 100), headers={"Content-Encoding": "gzip"})[0] == 200
        assert post(port, gzip.compress(b"legacy"), headers={"flowfile-gzipped": "true"})[0] == 200
        status, body, _ = post(port, b"not gzip at all", headers={"Content-Encoding": "gzip"})
        assert status == 400 and b"gzip" in body
        assert sorted(runner.content(f) for f in runner.output("success")) == [b"legacy", b"zipped" * 100]


def test_multipart_parts_become_flowfiles(tmp_path, port):
    boundary = "xyzBOUNDARY"
    binary = bytes(range(256))
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b.bin\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + binary + f"\r\n--{boundary}--\r\n".encode()
    with Listening(tmp_path, {"Listening Port": str(port)}) as runner:
        status, _, _ = post(port, body, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
        assert status == 200
        parts = {f.attributes["http.multipart.name"]: f for f in runner.output("success")}
        assert runner.content(parts["note"]) == b"hello"
        assert runner.content(parts["file"]) == binary
        attributes = parts["file"].attributes
        assert attributes["http.multipart.filename"] == "b.bin"
        assert attributes["http.multipart.content.type"] == "application/octet-stream"
        assert attributes["http.multipart.size"] == "256"
        assert attributes["http.multipart.fragments.sequence.number"] == "2"
        assert attributes["http.multipart.fragments.total.number"] == "2"
        assert attributes["http.headers.multipart.Content-Disposition"].startswith("form-data")
        assert attributes["restlistener.request.uri"] == "/contentListener"
        assert len(runner.events(event_type="RECEIVE")) == 2


def package_v3(*flowfiles: tuple[dict[str, str], bytes]) -> bytes:
    """FlowFiles in the FlowFile-v3 package format NiFi writes."""

    def field(length: int) -> bytes:
        return struct.pack(">H", length) if length < 0xFFFF else b"\xff\xff" + struct.pack(">I", length)

    def text(value: str) -> bytes:
        data = value.encode()
        return field(len(data)) + data

    out = bytearray()
    for attributes, content in flowfiles:
        out += b"NiFiFF3" + field(len(attributes))
        for key, value in attributes.items():
            out += text(key) + text(value)
        out += struct.pack(">q", len(content)) + content
    return bytes(out)


def test_flowfile_v3_packages_are_unpacked(tmp_path, port):
    long_value = "v" * 70000  # needs the four-byte length form
    package = package_v3(({"uuid": "0f1e2d3c-aaaa-bbbb-cccc-000000000001", "filename": "a.txt", "color": "red"},
                          b"first content"),
                         ({"filename": "", "long": long_value}, b""),
                         ({"restlistener.request.uri": "forged"}, b"third"))
    with Listening(tmp_path, {"Listening Port": str(port)}) as runner:
        status, _, _ = post(port, gzip.compress(package), headers={
            "Content-Type": "application/flowfile-v3", "Content-Encoding": "gzip", "filename": "from-header"})
        assert status == 200
        first, second, third = runner.output("success")
        assert runner.content(first) == b"first content"
        assert first.attributes["filename"] == "a.txt" and first.attributes["color"] == "red"
        assert first.uuid != "0f1e2d3c-aaaa-bbbb-cccc-000000000001"
        assert second.attributes["filename"] == "from-header" and second.attributes["long"] == long_value
        assert runner.content(second) == b""
        assert third.attributes["restlistener.request.uri"] == "/contentListener"
        (event,) = runner.events(flowfile_uuid=first.uuid)
        assert event.source_system_flowfile_id == "urn:nifi:0f1e2d3c-aaaa-bbbb-cccc-000000000001"


def test_malformed_or_unsupported_packages_are_refused(tmp_path, port):
    with Listening(tmp_path, {"Listening Port": str(port)}) as runner:
        headers = {"Content-Type": "application/flowfile-v3"}
        assert post(port, b"NiFiFF2 not really", headers=headers)[0] == 400
        assert post(port, package_v3(({"a": "b"}, b"content"))[:-3], headers=headers)[0] == 400
        assert post(port, b"", headers=headers)[0] == 400
        status, body, _ = post(port, b"whatever", headers={"Content-Type": "application/flowfile-v2"})
        assert status == 415 and b"application/flowfile-v3" in body
        assert runner.output("success") == []


def test_multipart_over_the_limit_is_refused(tmp_path, port):
    properties = {"Listening Port": str(port), "multipart-request-max-size": "1 KB"}
    boundary = "b"
    body = f"--{boundary}\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n".encode() + b"x" * 4096 + \
        f"\r\n--{boundary}--\r\n".encode()
    with Listening(tmp_path, properties) as runner:
        status, _, _ = post(port, body, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
        assert status == 413
        assert runner.output("success") == []


def test_an_interrupted_upload_leaves_nothing(tmp_path, port):
    with Listening(tmp_path, {"Listening Port": str(port)}) as runner:
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(b"POST /contentListener HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nonly ten b")
        client.close()
        time.sleep(0.3)
        assert post(port, b"next")[0] == 200  # the server is still fine
        assert [runner.content(f) for f in runner.output("success")] == [b"next"]


def test_data_rate_is_throttled(tmp_path, port):
    properties = {"Listening Port": str(port), "Max Data to Receive per Second": "100 KB"}
    with Listening(tmp_path, properties) as runner:
        started = time.monotonic()
        assert post(port, b"r" * (250 * 1024))[0] == 200
        assert time.monotonic() - started >= 1.2
        (flowfile,) = runner.output("success")
        assert flowfile.size == 250 * 1024


def test_restart_on_the_same_port(tmp_path, port):
    runner = ProcessorTestRunner(ListenHTTP, tmp_path, {"Listening Port": str(port)}, input=False)
    try:
        runner.run(1, stop=False)
        keep_alive = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        keep_alive.request("POST", "/contentListener", body=b"one")
        assert keep_alive.getresponse().read() == b""
        runner.stop()
        assert port_is_free(port)
        keep_alive.close()
        runner.run(1, stop=False)
        assert post(port, b"two")[0] == 200
        runner.stop()
        assert port_is_free(port)
        assert sorted(runner.content(f) for f in runner.output("success")) == [b"one", b"two"]
    finally:
        runner.close()


def test_a_port_in_use_fails_to_start_with_a_bulletin(tmp_path, port):
    blocker = socket.socket()
    blocker.bind(("0.0.0.0", port))
    blocker.listen()
    try:
        with ProcessorTestRunner(ListenHTTP, tmp_path, {"Listening Port": str(port)}, input=False) as runner:
            outcomes = runner.run()
            assert outcomes[0].value == "failed"
            assert any("Address already in use" in message for message in runner.bulletins)
    finally:
        blocker.close()


# -- HTTPS ------------------------------------------------------------------------------------

def client_context(pki, with_certificate=True):
    context = ssl.create_default_context(cafile=pki.pem_truststore("client-ca.pem"))
    if with_certificate:
        context.load_cert_chain(pki.pem_keystore(pki.client, "client-key.pem"))
    return context


def test_https_with_required_client_certificates(tmp_path, port, pki):
    properties = {"Listening Port": str(port), "SSL Context Service": "ssl"}
    services = {"ssl": (SSL_SERVICE, pki.server_service("PKCS12"))}
    with Listening(tmp_path, properties, services=services) as runner:
        status, _, _ = post(port, b"secure", context=client_context(pki))
        assert status == 200
        (flowfile,) = runner.output("success")
        assert flowfile.attributes["restlistener.remote.user.dn"] == "CN=client-one, O=Flowsite Test, C=US"
        assert flowfile.attributes["restlistener.remote.issuer.dn"] == "CN=Flowsite Test CA, O=Flowsite Test, C=US"
        event = runner.events(flowfile_uuid=flowfile.uuid)[0]
        assert event.transit_uri == f"https://localhost:{port}/contentListener"
        with pytest.raises((ssl.SSLError, ConnectionError)):
            post(port, b"anonymous", context=client_context(pki, with_certificate=False))
        with pytest.raises((ssl.SSLError, ConnectionError, http.client.HTTPException)):
            post(port, b"plain text to a TLS port")
        assert len(runner.output("success")) == 1


def test_https_subject_pattern_forbids_other_clients(tmp_path, port, pki):
    properties = {"Listening Port": str(port), "SSL Context Service": "ssl",
                  "Authorized DN Pattern": "CN=someone-else.*"}
    services = {"ssl": (SSL_SERVICE, pki.server_service("PEM"))}
    with Listening(tmp_path, properties, services=services) as runner:
        status, body, _ = post(port, b"who am i", context=client_context(pki))
        assert status == 403 and b"subject dn" in body
        assert runner.output("success") == []


def test_https_issuer_pattern(tmp_path, port, pki):
    properties = {"Listening Port": str(port), "SSL Context Service": "ssl",
                  "authorized-issuer-dn-pattern": "CN=Other CA.*"}
    services = {"ssl": (SSL_SERVICE, pki.server_service("PEM"))}
    with Listening(tmp_path, properties, services=services):
        status, body, _ = post(port, b"x", context=client_context(pki))
        assert status == 403 and b"issuer dn" in body


def test_https_want_accepts_clients_without_certificates(tmp_path, port, pki):
    properties = {"Listening Port": str(port), "SSL Context Service": "ssl", "client-authentication": "WANT"}
    services = {"ssl": (SSL_SERVICE, pki.server_service("PKCS12"))}
    with Listening(tmp_path, properties, services=services) as runner:
        assert post(port, b"anonymous", context=client_context(pki, with_certificate=False))[0] == 200
        assert post(port, b"known", context=client_context(pki))[0] == 200
        dns = sorted(f.attributes["restlistener.remote.user.dn"] for f in runner.output("success"))
        assert dns == ["CN=client-one, O=Flowsite Test, C=US", "none"]


def test_https_auto_without_truststore_asks_no_certificate(tmp_path, port, pki):
    properties = {"Listening Port": str(port), "SSL Context Service": "ssl"}
    services = {"ssl": (SSL_SERVICE, pki.server_service("PKCS12", client_truststore=False))}
    with Listening(tmp_path, properties, services=services) as runner:
        assert post(port, b"x", context=client_context(pki))[0] == 200
        assert runner.output("success")[0].attributes["restlistener.remote.user.dn"] == "none"


def test_invoke_http_posts_to_listen_http_over_mutual_tls(tmp_path, port, pki):
    from engine.processors.invoke_http import InvokeHTTP

    listen_services = {"ssl": (SSL_SERVICE, pki.server_service("PKCS12"))}
    with Listening(tmp_path, {"Listening Port": str(port), "SSL Context Service": "ssl"},
                   services=listen_services) as listener:
        invoke_properties = {"HTTP Method": "POST", "HTTP URL": f"https://localhost:{port}/contentListener",
                             "SSL Context Service": "client-ssl", "filename": "${filename}"}
        with ProcessorTestRunner(InvokeHTTP, tmp_path, invoke_properties,
                                 services={"client-ssl": (SSL_SERVICE, pki.client_service("PEM"))}) as invoker:
            for n in range(5):
                invoker.enqueue(f"record {n}".encode(), filename=f"r{n}.txt")
            invoker.run()
            assert len(invoker.output("Original")) == 5
        received = {f.attributes["filename"]: listener.content(f) for f in listener.output("success")}
        assert received == {f"r{n}.txt": f"record {n}".encode() for n in range(5)}


# -- configuration ----------------------------------------------------------------------------

def test_invalid_configurations_are_reported(tmp_path):
    properties = {"Listening Port": "70000", "Base Path": "/leading", "Return Code": "100",
                  "HTTP Headers to receive as Attributes (Regex)": "(", "max-thread-pool-size": "2",
                  "Max Data to Receive per Second": "fast"}
    with ProcessorTestRunner(ListenHTTP, tmp_path, properties, input=False) as runner:
        problems = "\n".join(runner.validate())
        for name in ("Listening Port", "Base Path", "Return Code", "HTTP Headers to receive as Attributes (Regex)",
                     "max-thread-pool-size", "Max Data to Receive per Second"):
            assert f"'{name}'" in problems
    with ProcessorTestRunner(ListenHTTP, tmp_path, {}, input=False) as runner:
        assert "'Listening Port' is required" in runner.validate()
    with ProcessorTestRunner(ListenHTTP, tmp_path, {"Listening Port": "8080", "health-check-port": "8080"},
                             input=False) as runner:
        assert any("cannot have the same value" in p for p in runner.validate())
    with ProcessorTestRunner(ListenHTTP, tmp_path, {"Listening Port": "8080", "HTTP Protocols": "H2"},
                             input=False) as runner:
        assert runner.validate() == []  # HTTP Protocols only matters with an SSL Context Service


def test_http_protocols_other_than_http_1_1_are_refused(tmp_path, pki):
    services = {"ssl": (SSL_SERVICE, pki.server_service("PKCS12"))}
    properties = {"Listening Port": "8080", "SSL Context Service": "ssl", "HTTP Protocols": "H2_HTTP_1_1"}
    with ProcessorTestRunner(ListenHTTP, tmp_path, properties, input=False, services=services) as runner:
        assert any("'HTTP Protocols'" in p and "HTTP_1_1" in p for p in runner.validate())


def test_stopping_frees_the_port_while_a_keep_alive_connection_is_open(tmp_path, port):
    runner = ProcessorTestRunner(ListenHTTP, tmp_path, {"Listening Port": str(port)}, input=False)
    try:
        runner.run(1, stop=False)
        idle = socket.create_connection(("127.0.0.1", port))
        time.sleep(0.1)
        stopper = threading.Thread(target=runner.stop)
        stopper.start()
        stopper.join(timeout=10)
        assert not stopper.is_alive()
        assert port_is_free(port)
        assert idle.recv(1) == b""  # the server closed the idle connection
        idle.close()
    finally:
        runner.close()


def test_a_complete_nifi_export_is_valid(tmp_path, port):
    exported = {
        "Base Path": "contentListener", "Listening Port": str(port), "health-check-port": None,
        "Max Data to Receive per Second": None, "SSL Context Service": None, "HTTP Protocols": "HTTP_1_1",
        "client-authentication": "AUTO", "Authorized DN Pattern": ".*", "authorized-issuer-dn-pattern": ".*",
        "Max Unconfirmed Flowfile Time": "60 secs", "HTTP Headers to receive as Attributes (Regex)": None,
        "Return Code": "200", "multipart-request-max-size": "1 MB", "multipart-read-buffer-size": "512 KB",
        "max-thread-pool-size": "200", "record-reader": None, "record-writer": None,
    }
    runner = ProcessorTestRunner("org.apache.nifi.processors.standard.ListenHTTP", tmp_path, exported, input=False)
    try:
        assert runner.validate() == []
        runner.run(1, stop=False)
        assert post(port, b"from an exported flow")[0] == 200
        assert len(runner.output("success")) == 1
    finally:
        runner.stop()
        runner.close()


def test_stopping_cuts_a_stalled_upload_after_the_grace_period(tmp_path, port, monkeypatch):
    monkeypatch.setattr(listen_http, "_STOP_GRACE", 0.5)
    runner = ProcessorTestRunner(ListenHTTP, tmp_path, {"Listening Port": str(port)}, input=False)
    try:
        runner.run(1, stop=False)
        stalled = socket.create_connection(("127.0.0.1", port))
        stalled.sendall(b"POST /contentListener HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nten bytes.")
        time.sleep(0.2)
        started = time.monotonic()
        runner.stop()
        assert time.monotonic() - started < 5
        assert port_is_free(port)
        assert runner.output("success") == []
        stalled.close()
    finally:
        runner.close()
