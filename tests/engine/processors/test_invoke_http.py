"""InvokeHTTP against real local HTTP and HTTPS servers."""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time

import pytest

from engine.processors.invoke_http import InvokeHTTP
from engine.testing import ProcessorTestRunner
from tests.engine.httpserver import start_server
from tests.engine.pki import Pki
from tests.servers import free_port

SSL_SERVICE = "StandardSSLContextService"


@pytest.fixture
def server():
    test_server = start_server()
    yield test_server
    test_server.close()


@pytest.fixture
def pki(tmp_path):
    return Pki.create(tmp_path / "pki")


def make_runner(tmp_path, properties, **kwargs):
    return ProcessorTestRunner(InvokeHTTP, tmp_path, properties, **kwargs)


def event_types(runner, uuid=None):
    events = runner.events(flowfile_uuid=uuid) if uuid else runner.events()
    return [event.event_type.value for event in events]


def now_ms():
    return int(time.time() * 1000)


def is_yielded(runner):
    return runner.node.yield_expiration > runner.node.runtime.clock.monotonic()


# -- status routing ---------------------------------------------------------------------------

def test_2xx_routes_request_to_original_and_body_to_a_response_child(tmp_path, server):
    with make_runner(tmp_path, {"HTTP URL": server.url("/status/200")}) as runner:
        request = runner.enqueue(b"", filename="req.txt")
        runner.run()
        (original,) = runner.output("Original")
        (response,) = runner.output("Response")
        assert original.uuid == request.uuid
        assert original.attributes["invokehttp.status.code"] == "200"
        assert original.attributes["invokehttp.status.message"] == "OK"
        assert original.attributes["invokehttp.request.url"] == server.url("/status/200")
        assert original.attributes["invokehttp.response.url"] == server.url("/status/200")
        assert int(original.attributes["invokehttp.request.duration"]) >= 0
        assert len(original.attributes["invokehttp.tx.id"]) == 36
        assert runner.content(response) == b"status 200 body"
        assert response.attributes["mime.type"] == "text/plain; charset=utf-8"
        assert response.attributes["X-Status"] == "200"
        assert response.attributes["invokehttp.tx.id"] == original.attributes["invokehttp.tx.id"]
        assert response.attributes["filename"] == "req.txt"  # inherited from its parent
        assert original.penalty_expiration == 0
        fork = [e for e in runner.events() if e.event_type.value == "FORK"]
        assert fork and fork[0].flowfile_uuid == request.uuid and list(fork[0].child_uuids) == [response.uuid]
        fetch = runner.events(flowfile_uuid=response.uuid, event_type="FETCH")
        assert fetch and fetch[0].transit_uri == server.url("/status/200")
        assert "SEND" not in event_types(runner)  # a GET sends no content
        assert not runner.output("Retry") and not runner.output("No Retry") and not runner.output("Failure")


def test_5xx_routes_to_retry_penalized_with_the_body_in_an_attribute(tmp_path, server):
    with make_runner(tmp_path, {"HTTP URL": server.url("/status/503")}) as runner:
        runner.enqueue(b"x")
        runner.run()
        (retry,) = runner.output("Retry")
        assert retry.attributes["invokehttp.status.code"] == "503"
        assert retry.attributes["invokehttp.response.body"] == "status 503 body"
        assert retry.penalty_expiration > now_ms()
        assert not runner.output("Response") and not runner.output("Original")
        assert not is_yielded(runner)


@pytest.mark.parametrize("code", [404, 400, 302])
def test_3xx_and_4xx_route_to_no_retry_unpenalized(tmp_path, server, code):
    properties = {"HTTP URL": server.url(f"/status/{code}"), "Response Redirects Enabled": "False"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"x")
        runner.run()
        (no_retry,) = runner.output("No Retry")
        assert no_retry.attributes["invokehttp.status.code"] == str(code)
        assert no_retry.penalty_expiration == 0
        assert no_retry.attributes["invokehttp.response.body"] == f"status {code} body"
        assert not runner.output("Response")


