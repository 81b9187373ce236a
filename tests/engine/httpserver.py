"""A real HTTP(S) server for tests: the standard library's, on a free local port, in a thread.

Responses are chosen by path; every request is recorded (method, path, headers, body, client
port, TLS peer certificate).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import ssl
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIGEST_REALM = "flowsite-test"
DIGEST_NONCE = "3f9d2a7c41e8b6d0"


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    header_list: list[tuple[str, str]]
    body: bytes
    client_port: int
    peer_subject: tuple | None = None


@dataclass
class TestServer:
    server: ThreadingHTTPServer
    scheme: str
    requests: list[Recorded] = field(default_factory=list)
    users: dict[str, str] = field(default_factory=lambda: {"alice": "wonder land"})

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def url(self, path: str) -> str:
        host = "localhost" if self.scheme == "https" else "127.0.0.1"
        return f"{self.scheme}://{host}:{self.port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        data = bytearray()
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                break
            data += handler.rfile.read(size)
            handler.rfile.readline()
        body = bytes(data)
    else:
        body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
    if handler.headers.get("Content-Encoding", "").lower() == "gzip":
        body = gzip.decompress(body)
    return body


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    test_server: TestServer

    def log_message(self, format, *args):
        pass

    def _respond(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
                 content_type: str = "text/plain; charset=utf-8") -> None:
        self.send_response(status)
        headers = dict(headers or {})
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _handle(self) -> None:
        body = _read_body(self)
        peer = None
        if isinstance(self.connection, ssl.SSLSocket):
            certificate = self.connection.getpeercert()
            peer = certificate.get("subject") if certificate else None
        record = Recorded(self.command, self.path, {k: v for k, v in self.headers.items()},
                          list(self.headers.items()), body, self.client_address[1], peer)
        self.test_server.requests.append(record)
        path = self.path.split("?", 1)[0]
        if path.startswith("/status/"):
            code = int(path.rsplit("/", 1)[1])
            self._respond(code, f"status {code} body".encode(), {"X-Status": str(code)})
        elif path == "/echo":
            self._respond(200, body, {"X-Method": self.command, "X-Multi": "one"},
                          content_type=self.headers.get("Content-Type") or "application/octet-stream")
        elif path == "/headers":
            self._respond(200, json.dumps(record.header_list).encode(), content_type="application/json")
        elif path.startswith("/redirect/"):
            remaining = int(path.rsplit("/", 1)[1])
            target = f"/redirect/{remaining - 1}" if remaining > 1 else "/echo"
            self._respond(302, b"", {"Location": target})
        elif path == "/see-other":
            self._respond(303, b"", {"Location": "/echo"})
        elif path == "/slow":
            time.sleep(2)
            self._respond(200, b"late")
        elif path.startswith("/large/"):
            size = int(path.rsplit("/", 1)[1])
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            block = bytes(range(256)) * 256
            sent = 0
            while sent < size:
                part = block[:size - sent]
                self.wfile.write(part)
                sent += len(part)
        elif path == "/cookie/set":
            self._respond(200, b"set", {"Set-Cookie": "session=abc123; Path=/"})
        elif path == "/cookie/check":
            self._respond(200, (self.headers.get("Cookie") or "none").encode())
        elif path == "/basic":
            expected = "Basic " + base64.b64encode(b"alice:wonder land").decode()
            if self.headers.get("Authorization") == expected:
                self._respond(200, b"welcome")
            else:
                self._respond(401, b"who are you", {"WWW-Authenticate": 'Basic realm="test"'})
        elif path == "/digest":
            self._digest()
        elif path == "/multi-header":
            self.send_response(200)
            self.send_header("X-Repeated", "a")
            self.send_header("X-Repeated", "b")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
        else:
            self._respond(200, b"ok")

    def _digest(self) -> None:
        header = self.headers.get("Authorization", "")
        if header.startswith("Digest "):
            params = urllib.request.parse_keqv_list(urllib.request.parse_http_list(header[len("Digest "):]))
            algorithm = params.get("algorithm", "MD5")
            digest = hashlib.sha256 if algorithm == "SHA-256" else hashlib.md5

            def h(text: str) -> str:
                return digest(text.encode()).hexdigest()

            password = self.test_server.users.get(params.get("username", ""))
            if password is not None:
                ha1 = h(f"{params['username']}:{DIGEST_REALM}:{password}")
                ha2 = h(f"{self.command}:{params['uri']}")
                expected = h(f"{ha1}:{DIGEST_NONCE}:{params['nc']}:{params['cnonce']}:auth:{ha2}")
                if params.get("response") == expected and params.get("nonce") == DIGEST_NONCE:
                    self._respond(200, b"digest welcome")
                    return
        self._respond(401, b"digest needed", {"WWW-Authenticate": f'Digest realm="{DIGEST_REALM}", qop="auth", '
                                              f'nonce="{DIGEST_NONCE}", algorithm=SHA-256, opaque="xyz"'})

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle


def start_server(ssl_context: ssl.SSLContext | None = None) -> TestServer:
    """A server on 127.0.0.1 and a free port; with ``ssl_context`` it speaks HTTPS."""
    handler = type("Handler", (_Handler,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    if ssl_context is not None:
        server.socket = ssl_context.wrap_socket(server.socket, server_side=True)
    test_server = TestServer(server, "https" if ssl_context is not None else "http")
    handler.test_server = test_server
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return test_server
