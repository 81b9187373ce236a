"""HandleHttpRequest, HandleHttpResponse and StandardHttpContextMap: a web service in a running
node, answered to real HTTP(S) clients."""

from __future__ import annotations

import datetime
import errno
import http.client
import socket
import ssl
import struct
import threading
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID

from engine.testing import ProcessorTestRunner
from engine.testing.faults import FaultPlan
from tests.engine.pki import Identity, Pki, write_pem_keystore
from tests.engine.processors.web_service import WebService, call
from tests.servers import free_port

SSL_SERVICE = "StandardSSLContextService"


@pytest.fixture
def port():
    return free_port()


def port_is_free(port: int) -> bool:
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


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out")


class Background:
    """A request sent from another thread (its client waits for the answer meanwhile)."""

    def __init__(self, *args, **kwargs):
        self.result = self.error = None
        self._thread = threading.Thread(target=self._run, args=args, kwargs=kwargs, daemon=True)
        self._thread.start()

    def _run(self, *args, **kwargs):
        try:
            self.result = call(*args, **kwargs)
        except Exception as error:
            self.error = error

    def join(self, timeout=15):
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the request got no answer"
        if self.error is not None:
            raise self.error
        return self.result


def test_a_request_goes_through_the_flow_and_its_client_gets_the_answer(tmp_path, port):
    middle = [("append", "ReplaceText", {"Replacement Strategy": "Append", "Replacement Value": " (processed)"},
               ["failure"]),
              ("decide", "UpdateAttribute", {"status": "201", "X-Reply": "hello ${http.query.param.name}"})]
    response = {"HTTP Status Code": "${status}", "Attributes for HTTP Response": "X-.*",
                "Content-Type": "text/plain; charset=utf-8", "X-Blank": "${missing}"}
    with WebService(tmp_path, port, middle=middle, response=response) as web:
        status, body, headers = call(port, "POST", "/api/greet?name=Ann%20B&flag", b"hello",
                                     {"X-Trace": "t-1", "Content-Type": "text/plain", "Accept-Language": "fr-CA"})
        assert status == 201
        assert body == b"hello (processed)"
        assert headers["X-Reply"] == "hello Ann B"
        assert headers["Content-Type"] == "text/plain; charset=utf-8"
        assert "X-Blank" not in headers and "X-Trace" not in headers
        (answered,) = wait_for(lambda: web.queued("answered"))
        attributes = answered.attributes
        assert attributes["http.method"] == "POST"
        assert attributes["http.request.uri"] == "/api/greet"
        assert attributes["http.servlet.path"] == "/api/greet" and attributes["http.context.path"] == ""
        assert attributes["http.request.url"] == f"http://127.0.0.1:{port}/api/greet"
        assert attributes["http.query.string"] == "name=Ann B&flag"
        assert attributes["http.query.param.name"] == "Ann B" and attributes["http.query.param.flag"] == ""
        assert attributes["http.headers.X-Trace"] == "t-1"
        assert attributes["mime.type"] == "text/plain"
        assert attributes["http.remote.host"] == attributes["http.remote.addr"] == "127.0.0.1"
        assert attributes["http.local.name"] == "127.0.0.1"
        assert attributes["http.server.port"] == str(port)
        assert attributes["http.protocol"] == "HTTP/1.1"
        assert attributes["http.locale"] == "fr_CA"
        assert len(attributes["http.context.identifier"]) == 36
        assert "http.subject.dn" not in attributes
        uri = f"http://127.0.0.1@127.0.0.1:{port}/api/greet"
        (received,) = web.events(event_type="RECEIVE")
        assert received.transit_uri == uri and received.details == "Received from 127.0.0.1"
        (sent,) = web.events(event_type="SEND")
        assert sent.transit_uri == uri and sent.flowfile_uuid == answered.uuid