def test_1xx_final_status_routes_to_no_retry(tmp_path):
    # http.server cannot send a final 1xx response: a raw socket server does.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve():
        connection, _ = listener.accept()
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 199 Odd\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
    try:
        with make_runner(tmp_path, {"HTTP URL": url}) as runner:
            runner.enqueue(b"x")
            runner.run()
            (no_retry,) = runner.output("No Retry")
            assert no_retry.attributes["invokehttp.status.code"] == "199"
    finally:
        listener.close()


def test_failure_penalization_penalizes_no_retry(tmp_path, server):
    properties = {"HTTP URL": server.url("/status/404"), "Request Failure Penalization Enabled": "true"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"x")
        runner.run()
        (no_retry,) = runner.output("No Retry")
        assert no_retry.penalty_expiration > now_ms()


def test_response_generation_required_makes_a_response_for_any_status(tmp_path, server):
    properties = {"HTTP URL": server.url("/status/500"), "Response Generation Required": "true"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"x")
        runner.run()
        (retry,) = runner.output("Retry")
        (response,) = runner.output("Response")
        assert runner.content(response) == b"status 500 body"
        assert response.attributes["invokehttp.status.code"] == "500"
        assert retry.attributes["invokehttp.response.body"] == "status 500 body"


# -- request building -------------------------------------------------------------------------

def test_post_streams_content_with_content_type_and_records_send(tmp_path, server):
    properties = {"HTTP Method": "POST", "HTTP URL": server.url("/echo")}
    with make_runner(tmp_path, properties) as runner:
        request = runner.enqueue(b"hello body", **{"mime.type": "text/csv"})
        runner.run()
        (response,) = runner.output("Response")
        assert runner.content(response) == b"hello body"
        recorded = server.requests[-1]
        assert recorded.method == "POST" and recorded.body == b"hello body"
        assert recorded.headers["Content-Type"] == "text/csv"
        assert recorded.headers["Content-Length"] == "10"
        send = runner.events(flowfile_uuid=request.uuid, event_type="SEND")
        assert send and send[0].transit_uri == server.url("/echo")


def test_post_without_mime_type_uses_octet_stream_and_body_can_be_disabled(tmp_path, server):
    with make_runner(tmp_path, {"HTTP Method": "PUT", "HTTP URL": server.url("/echo")}) as runner:
        runner.enqueue(b"abc")
        runner.run()
        assert server.requests[-1].headers["Content-Type"] == "application/octet-stream"
    properties = {"HTTP Method": "POST", "HTTP URL": server.url("/echo"), "Request Body Enabled": "false"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"not sent")
        runner.run()
        assert server.requests[-1].body == b"" and server.requests[-1].headers["Content-Length"] == "0"


def test_method_and_url_are_expressions_over_attributes(tmp_path, server):
    properties = {"HTTP Method": "${verb}", "HTTP URL": server.url("/${target}")}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"payload", verb="patch", target="echo")
        runner.run()
        (response,) = runner.output("Response")
        assert response.attributes["X-Method"] == "PATCH"
        assert server.requests[-1].body == b"payload"


def test_get_and_delete_send_no_body(tmp_path, server):
    with make_runner(tmp_path, {"HTTP Method": "DELETE", "HTTP URL": server.url("/echo")}) as runner:
        runner.enqueue(b"content stays home")
        runner.run()
        recorded = server.requests[-1]
        assert recorded.method == "DELETE" and recorded.body == b""
        assert "Content-Length" not in recorded.headers and "Transfer-Encoding" not in recorded.headers


def test_headers_from_dynamic_properties_and_matching_attributes(tmp_path, server):
    properties = {"HTTP URL": server.url("/headers"), "Request Header Attributes Pattern": "x-.*|invokehttp.*",
                  "X-Static": "fixed", "X-From-Expression": "${customer:toUpper()}",
                  "Request User-Agent": "flowsite-agent/${version}", "Request Date Header Enabled": "True"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"", customer="acme", version="7", **{"x-trace": "  t-1  ", "other": "no",
                                                            "invokehttp.status.code": "999"})
        runner.run()
        headers = server.requests[-1].headers
        assert headers["X-Static"] == "fixed"
        assert headers["X-From-Expression"] == "ACME"
        assert headers["x-trace"] == "t-1"
        assert "other" not in headers
        assert "invokehttp.status.code" not in headers
        assert headers["User-Agent"] == "flowsite-agent/7"
        assert headers["Date"].endswith(" GMT")


