"""A streaming reader over one content claim's bytes of a resource-claim file."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Iterator

from engine.flowfile import ContentClaim

__all__ = ["ContentNotFoundError", "ClaimReader", "READ_CHUNK_SIZE"]

READ_CHUNK_SIZE = 1 << 20
"""Size of the chunks that iterating over a reader yields."""


class ContentNotFoundError(Exception):
    """The bytes of a content claim are neither in the live file nor in the archive."""


class ClaimReader(io.RawIOBase):
    """Reads ``[offset, offset + length)`` of an open resource-claim file, never past it.

    Reads use positional I/O, so the reader needs no seek on the shared descriptor and holds
    at most one requested chunk in memory. Iterating yields chunks of ``READ_CHUNK_SIZE``.
    """

    def __init__(self, fd: int, claim: ContentClaim, path: str | Path) -> None:
        super().__init__()
        self._fd = fd
        self._claim = claim
        self._path = path
        self._position = 0

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
        view = memoryview(buffer).cast("B")
        count = min(len(view), self._remaining())
        if count == 0:
            return 0
        got = os.preadv(self._fd, [view[:count]], self._claim.offset + self._position)
        if got == 0:
            raise self._truncated()
        self._position += got
        return got

    def read(self, size: int | None = -1) -> bytes:
        """Read up to ``size`` bytes (all that remain when ``size`` is negative or None)."""
        self._check_open()
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
            raise self._truncated()
        self._position += len(data)
        return data

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
        return ContentNotFoundError(
            f"content of {self._claim} is cut short: {self._path} ends before byte "
            f"{self._claim.offset + self._claim.length}"
        )