def test_methods_paths_and_keep_alive(tmp_path, port):
    request = {"Allow DELETE": "false", "Allow HEAD": "true", "Additional HTTP Methods": "patch, PROPFIND",
               "Allowed Paths": "/api/.*", "Hostname": "127.0.0.1"}
    with WebService(tmp_path, port, request) as web:
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for method in ("GET", "PUT", "PATCH", "PROPFIND", "HEAD"):
            client.request(method, "/api/thing", body=b"x" if method != "GET" else None)
            response = client.getresponse()
            response.read()
            assert response.status == 200, method
        client.close()
        for method in ("DELETE", "OPTIONS", "TRACE"):
            assert call(port, method, "/api/thing")[0] == 405, method
        status, body, _ = call(port, "GET", "/elsewhere")
        assert (status, body) == (404, b"Path Not Found")
        answered = wait_for(lambda: len(web.queued("answered")) == 5 and web.queued("answered"))
        methods = sorted(f.attributes["http.method"] for f in answered)
        assert methods == ["GET", "HEAD", "PATCH", "PROPFIND", "PUT"]
        assert answered[0].attributes["http.local.addr"] == "127.0.0.1"


def test_a_request_head_over_the_limit_is_answered_431(tmp_path, port):
    with WebService(tmp_path, port, {"Request Header Maximum Size": "1 KB"}) as web:
        assert call(port, headers={"X-Big": "b" * 2000})[0] == 431
        assert call(port, headers={"X-Small": "s"})[0] == 200
        assert len(wait_for(lambda: web.queued("answered"))) == 1


def test_a_full_context_map_answers_503(tmp_path, port):
    with WebService(tmp_path, port, context_map={"Maximum Outstanding Requests": "1"},
                    response_state="ENABLED") as web:
        first = Background(port, "POST", "/", b"first")
        wait_for(lambda: web.queued("req-resp"))
        status, body, _ = call(port, "POST", "/", b"second")
        assert status == 503 and b"Request Registration Failed" in body
        web.controller.start_processor("resp")
        assert first.join()[:2] == (200, b"first")
        assert [web.content(f) for f in wait_for(lambda: web.queued("answered"))] == [b"first"]


def test_a_full_outgoing_connection_answers_503(tmp_path, port):
    with WebService(tmp_path, port, response_state="ENABLED",
                    request_connection={"backPressureObjectThreshold": 1}) as web:
        first = Background(port, "POST", "/", b"first")
        wait_for(lambda: web.queued("req-resp"))
        status, body, _ = call(port, "POST", "/", b"second")
        assert status == 503 and b"No Available Relationships" in body
        web.controller.start_processor("resp")
        assert first.join()[0] == 200


def test_an_unanswered_request_expires_with_503_and_its_late_answer_fails(tmp_path, port):
    with WebService(tmp_path, port, context_map={"Request Expiration": "1 sec"}, response_state="ENABLED") as web:
        started = time.monotonic()
        status, body, _ = call(port, "POST", "/", b"too slow")
        assert status == 503 and b"Timeout occurred" in body
        assert 0.9 <= time.monotonic() - started < 5
        web.controller.start_processor("resp")
        (failed,) = wait_for(lambda: web.queued("failed"))
        assert web.content(failed) == b"too slow"
        identifier = failed.attributes["http.context.identifier"]
        assert any(f"no request is waiting under http.context.identifier '{identifier}'" in message
                   and "Request Expiration" in message for message in web.bulletins("resp"))
        assert web.queued("answered") == []


