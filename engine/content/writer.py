"""Writers that append new contents to writable resource-claim files."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from engine import fileops
from engine.flowfile import ContentClaim, ResourceClaim

__all__ = ["AppendableClaim", "ContentWriter", "FinishCallback"]

WRITE_BUFFER_SIZE = 64 << 10
"""Writes smaller than this are gathered before they reach the file."""


class AppendableClaim:
    """A writable resource claim with its append descriptor; owned by one writer or the pool."""

    __slots__ = ("resource_claim", "path", "fd", "length")

    def __init__(self, resource_claim: ResourceClaim, path: Path, fd: int) -> None:
        self.resource_claim = resource_claim
        self.path = path
        self.fd = fd
        self.length = 0


class FinishCallback(Protocol):
    """How a writer hands its claim back: counted or not, fit for more appends or not."""

    def __call__(self, claim: AppendableClaim, *, referenced: bool, reusable: bool) -> None: ...


class ContentWriter:
    """Appends one new content to an exclusively owned resource claim.

    Small writes are gathered in a bounded buffer; large ones go straight to the file, so
    memory use does not grow with the content. ``close`` returns the content claim; leaving a
    ``with`` block on an exception aborts instead.
    """

    def __init__(self, claim: AppendableClaim, finish: FinishCallback) -> None:
        self._claim = claim
        self._finish = finish
        self._offset = claim.length
        self._written = 0
        self._buffer = bytearray()
        self._failed = False
        self._result: ContentClaim | None = None
        self._finished = False

    @property
    def resource_claim(self) -> ResourceClaim:
        """The resource claim this writer appends to."""
        return self._claim.resource_claim

    @property
    def bytes_written(self) -> int:
        """Bytes accepted by ``write`` so far."""
        return self._written

    @property
    def claim(self) -> ContentClaim | None:
        """The content claim, once ``close`` has returned it."""
        return self._result

    def write(self, data: bytes | bytearray | memoryview) -> int:
        """Append ``data`` to the content and return its length."""
        if self._finished:
            raise ValueError("write to a closed content writer")
        view = memoryview(data).cast("B")
        size = len(view)
        try:
            if len(self._buffer) + size <= WRITE_BUFFER_SIZE:
                self._buffer += view
            else:
                self._flush()
                if size >= WRITE_BUFFER_SIZE:
                    self._write_all(view)
                else:
                    self._buffer += view
        except BaseException:
            self._failed = True
            raise
        self._written += size
        return size

    def close(self) -> ContentClaim:
        """Finish the content and return its claim (counted once in the claim manager)."""
        if self._result is not None:
            return self._result
        if self._finished:
            raise ValueError("close of an aborted content writer")
        try:
            self._flush()
        except BaseException:
            self._failed = True
            self.abort()
            raise
        self._finished = True
        self._result = ContentClaim(self._claim.resource_claim, self._offset, self._written)
        self._finish(self._claim, referenced=True, reusable=True)
        return self._result

    def abort(self) -> None:
        """Give up the content without changing any count.

        Bytes that already reached the file stay there unreferenced; buffered ones are dropped.
        """
        if self._finished:
            return
        self._finished = True
        self._buffer.clear()
        self._finish(self._claim, referenced=False, reusable=not self._failed)

    def __enter__(self) -> ContentWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None:
        if exc_type is not None:
            self.abort()
        elif not self._finished:
            self.close()

    def _flush(self) -> None:
        if self._buffer:
            self._write_all(self._buffer)
            self._buffer.clear()

    def _write_all(self, data: bytes | bytearray | memoryview) -> None:
        claim = self._claim
        try:
            fileops.write_all(claim.fd, data, claim.path)
        except OSError as error:
            claim.length += getattr(error, "written", 0)
            raise
        claim.length += len(data)