def test_date_header_can_be_disabled(tmp_path, server):
    properties = {"HTTP URL": server.url("/headers"), "Request Date Header Enabled": "False"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"")
        runner.run()
        assert "Date" not in server.requests[-1].headers


def test_chunked_transfer_and_gzip_content_encoding(tmp_path, server):
    properties = {"HTTP Method": "POST", "HTTP URL": server.url("/echo"),
                  "Request Chunked Transfer-Encoding Enabled": "true"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"chunked please")
        runner.run()
        recorded = server.requests[-1]
        assert recorded.headers["Transfer-Encoding"] == "chunked" and "Content-Length" not in recorded.headers
        assert recorded.body == b"chunked please"
    properties = {"HTTP Method": "POST", "HTTP URL": server.url("/echo"), "Request Content-Encoding": "GZIP"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"squeeze me " * 1000)
        runner.run()
        recorded = server.requests[-1]
        assert recorded.headers["Content-Encoding"] == "gzip"
        assert recorded.body == b"squeeze me " * 1000  # the test server decompressed it


def test_multipart_form_data_with_fields_and_content(tmp_path, server):
    properties = {"HTTP Method": "POST", "HTTP URL": server.url("/echo"),
                  "Request Multipart Form-Data Name": "upload", "post:form:owner": "${who}"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"file bytes", filename="data.bin", who="bob", **{"mime.type": "text/plain"})
        runner.run()
        recorded = server.requests[-1]
        content_type = recorded.headers["Content-Type"]
        assert content_type.startswith("multipart/form-data; boundary=")
        assert int(recorded.headers["Content-Length"]) == len(recorded.body)
        import email.parser

        message = email.parser.BytesParser().parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + recorded.body)
        parts = {part.get_param("name", header="Content-Disposition"): part for part in message.get_payload()}
        assert parts["owner"].get_payload(decode=True) == b"bob"
        assert parts["upload"].get_payload(decode=True) == b"file bytes"
        assert parts["upload"].get_filename() == "data.bin"
        assert parts["upload"].get_content_type() == "text/plain"


def test_basic_authentication(tmp_path, server):
    properties = {"HTTP URL": server.url("/basic"), "Request Username": "alice", "Request Password": "wonder land"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"")
        runner.run()
        (response,) = runner.output("Response")
        assert runner.content(response) == b"welcome"
    properties["Request Password"] = "wrong"
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"")
        runner.run()
        (no_retry,) = runner.output("No Retry")
        assert no_retry.attributes["invokehttp.status.code"] == "401"


def test_digest_authentication_answers_the_challenge(tmp_path, server):
    properties = {"HTTP Method": "POST", "HTTP URL": server.url("/digest?x=1"), "Request Username": "alice",
                  "Request Password": "wonder land", "Request Digest Authentication Enabled": "true"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"twice sent")
        runner.run()
        (response,) = runner.output("Response")
        assert runner.content(response) == b"digest welcome"
        first, second = server.requests[-2:]
        assert "Authorization" not in first.headers and second.headers["Authorization"].startswith("Digest ")
        assert second.body == b"twice sent"


# -- response handling ------------------------------------------------------------------------

def test_response_body_attribute_replaces_the_response_flowfile(tmp_path, server):
    properties = {"HTTP URL": server.url("/status/200"), "Response Body Attribute Name": "reply",
                  "Response Body Attribute Size": "6"}
    with make_runner(tmp_path, properties) as runner:
        request = runner.enqueue(b"")
        runner.run()
        (original,) = runner.output("Original")
        assert original.attributes["reply"] == "status"
        assert not runner.output("Response")
        events = runner.events(flowfile_uuid=request.uuid, event_type="ATTRIBUTES_MODIFIED")
        assert any(e.details and e.details.startswith("Response Body Attribute Added [reply]") for e in events)


def test_response_body_ignored_leaves_response_empty(tmp_path, server):
    properties = {"HTTP URL": server.url("/status/200"), "Response Body Ignored": "true"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"")
        runner.run()
        (response,) = runner.output("Response")
        assert runner.content(response) == b"" and "mime.type" not in response.attributes


