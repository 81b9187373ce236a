"""Adapters between a FlowFile's content streams and the format libraries.

A session's content reader is unbuffered (each read is a system call) and its content writer
has only ``write`` (no ``tell``, ``flush`` or ``closed``, and ``close`` ends the content).
Libraries want more: ``buffered_input`` gives a read buffer that leaves the caller's stream
open, ``OutputSink`` a full write-only file object that never closes the caller's stream.
"""

from __future__ import annotations

import io
from typing import BinaryIO

__all__ = ["CallerInput", "OutputSink", "buffered_input"]


class CallerInput(io.BufferedReader):
    """A read buffer over the caller's unbuffered stream, which it never closes."""

    def close(self) -> None:
        self.release()

    def release(self) -> None:
        """Let go of the caller's stream (a second call does nothing)."""
        try:
            self.detach()
        except ValueError:
            pass


def buffered_input(stream: BinaryIO, size: int = 1 << 16) -> BinaryIO:
    """``stream`` with a read buffer when it has none (a ``CallerInput``; release it when done)."""
    if isinstance(stream, io.RawIOBase):
        return CallerInput(stream, size)
    return stream


class OutputSink(io.RawIOBase):
    """A write-only file object over the caller's stream: counts what is written (``tell``),
    passes ``flush`` on when the stream has one, and closing it leaves the stream open."""

    def __init__(self, stream: BinaryIO) -> None:
        super().__init__()
        self._stream = stream
        self._position = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        with memoryview(data) as view:
            size = view.nbytes
        self._stream.write(data)
        self._position += size
        return size

    def tell(self) -> int:
        return self._position

    def flush(self) -> None:
        flush = getattr(self._stream, "flush", None)
        if flush is not None and not self.closed:
            flush()
