"""A streaming reader over one content claim's bytes of a resource-claim file, and the errors
that say a claim's bytes cannot be had."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Callable, Iterator

from engine.checksums import crc32
from engine.flowfile import ContentClaim

__all__ = ["FILE_MISSING", "ContentChecksumError", "ContentNotFoundError", "ClaimReader", "READ_CHUNK_SIZE",
           "checksum_error"]

READ_CHUNK_SIZE = 1 << 20
"""Size of the chunks that iterating over a reader yields."""


#: What ``ContentNotFoundError.found`` says when the claim's file exists neither live nor archived.
FILE_MISSING = "the file is missing"


class ContentNotFoundError(Exception):
    """The bytes of a content claim cannot be read whole: the file is gone or cut short.

    ``claim``, ``path`` (the file looked at) and ``found`` (what was found instead, in a few
    words) are set when known; ``code`` tells the cases apart for those who act on them.
    """

    def __init__(self, message: str, *, claim: ContentClaim | None = None, path: str | Path | None = None,
                 found: str | None = None) -> None:
        super().__init__(message)
        self.claim = claim
        self.path = str(path) if path is not None else None
        self.found = found

    @property
    def code(self) -> str:
        """``content_missing`` (the file is gone: aged off or deleted) or ``content_unreadable``."""
        return "content_missing" if self.found == FILE_MISSING else "content_unreadable"


class ContentChecksumError(ContentNotFoundError):
    """The bytes of a content claim are there but are not those written: their CRC32 differs."""

    code = "content_damaged"


def checksum_error(claim: ContentClaim, path: str | Path, actual: int) -> ContentChecksumError:
    """The error for bytes of ``claim`` read from ``path`` whose CRC32 is ``actual``."""
    return ContentChecksumError(
        f"content of {claim} is damaged: bytes [{claim.offset}, {claim.offset + claim.length}) of {path} "
        f"(offset {claim.offset}, length {claim.length}) have CRC32 {actual:08x}, not {claim.checksum:08x}",
        claim=claim, path=path, found=f"checksum mismatch (CRC32 {actual:08x}, expected {claim.checksum:08x})",
    )


def _unchanged(error: ContentNotFoundError) -> BaseException:
    return error


class ClaimReader(io.RawIOBase):
    """Reads ``[offset, offset + length)`` of an open resource-claim file, never past it.

    Reads use positional I/O, so the reader needs no seek on the shared descriptor and holds
    at most one requested chunk in memory. Iterating yields chunks of ``READ_CHUNK_SIZE``.

    When the claim has a checksum, the bytes read in order from the first one are checksummed
    as they go; the read that completes the content raises :class:`ContentChecksumError`
    instead of returning when they do not match. Reads after a seek ahead are not checked.
    """

    def __init__(self, fd: int, claim: ContentClaim, path: str | Path) -> None:
        super().__init__()
        self._fd = fd
        self._claim = claim
        self._path = path
        self._position = 0
        self._crc = 0
        # Bytes from the first one that ``_crc`` covers; None when the claim has no checksum.
        self._checked: int | None = 0 if claim.checksum is not None else None
        self._guard: Callable[[], None] | None = None
        self._damaged: Callable[[ContentNotFoundError], BaseException] = _unchanged

    def bind(self, guard: Callable[[], None] | None,
             damaged: Callable[[ContentNotFoundError], BaseException]) -> None:
        """Call ``guard`` before every read (it may raise), and raise ``damaged(error)`` instead
        of each error that says the content is damaged (a session takes its FlowFile out)."""
        self._guard = guard
        self._damaged = damaged

    @property
    def claim(self) -> ContentClaim:
        """The content claim this reader reads."""
        return self._claim

    @property
    def path(self) -> Path:
        """The file the bytes come from (the live path or the archive path)."""
        return Path(self._path)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        self._check_open()
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move within the content; positions are relative to the content's first byte."""
        self._check_open()
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._claim.length}
        if whence not in base:
            raise ValueError(f"invalid whence {whence}")
        position = base[whence] + offset
        if position < 0:
            raise ValueError(f"negative seek position {position}")
        self._position = position
        return position

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        """Read up to ``len(buffer)`` bytes into ``buffer``; 0 at the end of the content."""
        self._check_open()
        if self._guard is not None:
            self._guard()
        with memoryview(buffer) as whole, whole.cast("B") as view:
            count = min(len(view), self._remaining())
            if count == 0:
                return 0
            got = os.preadv(self._fd, [view[:count]], self._claim.offset + self._position)
            if got == 0:
                raise self._damaged(self._truncated())
            if self._checked == self._position:
                self._check(view[:got])
        self._position += got
        return got

    def read(self, size: int | None = -1) -> bytes:
        """Read up to ``size`` bytes (all that remain when ``size`` is negative or None)."""
        self._check_open()
        if self._guard is not None:
            self._guard()
        remaining = self._remaining()
        wanted = remaining if size is None or size < 0 else min(size, remaining)
        if wanted == 0:
            return b""
        data = os.pread(self._fd, wanted, self._claim.offset + self._position)
        if len(data) < wanted and (size is None or size < 0):
            parts = [data]
            got = len(data)
            while data and got < wanted:
                data = os.pread(self._fd, wanted - got, self._claim.offset + self._position + got)
                parts.append(data)
                got += len(data)
            data = b"".join(parts)
        if not data:
            raise self._damaged(self._truncated())
        if self._checked == self._position:
            self._check(data)
        self._position += len(data)
        return data

    def _check(self, data: bytes | memoryview) -> None:
        """Extend the checksum over ``data``, the bytes that follow those already covered."""
        self._crc = crc32(data, self._crc)
        self._checked += len(data)
        if self._checked == self._claim.length and self._crc != self._claim.checksum:
            raise self._damaged(checksum_error(self._claim, self._path, self._crc))

    def readall(self) -> bytes:
        return self.read(-1)

    def __iter__(self) -> Iterator[bytes]:  # type: ignore[override]
        self._check_open()
        return self._chunks()

    def _chunks(self) -> Iterator[bytes]:
        while chunk := self.read(READ_CHUNK_SIZE):
            yield chunk

    def close(self) -> None:
        if not self.closed:
            try:
                os.close(self._fd)
            finally:
                super().close()

    def _remaining(self) -> int:
        return max(0, self._claim.length - self._position)

    def _check_open(self) -> None:
        if self.closed:
            raise ValueError("I/O operation on a closed content reader")

    def _truncated(self) -> ContentNotFoundError:
        end = self._claim.offset + self._claim.length
        return ContentNotFoundError(
            f"content of {self._claim} is cut short: {self._path} ends before byte {end}",
            claim=self._claim, path=self._path, found=f"the file ends before byte {end}",
        )
