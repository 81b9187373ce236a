"""What TailFile reads with: whole lines from a file position, checksums of what was read, the
per-file state under NiFi's keys, and the Java glob of Rolling Filename Pattern."""

from __future__ import annotations

import os
import re
import zlib
from dataclasses import dataclass, replace
from typing import BinaryIO, Mapping

__all__ = ["ReadResult", "TailState", "crc_of", "flowfile_name", "glob_regex", "read_lines", "state_indexes"]

_CHUNK = 1 << 16
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\n|\r)")

#: NiFi's state keys, ``file.<index>.<key>``.
FILENAME, POSITION, TIMESTAMP, CHECKSUM, LENGTH, POST_ROLLOVER = (
    "filename", "position", "timestamp", "checksum", "length", "tailingPostRollover")


@dataclass(frozen=True)
class TailState:
    """Where tailing one file stands: ``position`` bytes of the file being read are consumed and
    ``checksum`` is their CRC-32; ``timestamp`` (ms) is the last-modified time of the newest data
    consumed (rolled-over files older than it were consumed already); ``length`` the file's
    length when it was last read."""

    filename: str
    position: int = 0
    timestamp: int = 0
    length: int = 0
    checksum: int | None = None
    tailing_post_rollover: bool = False

    def to_state(self, index: int) -> dict[str, str]:
        """The state under NiFi's keys for the file numbered ``index``."""
        prefix = f"file.{index}."
        values = {prefix + FILENAME: self.filename, prefix + POSITION: str(self.position),
                  prefix + LENGTH: str(self.length), prefix + TIMESTAMP: str(self.timestamp),
                  prefix + POST_ROLLOVER: "true" if self.tailing_post_rollover else "false"}
        if self.checksum is not None:
            values[prefix + CHECKSUM] = str(self.checksum)
        return values

    @classmethod
    def from_state(cls, values: Mapping[str, str], index: int) -> TailState | None:
        """The state stored for the file numbered ``index``; None when incomplete."""
        prefix = f"file.{index}."
        try:
            checksum = values.get(prefix + CHECKSUM)
            return cls(values[prefix + FILENAME], int(values[prefix + POSITION]), int(values[prefix + TIMESTAMP]),
                       int(values[prefix + LENGTH]), int(checksum) if checksum not in (None, "", "null") else None,
                       values.get(prefix + POST_ROLLOVER) == "true")
        except (KeyError, ValueError):
            return None

    def restart(self, timestamp: int | None = None, length: int | None = None) -> TailState:
        """Reading starts again at the beginning of the file (it rolled over)."""
        return replace(self, position=0, checksum=None, tailing_post_rollover=False,
                       timestamp=self.timestamp if timestamp is None else timestamp,
                       length=self.length if length is None else length)


def state_indexes(values: Mapping[str, str]) -> dict[str, int]:
    """The index of every file named in stored state."""
    found = {}
    for key, value in values.items():
        parts = key.split(".")
        if len(parts) == 3 and parts[0] == "file" and parts[2] == FILENAME and parts[1].isdigit():
            found[value] = int(parts[1])
    return found


@dataclass
class ReadResult:
    """What ``read_lines`` consumed: up to ``end``, the CRC-32 ``checksum`` of everything consumed
    from the file's start; ``nul`` when it stopped before a NUL byte."""

    end: int
    checksum: int
    written: int
    nul: bool = False


def read_lines(fd: int, start: int, checksum: int, out: BinaryIO, *, read_fully: bool = False,
               stop_at_nul: bool = False, line_start: re.Pattern[str] | None = None,
               max_buffer: int = 0) -> ReadResult:
    """Copy the whole lines of ``fd`` from ``start`` to ``out`` (and, with ``read_fully``, what
    follows the last one too).

    Lines end with ``\\n``, ``\\r\\n`` or a ``\\r`` followed by anything else (a ``\\r`` at the end
    of what was written so far waits for what follows). With ``line_start``, lines are grouped into
    messages each starting with a line the pattern matches at its start; a message is copied once
    the next one starts, or once it holds ``max_buffer`` bytes, so the last message waits.
    ``stop_at_nul`` stops before the line holding a NUL byte (a file system showing holes).
    """
    result = ReadResult(start, checksum, 0)
    offset = start
    pending = bytearray()   # read, not consumed: the lines of the open message, then a partial line
    message = 0             # with line_start: pending[:message] is the open message
    while not result.nul:
        data = os.pread(fd, _CHUNK, offset)
        if not data:
            break
        if stop_at_nul and (at := data.find(b"\0")) >= 0:
            data, result.nul = data[:at], True
        offset += len(data)
        pending += data
        whole = _whole_lines(pending)
        if line_start is None:
            ready = whole
        else:
            ready = 0
            for line in _LINE.finditer(pending, message, whole):
                begins = line_start.match(line.group().rstrip(b"\n").decode("utf-8", "replace")) is not None
                if (begins or line.start() - ready >= max_buffer) and line.start() > ready:
                    ready = line.start()
            message = whole - ready
        if ready:
            _consume(result, pending, ready, out)
    if read_fully and pending and not result.nul:
        _consume(result, pending, len(pending), out)
    return result


def _consume(result: ReadResult, pending: bytearray, length: int, out: BinaryIO) -> None:
    chunk = bytes(pending[:length])
    del pending[:length]
    out.write(chunk)
    result.checksum = zlib.crc32(chunk, result.checksum)
    result.end += length
    result.written += length


def _whole_lines(buffer: bytearray) -> int:
    """The length of the whole lines at the start of ``buffer``."""
    newline = buffer.rfind(b"\n") + 1
    carriage = buffer.rfind(b"\r", 0, len(buffer) - 1) + 1
    return max(newline, carriage)


def crc_of(fd: int, length: int) -> int | None:
    """The CRC-32 of the first ``length`` bytes of ``fd``; None when it holds fewer."""
    checksum, offset = 0, 0
    while offset < length:
        data = os.pread(fd, min(_CHUNK * 16, length - offset), offset)
        if not data:
            return None
        checksum = zlib.crc32(data, checksum)
        offset += len(data)
    return checksum


def flowfile_name(name: str, start: int, end: int) -> str:
    """NiFi's name for a FlowFile of bytes ``start`` to ``end`` of the file ``name``:
    ``app.10-42.log`` for ``app.log``."""
    base, dot, extension = name.rpartition(".")
    if not dot:
        return f"{name}.{start}-{end}"
    return f"{base}.{start}-{end}.{extension}"


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A Java glob (``*``, ``?``, ``[...]``, ``{a,b}``, ``\\`` escapes) as a regular expression
    matching whole file names."""
    out, index, braces = [], 0, 0
    while index < len(pattern):
        char = pattern[index]
        index += 1
        if char == "\\" and index < len(pattern):
            out.append(re.escape(pattern[index]))
            index += 1
        elif char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", index + 1)
            if end < 0:
                out.append(re.escape(char))
                continue
            body = pattern[index:end]
            index = end + 1
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
        elif char == "{":
            braces += 1
            out.append("(?:")
        elif char == "}" and braces:
            braces -= 1
            out.append(")")
        elif char == "," and braces:
            out.append("|")
        else:
            out.append(re.escape(char))
    return re.compile("".join(out) + r"\Z", re.DOTALL)