def test_response_headers_on_the_request_with_a_prefix(tmp_path, server):
    properties = {"HTTP URL": server.url("/multi-header"), "Response Header Request Attributes Enabled": "true",
                  "Response Header Request Attributes Prefix": "resp."}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"")
        runner.run()
        (original,) = runner.output("Original")
        (response,) = runner.output("Response")
        assert original.attributes["resp.X-Repeated"] == "a, b"
        assert response.attributes["X-Repeated"] == "a, b"
        assert "resp.X-Repeated" not in response.attributes


def test_url_path_naming_strategy(tmp_path, server):
    properties = {"HTTP URL": server.url("/files/report.csv"), "Response FlowFile Naming Strategy": "URL_PATH"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"", filename="request-name")
        runner.run()
        (response,) = runner.output("Response")
        assert response.attributes["filename"] == "report.csv"


def test_redirects_are_followed_and_the_final_url_recorded(tmp_path, server):
    with make_runner(tmp_path, {"HTTP URL": server.url("/redirect/3")}) as runner:
        runner.enqueue(b"")
        runner.run()
        (original,) = runner.output("Original")
        assert original.attributes["invokehttp.response.url"] == server.url("/echo")
        assert original.attributes["invokehttp.request.url"] == server.url("/redirect/3")
        assert [r.path for r in server.requests[-4:]] == ["/redirect/3", "/redirect/2", "/redirect/1", "/echo"]


def test_303_turns_a_post_into_a_get(tmp_path, server):
    with make_runner(tmp_path, {"HTTP Method": "POST", "HTTP URL": server.url("/see-other")}) as runner:
        runner.enqueue(b"data")
        runner.run()
        (response,) = runner.output("Response")
        assert response.attributes["X-Method"] == "GET"
        assert server.requests[-1].body == b""


def test_cookies_are_kept_with_accept_all(tmp_path, server):
    properties = {"HTTP URL": server.url("/cookie/${step}"), "Response Cookie Strategy": "ACCEPT_ALL"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"", step="set")
        runner.enqueue(b"", step="check")
        runner.run(2)
        contents = sorted(runner.content(f) for f in runner.output("Response"))
        assert contents == [b"session=abc123", b"set"]
    properties["Response Cookie Strategy"] = "DISABLED"
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"", step="set")
        runner.enqueue(b"", step="check")
        runner.run(2)
        assert sorted(runner.content(f) for f in runner.output("Response")) == [b"none", b"set"]


def test_large_bodies_are_streamed_both_ways(tmp_path, server):
    size = 12 * 1024 * 1024
    data = bytes(range(256)) * (size // 256)
    with make_runner(tmp_path, {"HTTP Method": "POST", "HTTP URL": server.url("/echo")}) as runner:
        runner.enqueue(data)
        runner.run()
        (response,) = runner.output("Response")
        assert response.size == size and runner.content(response) == data
    with make_runner(tmp_path, {"HTTP URL": server.url(f"/large/{size}")}) as runner:
        runner.enqueue(b"")
        runner.run()
        (response,) = runner.output("Response")
        assert response.size == size


def test_idle_connections_are_reused_unless_zero(tmp_path, server):
    with make_runner(tmp_path, {"HTTP URL": server.url("/status/200")}) as runner:
        for _ in range(3):
            runner.enqueue(b"")
        runner.run()
        assert len({r.client_port for r in server.requests[-3:]}) == 1
    with make_runner(tmp_path, {"HTTP URL": server.url("/status/200"), "Socket Idle Connections": "0"}) as runner:
        for _ in range(3):
            runner.enqueue(b"")
        runner.run()
        assert len({r.client_port for r in server.requests[-3:]}) == 3


# -- failures ---------------------------------------------------------------------------------

def test_read_timeout_routes_to_failure_penalized_with_the_exception(tmp_path, server):
    properties = {"HTTP URL": server.url("/slow"), "Socket Read Timeout": "300 ms"}
    with make_runner(tmp_path, properties) as runner:
        runner.enqueue(b"")
        runner.run()
        (failed,) = runner.output("Failure")
        assert failed.attributes["invokehttp.java.exception.class"] == "urllib3.exceptions.ReadTimeoutError"
        assert "timed out" in failed.attributes["invokehttp.java.exception.message"]
        assert failed.penalty_expiration > now_ms()
        assert not is_yielded(runner)  # the server answered the connection: it is not down


def test_server_down_routes_to_failure_and_yields(tmp_path):
    port = free_port()  # nothing listens there
    with make_runner(tmp_path, {"HTTP URL": f"http://127.0.0.1:{port}/"}) as runner:
        runner.enqueue(b"first")
        runner.enqueue(b"second")
        runner.run()
        (failed,) = runner.output("Failure")
        assert failed.attributes["invokehttp.java.exception.class"] == "urllib3.exceptions.NewConnectionError"
        assert "refused" in failed.attributes["invokehttp.java.exception.message"].lower()
        assert failed.penalty_expiration > now_ms()
        assert is_yielded(runner)
        assert len(runner.input_flowfiles()) == 1  # the rest of the batch waits for the server


def test_write_timeout_when_the_server_stops_reading(tmp_path):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted = []
    thread = threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True)
    thread.start()
    properties = {"HTTP Method": "POST", "HTTP URL": f"http://127.0.0.1:{listener.getsockname()[1]}/",
                  "Socket Write Timeout": "300 ms", "Socket Read Timeout": "30 s"}
    try:
        with make_runner(tmp_path, properties) as runner:
            runner.enqueue(b"x" * (16 * 1024 * 1024))
            started = time.monotonic()
            runner.run()
            assert time.monotonic() - started < 10
            (failed,) = runner.output("Failure")
            assert "timed out" in failed.attributes["invokehttp.java.exception.message"]
    finally:
        for connection, _ in accepted:
            connection.close()
        listener.close()