def test_multipart_parts_share_one_request(tmp_path, port):
    boundary = "b0undary"
    binary = bytes(range(256))
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhi there\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b.bin\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + binary + f"\r\n--{boundary}--\r\n".encode()
    request = {"Parameters to Attributes": "note"}
    with WebService(tmp_path, port, request, response={"X-Part": "${http.multipart.name}"}) as web:
        status, answer, headers = call(port, "POST", "/upload", body,
                                       {"Content-Type": f"multipart/form-data; boundary={boundary}"})
        assert status == 200
        answered = wait_for(lambda: web.queued("answered"))
        failed = wait_for(lambda: web.queued("failed"))  # the request was answered by the other part
        parts = {f.attributes["http.multipart.name"]: f for f in [*answered, *failed]}
        assert web.content(parts["note"]) == b"hi there" and web.content(parts["file"]) == binary
        assert answer == web.content(parts[headers["X-Part"]])
        file_attributes = parts["file"].attributes
        assert file_attributes["http.multipart.filename"] == "b.bin"
        assert file_attributes["http.multipart.content.type"] == "application/octet-stream"
        assert file_attributes["http.multipart.size"] == "256"
        assert file_attributes["http.multipart.fragments.sequence.number"] == "2"
        assert file_attributes["http.multipart.fragments.total.number"] == "2"
        assert file_attributes["http.headers.multipart.Content-Disposition"].startswith("form-data")
        assert file_attributes["http.param.note"] == "hi there"
        assert parts["note"].attributes["http.context.identifier"] == file_attributes["http.context.identifier"]


def test_multipart_over_the_limit_is_answered_413(tmp_path, port):
    body = b"--b\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n" + b"x" * 4096 + b"\r\n--b--\r\n"
    with WebService(tmp_path, port, {"Multipart Request Max Size": "1 KB"}) as web:
        status, _, _ = call(port, "POST", "/", body, {"Content-Type": "multipart/form-data; boundary=b"})
        assert status == 413
        assert web.queued("answered") == [] and web.queued("failed") == []


def test_form_and_query_parameters_to_attributes(tmp_path, port):
    with WebService(tmp_path, port, {"Parameters to Attributes": "a, b, c"}) as web:
        call(port, "POST", "/?a=1", b"b=two+words&c=%C3%A9&d=4", {"Content-Type": "application/x-www-form-urlencoded"})
        (answered,) = wait_for(lambda: web.queued("answered"))
        attributes = answered.attributes
        assert (attributes["http.param.a"], attributes["http.param.b"], attributes["http.param.c"]) == \
            ("1", "two words", "é")
        assert "http.param.d" not in attributes


def test_an_interrupted_body_is_answered_400_and_leaves_nothing(tmp_path, port):
    with WebService(tmp_path, port) as web:
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nonly ten b")
        client.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := client.recv(4096):
            answer += chunk
        client.close()
        assert answer.startswith(b"HTTP/1.1 400") and b"Stream Processing Failed" in answer
        assert call(port, "POST", "/", b"next")[:2] == (200, b"next")
        assert [web.content(f) for f in wait_for(lambda: web.queued("answered"))] == [b"next"]


def test_a_restart_releases_and_takes_the_port_again(tmp_path, port):
    with WebService(tmp_path, port) as web:
        assert call(port)[0] == 200
        assert web.controller.stop_processor("req", wait=10)
        assert port_is_free(port)
        web.controller.start_processor("req")
        wait_for(lambda: not port_is_free(port))
        assert call(port, "POST", "/", b"again")[:2] == (200, b"again")


def test_stopping_answers_the_waiting_requests_503(tmp_path, port, monkeypatch):
    from engine.processors import handle_http_request

    monkeypatch.setattr(handle_http_request, "STOP_GRACE", 0.5)
    with WebService(tmp_path, port, response_state="ENABLED") as web:
        waiting = Background(port, "POST", "/", b"never answered")
        wait_for(lambda: web.queued("req-resp"))
        assert web.controller.stop_processor("req", wait=10)
        status, body, _ = waiting.join()
        assert status == 503 and b"stopped" in body
        assert port_is_free(port)


# -- TLS ----------------------------------------------------------------------------------------

