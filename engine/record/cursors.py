"""Independent read positions on one content stream.

pyarrow's streaming readers read ahead on a background thread, and keep reading for a while
after they are closed or abandoned (a reader that looked at the header, a JSON-lines reader
given up for ijson). Each of them therefore reads through its own ``StreamCursor``: the cursor
keeps its own position and seeks and reads under a lock shared by all cursors of the stream, so
one reader's read-ahead never moves another's position; ``release`` ends a cursor (its reads
return end of file), so nothing reads the stream once its reader is done with it.
"""

from __future__ import annotations

import io
import threading
from typing import BinaryIO

__all__ = ["StreamCursor", "StreamCursors"]


class StreamCursor(io.RawIOBase):
    """A read position on a shared seekable stream (see the module docstring)."""

    def __init__(self, stream: BinaryIO, position: int, lock: threading.Lock) -> None:
        self._stream = stream
        self._position = position
        self._lock = lock
        self._released = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._released:
            return 0
        with self._lock:
            if self._released:
                return 0
            self._stream.seek(self._position)
            data = self._stream.read(len(buffer))
        buffer[:len(data)] = data
        self._position += len(data)
        return len(data)

    def tell(self) -> int:
        return self._position

    def release(self) -> None:
        """End the cursor: later reads return end of file."""
        with self._lock:
            self._released = True


class StreamCursors:
    """Makes cursors on one stream, and releases them all at the end."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._cursors: list[StreamCursor] = []

    def open(self, position: int) -> StreamCursor:
        """A new cursor at ``position``."""
        cursor = StreamCursor(self._stream, position, self._lock)
        self._cursors.append(cursor)
        return cursor

    def release(self) -> None:
        """Release every cursor made so far."""
        for cursor in self._cursors:
            cursor.release()
        self._cursors.clear()
