"""ListenHTTP's Request Header Maximum Size: NiFi's 8 KB default and its 431 answer."""

from __future__ import annotations

from engine.processors.listen_http import ListenHTTP
from tests.engine.processors.test_listen_http import Listening, port, post  # noqa: F401 (port is a fixture)


def test_the_default_is_8_kb_as_in_nifi():
    (descriptor,) = [d for d in ListenHTTP.properties if d.name == "Request Header Maximum Size"]
    assert descriptor.default == "8 KB" and descriptor.required


def test_headers_over_the_maximum_are_answered_431_and_make_no_flowfile(tmp_path, port):
    with Listening(tmp_path, {"Listening Port": str(port)}) as runner:
        status, body, headers = post(port, b"big", headers={"X-Big": "x" * 9000})
        assert status == 431 and b"Request Header Fields Too Large" in body
        assert headers.get("Connection") == "close"
        assert runner.output("success") == []
        assert post(port, b"fits", headers={"X-Fits": "x" * 7000})[0] == 200
        assert [runner.content(f) for f in runner.output("success")] == [b"fits"]


def test_headers_spread_over_many_lines_count_together(tmp_path, port):
    with Listening(tmp_path, {"Listening Port": str(port)}) as runner:
        many = {f"X-H{i}": "y" * 200 for i in range(45)}  # 45 lines of ~210 bytes: over 8 KB in all
        assert post(port, b"many", headers=many)[0] == 431
        assert runner.output("success") == []


def test_a_larger_maximum_accepts_larger_headers(tmp_path, port):
    properties = {"Listening Port": str(port), "Request Header Maximum Size": "16 KB"}
    with Listening(tmp_path, properties) as runner:
        assert post(port, b"big", headers={"X-Big": "x" * 9000})[0] == 200
        assert post(port, b"bigger", headers={"X-Big": "x" * 17000})[0] == 431
        assert [runner.content(f) for f in runner.output("success")] == [b"big"]