def client_with_names(pki: Pki) -> Identity:
    """A client certificate carrying subject alternative names."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    subject = x509.Name([x509.NameAttribute(x509.NameOID.COUNTRY_NAME, "US"),
                         x509.NameAttribute(x509.NameOID.ORGANIZATION_NAME, "Flowsite Test"),
                         x509.NameAttribute(x509.NameOID.COMMON_NAME, "client-two")])
    certificate = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(pki.ca.certificate.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("client.example.com"),
                                                    x509.RFC822Name("ops@example.com")]), critical=False)
        .sign(pki.ca.key, hashes.SHA256()))
    return Identity(key, certificate)


def test_https_with_client_authentication(tmp_path, port):
    pki = Pki.create(tmp_path / "pki")
    services = [{"identifier": "ssl", "name": "ssl", "type": SSL_SERVICE, "properties": pki.server_service("PKCS12"),
                 "scheduledState": "ENABLED"}]
    request = {"SSL Context Service": "ssl", "Client Authentication": "Need Authentication"}
    client = ssl.create_default_context(cafile=pki.pem_truststore("client-ca.pem"))
    client.load_cert_chain(str(write_pem_keystore(tmp_path / "client-two.pem", client_with_names(pki), pki.ca)))
    with WebService(tmp_path, port, request, services=services,
                    response={"Attributes for HTTP Response": "http\\.subject\\.dn"}) as web:
        status, body, headers = call(port, "PUT", "/secure", b"over tls", context=client)
        assert (status, body) == (200, b"over tls")
        assert headers["http.subject.dn"] == "CN=client-two, O=Flowsite Test, C=US"
        (answered,) = wait_for(lambda: web.queued("answered"))
        attributes = answered.attributes
        assert attributes["http.issuer.dn"] == "CN=Flowsite Test CA, O=Flowsite Test, C=US"
        assert attributes["http.certificate.sans.0.nameType"] == "dNSName"
        assert attributes["http.certificate.sans.0.name"] == "client.example.com"
        assert attributes["http.certificate.sans.1.nameType"] == "rfc822Name"
        assert attributes["http.certificate.sans.1.name"] == "ops@example.com"
        assert attributes["http.request.url"] == f"https://localhost:{port}/secure"
        (received,) = web.events(event_type="RECEIVE")
        assert received.transit_uri == f"https://127.0.0.1@127.0.0.1:{port}/secure"
        assert received.details == "Received from 127.0.0.1 with DN=CN=client-two, O=Flowsite Test, C=US"
        anonymous = ssl.create_default_context(cafile=pki.pem_truststore("client-ca.pem"))
        with pytest.raises((ssl.SSLError, ConnectionError)):
            call(port, "GET", "/secure", context=anonymous)
        with pytest.raises((ssl.SSLError, ConnectionError, http.client.HTTPException)):
            call(port, "GET", "/plain text to a TLS port")


def test_https_without_client_authentication_takes_anonymous_clients(tmp_path, port):
    pki = Pki.create(tmp_path / "pki")
    services = [{"identifier": "ssl", "name": "ssl", "type": SSL_SERVICE, "properties": pki.server_service("PEM"),
                 "scheduledState": "ENABLED"}]
    anonymous = ssl.create_default_context(cafile=pki.pem_truststore("client-ca.pem"))
    with WebService(tmp_path, port, {"SSL Context Service": "ssl"}, services=services) as web:
        assert call(port, "GET", "/", context=anonymous)[0] == 200
        (answered,) = wait_for(lambda: web.queued("answered"))
        assert "http.subject.dn" not in answered.attributes


# -- confinement ----------------------------------------------------------------------------------

def test_a_tenant_listens_only_on_its_granted_ports(tmp_path, port):
    services = {"map": ("StandardHttpContextMap", {})}
    properties = {"Listening Port": str(port), "HTTP Context Map": "map"}
    with ProcessorTestRunner("HandleHttpRequest", tmp_path, properties, input=False, services=services,
                             tenant={"listenPorts": None}) as runner:
        assert runner.run(stop=False)[0].value == "failed"
        assert any(f"refused listening on port {port}: tenant acme may not listen" in message
                   for message in runner.bulletins), runner.bulletins
        assert port_is_free(port)
        runner.stop()
    with ProcessorTestRunner("HandleHttpRequest", tmp_path, properties, input=False, services=services,
                             tenant={"listenPorts": [port, port]}) as runner:
        runner.run(stop=False)
        assert not port_is_free(port)
        runner.stop()
        assert port_is_free(port)


# -- HandleHttpResponse on its own, and configurations ----------------------------------------------

def respond_runner(tmp_path, **properties):
    return ProcessorTestRunner("HandleHttpResponse", tmp_path,
                               {"HTTP Status Code": "200", "HTTP Context Map": "map", **properties},
                               services={"map": ("StandardHttpContextMap", {})})


def test_flowfiles_that_cannot_be_answered_go_to_failure_saying_why(tmp_path):
    with respond_runner(tmp_path, **{"HTTP Status Code": "${code}"}) as runner:
        runner.enqueue(b"no id")
        runner.enqueue(b"unknown id", **{"http.context.identifier": "gone-1", "code": "200"})
        runner.enqueue(b"bad status", **{"http.context.identifier": "gone-2", "code": "abc"})
        runner.run(3)
        assert sorted(runner.content(f) for f in runner.output("failure")) == [b"bad status", b"no id",
                                                                              b"unknown id"]
        messages = "\n".join(runner.bulletins)
        assert "has no 'http.context.identifier' attribute" in messages
        assert "no request is waiting under http.context.identifier 'gone-1'" in messages
        assert "the HTTP Status Code is 'abc'" in messages


def test_nifi_exports_are_valid(tmp_path, port):
    request = {"Listening Port": str(port), "Hostname": None, "SSL Context Service": None,
               "HTTP Protocols": "HTTP_1_1", "HTTP Context Map": "map", "Allowed Paths": None,
               "Default URL Character Set": "UTF-8", "Allow GET": "true", "Allow POST": "true", "Allow PUT": "true",
               "Allow DELETE": "true", "Allow HEAD": "false", "Allow OPTIONS": "false", "Maximum Threads": "200",
               "Request Header Maximum Size": "8 KB", "Additional HTTP Methods": None,
               "Client Authentication": "No Authentication", "container-queue-size": "50",
               "multipart-request-max-size": "1 MB", "multipart-read-buffer-size": "512 KB",
               "parameters-to-attributes": None}
    services = {"map": ("org.apache.nifi.http.StandardHttpContextMap",
                        {"Maximum Outstanding Requests": "5000", "Request Expiration": "1 min"})}
    with ProcessorTestRunner("org.apache.nifi.processors.standard.HandleHttpRequest", tmp_path, request,
                             input=False, services=services) as runner:
        assert runner.validate() == []
    response = {"HTTP Status Code": "200", "HTTP Context Map": "map",
                "Attributes to add to the HTTP Response (Regex)": "X-.*", "Content-Type": "${mime.type}"}
    with ProcessorTestRunner("org.apache.nifi.processors.standard.HandleHttpResponse", tmp_path, response,
                             services=services) as runner:
        assert runner.validate() == []


def test_invalid_configurations_are_reported(tmp_path):
    services = {"map": ("StandardHttpContextMap", {"Maximum Outstanding Requests": "0"})}
    properties = {"Listening Port": "70000", "HTTP Context Map": "map", "Allowed Paths": "(",
                  "Allow GET": "maybe", "Maximum Threads": "2", "Container Queue Size": "0"}
    with ProcessorTestRunner("HandleHttpRequest", tmp_path, properties, input=False) as runner:
        problems = "\n".join(runner.validate())
        for name in ("Listening Port", "Allowed Paths", "Allow GET", "Maximum Threads", "Container Queue Size",
                     "HTTP Context Map"):
            assert f"'{name}'" in problems, name
    with pytest.raises(Exception, match="Maximum Outstanding Requests"):
        ProcessorTestRunner("HandleHttpResponse", tmp_path, {"HTTP Status Code": "200", "HTTP Context Map": "map"},
                            services=services)


def test_a_full_disk_answers_500_and_keeps_nothing(tmp_path, port, monkeypatch):
    from engine.processors import handle_http_request

    monkeypatch.setattr(handle_http_request, "STOP_GRACE", 0.2)
    services = {"map": ("StandardHttpContextMap", {})}
    properties = {"Listening Port": str(port), "HTTP Context Map": "map"}
    with ProcessorTestRunner("HandleHttpRequest", tmp_path, properties, input=False, services=services) as runner:
        runner.run(1, stop=False)
        receiver = runner.node.processor._receiver
        plan = FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write", "sync"}, persistent=True)
        with plan.installed():
            request = Background(port, "POST", "/", b"x" * 200_000)
            wait_for(lambda: receiver.pending.qsize())
            runner.run(1, stop=False)
        status, body, _ = request.join()
        assert status == 500 and b"could not be stored" in body and b"No space left on device" in body
        assert plan.failures and runner.output("success") == []
        assert any("could not store the POST request for / from 127.0.0.1" in m for m in runner.bulletins)
        healed = Background(port, "POST", "/", b"after")
        wait_for(lambda: receiver.pending.qsize())
        runner.run(1, stop=False)
        (flowfile,) = runner.output("success")
        assert runner.content(flowfile) == b"after"
        runner.stop()
        assert healed.join()[0] == 503  # stopped before anyone answered it


def test_a_full_container_queue_answers_503_and_stopping_answers_the_queued(tmp_path, port):
    services = {"map": ("StandardHttpContextMap", {})}
    properties = {"Listening Port": str(port), "HTTP Context Map": "map", "Container Queue Size": "1"}
    with ProcessorTestRunner("HandleHttpRequest", tmp_path, properties, input=False, services=services) as runner:
        runner.run(1, stop=False)
        receiver = runner.node.processor._receiver
        queued = Background(port, "GET", "/first")
        wait_for(lambda: receiver.pending.qsize())
        status, body, _ = call(port, "GET", "/second")
        assert status == 503 and b"Request Queue Full" in body
        runner.stop()
        status, body, _ = queued.join()
        assert status == 503 and b"Stopping Server" in body
        assert runner.output("success") == []


def test_a_client_gone_before_its_answer_sends_the_flowfile_to_failure(tmp_path, port):
    with WebService(tmp_path, port, response_state="ENABLED") as web:
        client = socket.create_connection(("127.0.0.1", port))
        body = b"z" * (8 << 20)
        client.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        wait_for(lambda: web.queued("req-resp"))
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()  # reset: the answer has nowhere to go
        web.controller.start_processor("resp")
        (failed,) = wait_for(lambda: web.queued("failed"))
        assert failed.size == len(body)
        assert any("could not answer the HTTP request" in message for message in web.bulletins("resp"))
        assert web.queued("answered") == []
        assert call(port, "POST", "/", b"still serving")[:2] == (200, b"still serving")


def test_a_request_no_task_takes_is_answered_503_after_the_expiration(tmp_path, port):
    services = {"map": ("StandardHttpContextMap", {"Request Expiration": "1 sec"})}
    properties = {"Listening Port": str(port), "HTTP Context Map": "map"}
    with ProcessorTestRunner("HandleHttpRequest", tmp_path, properties, input=False, services=services) as runner:
        runner.run(1, stop=False)  # the server runs; no task is triggered after this one
        started = time.monotonic()
        status, body, _ = call(port, "POST", "/", b"nobody takes me")
        assert status == 503 and b"Timeout occurred" in body
        assert 0.9 <= time.monotonic() - started < 5
        runner.run(1, stop=False)
        assert runner.output("success") == []  # the answered request is not made a FlowFile afterwards
        runner.stop()