def test_invalid_url_after_evaluation_routes_to_failure(tmp_path):
    with make_runner(tmp_path, {"HTTP URL": "${target}"}) as runner:
        runner.enqueue(b"", target="ftp://example.invalid/file")
        runner.run()
        (failed,) = runner.output("Failure")
        assert failed.attributes["invokehttp.java.exception.class"] == "ValueError"


# -- TLS --------------------------------------------------------------------------------------

def _tls_server(pki, require_client_cert):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    keystore = pki.pem_keystore(pki.server, "test-server.pem")
    context.load_cert_chain(keystore)
    if require_client_cert:
        context.load_verify_locations(pki.pem_truststore("test-server-trust.pem"))
        context.verify_mode = ssl.CERT_REQUIRED
    return start_server(context)


@pytest.mark.parametrize("kind", ["PKCS12", "PEM"])
def test_https_with_a_client_certificate(tmp_path, pki, kind):
    tls = _tls_server(pki, require_client_cert=True)
    try:
        properties = {"HTTP URL": tls.url("/status/200"), "SSL Context Service": "ssl"}
        services = {"ssl": (SSL_SERVICE, pki.client_service(kind))}
        with make_runner(tmp_path, properties, services=services) as runner:
            runner.enqueue(b"")
            runner.run()
            (response,) = runner.output("Response")
            assert response.attributes["invokehttp.remote.dn"] == "CN=localhost,O=Flowsite Test,C=US"
            assert dict(x[0] for x in tls.requests[-1].peer_subject)["commonName"] == "client-one"
    finally:
        tls.close()


def test_https_without_a_trusted_certificate_fails(tmp_path, pki):
    tls = _tls_server(pki, require_client_cert=False)
    other = Pki.create(tmp_path / "other-pki")
    try:
        properties = {"HTTP URL": tls.url("/status/200"), "SSL Context Service": "ssl"}
        services = {"ssl": (SSL_SERVICE, other.client_service("PEM", with_key=False))}
        with make_runner(tmp_path, properties, services=services) as runner:
            runner.enqueue(b"")
            runner.run()
            (failed,) = runner.output("Failure")
            assert "certificate verify failed" in failed.attributes["invokehttp.java.exception.message"]
    finally:
        tls.close()


# -- without incoming connection --------------------------------------------------------------

def test_source_mode_sends_one_request_per_run_with_receive(tmp_path, server):
    with make_runner(tmp_path, {"HTTP URL": server.url("/status/200")}, input=False) as runner:
        runner.run(2)
        responses = runner.output("Response")
        assert len(responses) == 2
        assert not runner.output("Original")
        for response in responses:
            assert event_types(runner, response.uuid) == ["RECEIVE"]


