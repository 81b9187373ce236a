"""Writers that append new contents to writable resource-claim files."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol

from engine import fileops
from engine.checksums import crc32
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
    memory use does not grow with the content. ``close`` returns the content claim, with the
    CRC32 of the bytes as its checksum; leaving a ``with`` block on an exception aborts instead.

    A failed write (a full disk, an I/O error) fails the writer: it can only be aborted, and
    its resource claim is frozen rather than handed to another writer, so no later content is
    appended after a partial tail.
    """

    def __init__(self, claim: AppendableClaim, finish: FinishCallback, *, checksum: bool = True) -> None:
        self._claim = claim
        self._checksum = checksum
        self._finish = finish
        self._offset = claim.length
        self._written = 0
        self._buffer = bytearray()
        self._crc = 0
        self._failure: BaseException | None = None
        #: Called before every write; it may raise (a session whose task was terminated).
        self.guard: Callable[[], None] | None = None
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
        if self.guard is not None:
            self.guard()
        if self._finished:
            raise ValueError("write to a closed content writer")
        if self._failure is not None:
            raise self._failure
        # Views are released on the way out, so that a caller's bytearray can be resized even
        # while a failure's traceback is kept.
        with memoryview(data) as whole, whole.cast("B") as view:
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
            except BaseException as error:
                self._failure = error
                raise
            if self._checksum:
                self._crc = crc32(view, self._crc)
        self._written += size
        return size

    def close(self) -> ContentClaim:
        """Finish the content and return its claim (counted once in the claim manager)."""
        if self._result is not None:
            return self._result
        if self._finished:
            raise ValueError("close of an aborted content writer")
        if self._failure is not None:
            self.abort()
            raise self._failure
        try:
            self._flush()
        except BaseException as error:
            self._failure = error
            self.abort()
            raise
        self._finished = True
        checksum = self._crc if self._checksum else None
        self._result = ContentClaim(self._claim.resource_claim, self._offset, self._written, checksum)
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
        self._finish(self._claim, referenced=False, reusable=self._failure is None)

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
