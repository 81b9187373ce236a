"""SplitText: splits text content into FlowFiles of a number of lines or a maximum size."""

from __future__ import annotations

import re
import uuid
from typing import BinaryIO, NamedTuple

from engine.components import (
    InputRequirement,
    Processor,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v

LINE_SPLIT_COUNT = PropertyDescriptor(
    "Line Split Count", description="How many lines (header lines not counted) each split holds at most. 0 means "
    "no limit by lines: Maximum Fragment Size must then be set.", required=True,
    validators=[v.NON_NEGATIVE_INTEGER])
FRAGMENT_MAX_SIZE = PropertyDescriptor(
    "Maximum Fragment Size", description="The largest size of a split, header included. A split never cuts a "
    "line: a line that alone is larger (with the header) makes a split of its own, larger than this.",
    validators=[v.DATA_SIZE])
HEADER_LINE_COUNT = PropertyDescriptor(
    "Header Line Count", description="How many lines at the start of the content form a header, copied at the "
    "start of every split.", required=True, default="0", validators=[v.NON_NEGATIVE_INTEGER])
HEADER_MARKER = PropertyDescriptor(
    "Header Line Marker Characters", description="Characters that begin each header line: the header is every "
    "line from the start of the content that begins with them, up to the first one that does not. Ignored when "
    "Header Line Count is not 0.", validators=[v.NON_EMPTY])
REMOVE_TRAILING_NEWLINES = PropertyDescriptor(
    "Remove Trailing Newlines", description="Whether the line endings (and empty lines) at the end of each split "
    "are removed. A split left empty is then not emitted, unless there is a header (the split holds the header "
    "alone). Keep 'false' to merge the splits back into the original content later.", required=True,
    default="true", allowed_values=["true", "false"])

ORIGINAL = Relationship("original", "The incoming FlowFile, once it has been split")
SPLITS = Relationship("splits", "The splits")
FAILURE = Relationship("failure", "FlowFiles that could not be split (a header too large or too short); nothing "
                       "else is emitted for them")

LINE_COUNT_ATTRIBUTE = "text.line.count"
FRAGMENT_SIZE = "fragment.size"
FRAGMENT_ID = "fragment.identifier"
FRAGMENT_INDEX = "fragment.index"
FRAGMENT_COUNT = "fragment.count"
ORIGINAL_FILENAME = "segment.original.filename"

_BATCH = 10
_READ_SIZE = 1 << 20
_LINE_END = re.compile(rb"\r\n?|\n")
_UNLIMITED = 1 << 62


class _Line(NamedTuple):
    length: int  # line ending included
    eol: int  # length of the line ending: 0, 1 or 2
    marked: bool  # starts with the header marker


class _Split(NamedTuple):
    start: int
    length: int
    trimmed: int  # length without trailing empty lines and the last line ending
    lines: int  # non-empty lines


class _Header(NamedTuple):
    length: int
    eol: int  # line ending of its last line


class _SplitError(Exception):
    """The content cannot be split as configured."""


class _LineScanner:
    """Finds the lines of a byte stream (ending at ``\\n``, ``\\r\\n`` or a lone ``\\r``), chunk by
    chunk, without keeping more than a chunk and the start of the current line in memory."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._buffer = b""
        self._position = 0
        self._eof = False

    def _more(self) -> bool:
        """Append the next chunk to the unread bytes; False at the end of the content."""
        if self._eof:
            return False
        chunk = self._stream.read(_READ_SIZE)
        if not chunk:
            self._eof = True
            return False
        self._buffer = self._buffer[self._position:] + chunk
        self._position = 0
        return True

    def next_line(self, marker: bytes = b"") -> _Line | None:
        """The next line, or None at the end of the content."""
        while len(self._buffer) - self._position < max(len(marker), 1):
            if not self._more():
                break
        if self._position >= len(self._buffer):
            return None
        marked = self._buffer.startswith(marker, self._position)
        length = 0
        while True:
            buffer = self._buffer
            match = _LINE_END.search(buffer, self._position)
            if match is None:
                length += len(buffer) - self._position
                self._position = len(buffer)
                if not self._more():
                    return _Line(length, 0, marked)
                continue
            if match.end() == len(buffer) and buffer[-1:] == b"\r" and not self._eof:
                # The "\r" may be the first half of a "\r\n" split across chunks.
                length += match.start() - self._position
                self._position = match.start()
                if self._more():
                    continue
            end = match.end()
            length += end - self._position
            self._position = end
            return _Line(length, end - match.start(), marked)


class SplitText(Processor):
    """Splits text content into smaller FlowFiles at line boundaries, each holding at most Line
    Split Count lines and at most Maximum Fragment Size bytes (whichever limit is reached first),
    optionally with the content's header lines copied at the start of every split.

    Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``. A split never cuts a line: a line larger
    than the Maximum Fragment Size makes a split of its own. Splits without a header are slices
    of the original content (no bytes are copied); splits with a header are new content (the
    header followed by the lines). The content is scanned in chunks, so inputs of any size are
    split without being read into memory. ``text.line.count`` counts the non-empty lines of a
    split. When the content holds nothing but a header, one split holds the header.

    The original FlowFile goes to 'original' with ``fragment.identifier`` and ``fragment.count``;
    a header that is larger than the Maximum Fragment Size, or that has fewer lines than Header
    Line Count, sends it to 'failure' instead. Provenance: the splits are children of the
    original (FORK).
    """

    nifi_type = "org.apache.nifi.processors.standard.SplitText"
    tags = ("split", "text")
    properties = (LINE_SPLIT_COUNT, FRAGMENT_MAX_SIZE, HEADER_LINE_COUNT, HEADER_MARKER, REMOVE_TRAILING_NEWLINES)
    relationships = (ORIGINAL, SPLITS, FAILURE)
    input_requirement = InputRequirement.REQUIRED
    writes_attributes = (
        WrittenAttribute(LINE_COUNT_ATTRIBUTE, "The number of non-empty lines of the original in this split"),
        WrittenAttribute(FRAGMENT_SIZE, "The size of this split in bytes, header included"),
        WrittenAttribute(FRAGMENT_ID, "A random identifier shared by the splits of one original (and the original)"),
        WrittenAttribute(FRAGMENT_INDEX, "The position of this split among its siblings, from 1"),
        WrittenAttribute(FRAGMENT_COUNT, "How many splits the original made"),
        WrittenAttribute(ORIGINAL_FILENAME, "The filename of the original"),
    )
    see_also = ("MergeContent",)

    def validate(self, context):
        try:
            no_line_limit = context.property(LINE_SPLIT_COUNT).as_int() == 0
        except (TypeError, ValueError):
            return  # the property's own validator reports it
        if no_line_limit and not context.property(FRAGMENT_MAX_SIZE).is_set():
            yield f"'{FRAGMENT_MAX_SIZE.name}' must be set when '{LINE_SPLIT_COUNT.name}' is 0"

    def on_scheduled(self, context):
        self._line_count = context.property(LINE_SPLIT_COUNT).as_int()
        max_size = context.property(FRAGMENT_MAX_SIZE)
        self._max_size = max_size.as_data_size() if max_size.is_set() else _UNLIMITED
        self._header_count = context.property(HEADER_LINE_COUNT).as_int()
        marker = context.property(HEADER_MARKER).value
        self._marker = marker.encode("utf-8") if marker else b""
        self._remove_trailing = context.property(REMOVE_TRAILING_NEWLINES).as_bool()

    def on_trigger(self, context, session):
        for flowfile in session.get_batch(_BATCH):
            try:
                with session.read(flowfile) as stream:
                    header, splits = self._plan(stream)
            except _SplitError as error:
                context.logger.error("cannot split %s: %s; routing it to failure", flowfile.uuid, error)
                session.transfer(flowfile, FAILURE)
                continue
            self._emit(session, flowfile, header, splits)

    # -- finding the splits ---------------------------------------------------------------

    def _plan(self, stream: BinaryIO) -> tuple[_Header | None, list[_Split]]:
        scanner = _LineScanner(stream)
        header, carried = self._header(scanner)
        header_length = header.length if header else 0
        splits: list[_Split] = []
        start = header_length
        while True:
            split, carried = self._next_split(scanner, carried, start, header_length)
            if split is None:
                return header, splits
            splits.append(split)
            start += split.length

    def _header(self, scanner: _LineScanner) -> tuple[_Header | None, _Line | None]:
        """The header, and the first line after it when reading it took that line too."""
        if not self._header_count and not self._marker:
            return None, None
        length = eol = lines = 0
        carried = None
        while not self._header_count or lines < self._header_count:
            line = scanner.next_line(b"" if self._header_count else self._marker)
            if line is None:
                break
            if not self._header_count and not line.marked:
                carried = line
                break
            length += line.length
            eol = line.eol
            lines += 1
            if length > self._max_size:
                raise _SplitError(f"its header is larger than the Maximum Fragment Size of {self._max_size} bytes")
        if self._header_count and 0 < lines < self._header_count:
            raise _SplitError(f"it has {lines} lines, fewer than the {self._header_count} header lines")
        return (_Header(length, eol) if lines else None), carried

    def _next_split(self, scanner: _LineScanner, carried: _Line | None, start: int,
                    header_length: int) -> tuple[_Split | None, _Line | None]:
        """The split starting at ``start`` (None at the end), and the line it left for the next one."""
        length = lines = empty = trimmed = 0
        line = carried
        while True:
            if line is None:
                line = scanner.next_line()
                if line is None:
                    break
            if lines and length + line.length + header_length > self._max_size:
                return _Split(start, length, trimmed, lines - empty), line
            if line.length > line.eol:
                trimmed = length + line.length - line.eol
            else:
                empty += 1
            length += line.length
            lines += 1
            line = None
            if (self._line_count and lines >= self._line_count) or length + header_length >= self._max_size:
                break
        return (_Split(start, length, trimmed, lines - empty) if lines else None), None

    # -- making the FlowFiles -------------------------------------------------------------

    def _slices(self, session, flowfile, splits: list[_Split]) -> list:
        """Splits without a header: slices of the original content (no copy)."""
        children = []
        for split in splits:
            size = split.trimmed if self._remove_trailing else split.length
            if size:
                children.append((session.clone(flowfile, split.start, size), split.lines))
        return children

    def _with_header(self, session, flowfile, header: _Header, header_bytes: bytes, source: BinaryIO,
                     splits: list[_Split]) -> list:
        """Splits with a header: new content made of the header and the split's lines; a split
        with no lines left (or content that is all header) is the header without its last line
        ending, a slice of the original."""
        if not splits:
            return [(session.clone(flowfile, 0, header.length - header.eol), 0)]
        children = []
        for split in splits:
            size = split.trimmed if self._remove_trailing else split.length
            if size:
                child = session.create(flowfile)
                child = session.write(child, _copier(header_bytes, source, split.start, size))
            else:
                child = session.clone(flowfile, 0, header.length - header.eol)
            children.append((child, split.lines))
        return children

    def _emit(self, session, flowfile, header: _Header | None, splits: list[_Split]) -> None:
        fragment_id = str(uuid.uuid4())
        filename = flowfile.attributes.get("filename", "")
        if header is None:
            children = self._slices(session, flowfile, splits)
        else:
            with session.read(flowfile) as source:
                children = self._with_header(session, flowfile, header, source.read(header.length), source, splits)
        count = str(len(children))
        for index, (child, lines) in enumerate(children, 1):
            child = session.put_all_attributes(child, {
                LINE_COUNT_ATTRIBUTE: str(lines), FRAGMENT_SIZE: str(child.size), FRAGMENT_ID: fragment_id,
                FRAGMENT_INDEX: str(index), FRAGMENT_COUNT: count, ORIGINAL_FILENAME: filename,
            })
            session.transfer(child, SPLITS)
        flowfile = session.put_all_attributes(flowfile, {FRAGMENT_ID: fragment_id, FRAGMENT_COUNT: count})
        session.transfer(flowfile, ORIGINAL)


def _copier(header: bytes, source: BinaryIO, start: int, size: int):
    """A write callback that writes ``header`` then ``size`` bytes of ``source`` from ``start``."""

    def copy(out: BinaryIO) -> None:
        out.write(header)
        source.seek(start)
        remaining = size
        while remaining:
            chunk = source.read(min(remaining, _READ_SIZE))
            if not chunk:
                raise EOFError(f"the content ended {remaining} bytes before the end of a split")
            out.write(chunk)
            remaining -= len(chunk)

    return copy