def test_source_mode_with_body_attribute_creates_a_request_flowfile(tmp_path, server):
    properties = {"HTTP URL": server.url("/status/200"), "Response Body Attribute Name": "reply"}
    with make_runner(tmp_path, properties, input=False) as runner:
        runner.run()
        (original,) = runner.output("Original")
        assert original.attributes["reply"] == "status 200 body"


def test_source_mode_post_does_nothing(tmp_path, server):
    before = len(server.requests)
    with make_runner(tmp_path, {"HTTP Method": "POST", "HTTP URL": server.url("/echo")}, input=False) as runner:
        runner.run()
        assert len(server.requests) == before
        assert not runner.output("Response")


def test_source_mode_yields_on_errors_and_non_2xx(tmp_path, server):
    with make_runner(tmp_path, {"HTTP URL": server.url("/status/500")}, input=False) as runner:
        runner.run()
        assert is_yielded(runner) and not runner.output("Response")
    with make_runner(tmp_path, {"HTTP URL": "http://127.0.0.1:1/"}, input=False) as runner:
        runner.run()
        assert is_yielded(runner)
        assert any("request failed" in message for message in runner.bulletins)


# -- configuration ----------------------------------------------------------------------------

def test_nifi_1x_property_names_load(tmp_path, server):
    properties = {"Remote URL": server.url("/status/200"), "Read Timeout": "9 secs", "send-message-body": "true",
                  "Follow Redirects": "True", "Put Response Body In Attribute": "reply",
                  "Max Length To Put In Attribute": "3", "Proxy Type": "http", "Proxy Host": None,
                  "Attributes to Send": "a.*", "Useragent": "legacy", "Always Output Response": "false",
                  "Include Date Header": "True", "Penalize on \"No Retry\"": "false", "Content-Type": "${mime.type}"}
    with make_runner(tmp_path, properties) as runner:
        assert runner.validate() == []
        assert runner.node.properties["Socket Read Timeout"] == "9 secs"
        runner.enqueue(b"", abc="1")
        runner.run()
        (original,) = runner.output("Original")
        assert original.attributes["reply"] == "sta"
        assert server.requests[-1].headers["abc"] == "1"
        assert server.requests[-1].headers["User-Agent"] == "legacy"


def test_invalid_configurations_are_reported(tmp_path):
    properties = {"HTTP URL": "not a url", "Connection Timeout": "soon", "Socket Idle Connections": "-1",
                  "Response Cache Enabled": "true", "Response Body Attribute Size": "0",
                  "Response Body Attribute Name": "x", "Request Header Attributes Pattern": "(unclosed"}
    with make_runner(tmp_path, properties) as runner:
        problems = "\n".join(runner.validate())
        assert "'HTTP URL'" in problems
        assert "'Connection Timeout'" in problems
        assert "'Socket Idle Connections'" in problems
        assert "'Response Cache Enabled'" in problems
        assert "'Response Body Attribute Size'" in problems
        assert "'Request Header Attributes Pattern'" in problems
    with make_runner(tmp_path, {"HTTP URL": "http://h/", "HTTP Method": "POST", "post:form:a": "b"}) as runner:
        assert any("Request Multipart Form-Data Name" in p for p in runner.validate())
    with make_runner(tmp_path, {"HTTP URL": "http://h/", "Proxy Host": "proxy", "Proxy Type": "http"}) as runner:
        assert any("'Proxy Host' is set, but proxies are not available" in p for p in runner.validate())
    with make_runner(tmp_path, {"HTTP URL": "http://h/", "oauth2-access-token-provider": "tokens"}) as runner:
        assert any("OAuth2 access token providers are not available" in p for p in runner.validate())
    nifi2_defaults = {"HTTP URL": "http://h/", "OAuth2 Access Token Refresh Strategy": "ON_TOKEN_EXPIRATION",
                      "Request OAuth2 Access Token Provider": None, "proxy-configuration-service": None}
    with make_runner(tmp_path, nifi2_defaults) as runner:
        assert runner.validate() == []
    with make_runner(tmp_path, {"HTTP URL": "http://h/", "bad header": "x"}) as runner:
        assert any("'bad header' is not a valid HTTP header name" in p for p in runner.validate())
    with make_runner(tmp_path, {"HTTP URL": "http://h/", "SSL Context Service": "missing"}) as runner:
        assert any("'SSL Context Service'" in p for p in runner.validate())


