"""The wire protocol between MapCacheServer and MapCacheClientService.

Every message is a frame: a 4-byte big-endian length, then that many bytes of msgpack. A
connection starts with a handshake: the client sends ``["FSMC", [versions it speaks]]`` and the
server answers ``["ok", version]`` with the highest version both speak, or ``["error", why]``
and closes the connection. Then each request ``[operation, key, value]`` (key and value are
bytes, value nil when the operation takes none) gets one response, ``["ok", result]`` or
``["error", why]``. Requests on one connection are answered in order.
"""

from __future__ import annotations

import socket
import struct
from typing import Any

import msgpack

__all__ = [
    "MAGIC", "OPERATIONS", "VERSIONS", "CacheServerError", "read_frame", "write_frame",
]

MAGIC = "FSMC"
#: Protocol versions this code speaks, newest first.
VERSIONS = (1,)
#: Operations of version 1 and whether they carry a value.
OPERATIONS = {
    "put_if_absent": True,
    "get_and_put_if_absent": True,
    "contains_key": False,
    "put": True,
    "get": False,
    "remove": False,
}

_LENGTH = struct.Struct(">I")


class CacheServerError(OSError):
    """The cache server refused a request (or the handshake) and said why."""


def write_frame(sock: socket.socket, message: Any) -> None:
    """Send one message."""
    body = msgpack.packb(message, use_bin_type=True)
    sock.sendall(_LENGTH.pack(len(body)) + body)


def read_frame(sock: socket.socket, max_length: int) -> Any:
    """Receive one message; None when the peer closed the connection before a new frame.

    Raises ConnectionError for a frame longer than ``max_length``, a connection closed inside
    a frame, or bytes that are not msgpack.
    """
    header = _read_exactly(sock, _LENGTH.size, allow_eof=True)
    if header is None:
        return None
    (length,) = _LENGTH.unpack(header)
    if length > max_length:
        raise ConnectionError(f"a frame of {length} bytes exceeds the limit of {max_length} bytes")
    body = _read_exactly(sock, length, allow_eof=False)
    try:
        return msgpack.unpackb(body, raw=False)
    except (ValueError, TypeError, msgpack.UnpackException) as error:
        raise ConnectionError(f"malformed frame: {error}") from error


def _read_exactly(sock: socket.socket, count: int, allow_eof: bool) -> bytes | None:
    buffer = bytearray()
    while len(buffer) < count:
        chunk = sock.recv(count - len(buffer))
        if not chunk:
            if allow_eof and not buffer:
                return None
            raise ConnectionError("the connection was closed in the middle of a frame")
        buffer += chunk
    return bytes(buffer)
