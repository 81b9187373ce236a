"""Reading text content line by line, shared by the text processors (RouteText, ReplaceText)."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from typing import BinaryIO

__all__ = ["READ_SIZE", "LineTooLongError", "iter_lines", "line_ending", "without_line_ending"]

#: How many bytes are read from the content at a time.
READ_SIZE = 1 << 16

_LINE_END = re.compile(r"\r\n|\r|\n")


class LineTooLongError(ValueError):
    """A line is longer than the processor is allowed to buffer."""


def iter_lines(stream: BinaryIO, charset: str, max_length: int | None = None) -> Iterator[str]:
    """The lines of ``stream`` decoded with ``charset``, each with its line ending (``\\n``,
    ``\\r\\n`` or a lone ``\\r``); the last line has none when the content does not end with one.

    The content is read in chunks, so only the current line is held in memory. Undecodable bytes
    become U+FFFD. With ``max_length``, a line of more characters (ending included) raises
    ``LineTooLongError``.
    """
    decoder = codecs.getincrementaldecoder(charset)(errors="replace")
    pieces: list[str] = []  # the start of a line that continues in the next chunk
    pending = 0
    carry = ""
    while True:
        chunk = stream.read(READ_SIZE)
        text = carry + decoder.decode(chunk, final=not chunk)
        carry = ""
        if chunk and text.endswith("\r"):
            carry, text = "\r", text[:-1]  # a "\n" may start the next chunk
        start = 0
        for match in _LINE_END.finditer(text):
            end = match.end()
            if pieces:
                pieces.append(text[start:end])
                line = "".join(pieces)
                pieces, pending = [], 0
            else:
                line = text[start:end]
            if max_length is not None and len(line) > max_length:
                raise LineTooLongError(f"a line is longer than {max_length} characters")
            yield line
            start = end
        if start < len(text):
            pieces.append(text[start:])
            pending += len(text) - start
            if max_length is not None and pending > max_length:
                raise LineTooLongError(f"a line is longer than {max_length} characters")
        if not chunk:
            if pieces:
                yield "".join(pieces)
            return


def line_ending(line: str) -> str:
    """The line ending of ``line`` (empty for a last line without one)."""
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith(("\n", "\r")):
        return line[-1]
    return ""


def without_line_ending(line: str) -> str:
    """``line`` without its line ending."""
    return line[: len(line) - len(line_ending(line))]