def test_relationships_are_nifis():
    assert [r.name for r in InvokeHTTP.relationships] == ["Original", "Response", "Retry", "No Retry", "Failure"]


def test_headers_endpoint_sees_repeated_headers_once_each(tmp_path, server):
    properties = {"HTTP URL": server.url("/headers"), "Request Header Attributes Pattern": "X-Trace"}
    with make_runner(tmp_path, {**properties, "X-Trace": "from-property"}) as runner:
        runner.enqueue(b"", **{"X-Trace": "from-attribute"})
        runner.run()
        (response,) = runner.output("Response")
        sent = [value for name, value in json.loads(runner.content(response)) if name == "X-Trace"]
        assert sorted(sent) == ["from-attribute", "from-property"]


def test_idle_timeout_closes_pooled_connections(tmp_path, server):
    for idle_timeout, expected_ports in (("5 mins", 1), ("200 ms", 2)):
        properties = {"HTTP URL": server.url("/status/200"), "Socket Idle Timeout": idle_timeout}
        with make_runner(tmp_path, properties) as runner:
            runner.enqueue(b"")
            runner.run(stop=False)
            time.sleep(0.5)
            runner.enqueue(b"")
            runner.run()
            assert len({r.client_port for r in server.requests[-2:]}) == expected_ports


def test_connect_timeout_routes_to_failure_and_yields(tmp_path):
    # A listener whose accept queue is full drops new connection attempts: connecting times out.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    address = listener.getsockname()
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(address)
        fillers.append(filler)
    time.sleep(0.2)
    properties = {"HTTP URL": f"http://127.0.0.1:{address[1]}/", "Connection Timeout": "300 ms"}
    try:
        with make_runner(tmp_path, properties) as runner:
            runner.enqueue(b"")
            started = time.monotonic()
            runner.run()
            assert time.monotonic() - started < 5
            (failed,) = runner.output("Failure")
            assert failed.attributes["invokehttp.java.exception.class"] == "urllib3.exceptions.ConnectTimeoutError"
            assert is_yielded(runner)
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def test_a_complete_nifi_1x_export_is_valid(tmp_path, server):
    exported = {
        "HTTP Method": "GET", "Remote URL": server.url("/status/200"), "disable-http2": "False",
        "SSL Context Service": None, "Connection Timeout": "5 secs", "Read Timeout": "15 secs",
        "Socket Write Timeout": "15 secs", "idle-timeout": "5 mins", "max-idle-connections": "5",
        "proxy-configuration-service": None, "Proxy Host": None, "Proxy Port": None, "Proxy Type": "http",
        "invokehttp-proxy-user": None, "invokehttp-proxy-password": None, "oauth2-access-token-provider": None,
        "Basic Authentication Username": None, "Basic Authentication Password": None,
        "Digest Authentication": "false", 'Penalize on "No Retry"': "false", "send-message-body": "true",
        "form-body-form-name": None, "set-form-filename": "true", "Use Chunked Encoding": "false",
        "Content-Encoding": "DISABLED", "Content-Type": "${mime.type}", "Include Date Header": "True",
        "Attributes to Send": None, "Useragent": None, "Put Response Body In Attribute": None,
        "Max Length To Put In Attribute": "256", "ignore-response-content": "false", "use-etag": "false",
        "etag-max-cache-size": "10MB", "cookie-strategy": "DISABLED", "Always Output Response": "false",
        "flow-file-naming-strategy": "RANDOM", "Add Response Headers to Request": "false",
        "Follow Redirects": "True", "Trusted Hostname": None,
    }
    with ProcessorTestRunner("org.apache.nifi.processors.standard.InvokeHTTP", tmp_path, exported) as runner:
        assert runner.validate() == []
        runner.enqueue(b"")
        runner.run()
        assert len(runner.output("Original")) == 1 and len(runner.output("Response")) == 1
