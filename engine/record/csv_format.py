"""CSV records: a streaming reader over pyarrow.csv and a writer with NiFi's quoting rules.

The reader parses with ``pyarrow.csv.open_csv`` one block at a time (every column as text),
then trims, infers or converts the columns to the schema's types with Arrow kernels
(``engine.record.values``) and hands out batches of at most ``BATCH_RECORDS`` records. Memory
is bounded by a block, whatever the size of the content.

The writer renders each batch with Arrow kernels as well, following Apache Commons CSV (which
NiFi writes with): Quote Mode MINIMAL quotes a value only when it holds the separator, the
quote or escape character or a line break, or starts with a character up to ``#`` or with
whitespace, or ends with whitespace; inside quotes, the quote and escape characters are
preceded by the escape character (the quote character itself when none is set, i.e. doubled).
pyarrow's own CSVWriter is not used: it quotes every text value and knows one quote character.
"""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from engine.record.api import BATCH_RECORDS, MalformedRecordError, RecordReader, RecordSetWriter, WriteResult
from engine.record.schema import RecordSchema
from engine.record.cursors import StreamCursor, StreamCursors
from engine.record.values import ConversionError, TemporalFormats, conform_batch, format_column, infer_text_type

__all__ = ["BLOCK_SIZE", "CsvDialect", "CsvReader", "CsvWriter", "DIALECTS", "INFERENCE_RECORDS", "split_text"]

#: Bytes pyarrow parses at a time (a record may not be longer). pyarrow reads ahead about 32
#: blocks, so reading holds some 16 MB of content whatever its size.
BLOCK_SIZE = 512 << 10
#: Records schema inference looks at (the first ones of the content).
INFERENCE_RECORDS = BATCH_RECORDS


def _invalid_row(rows: list, row) -> str:
    """pyarrow's invalid-row handler: keep the row in ``rows``, fail the parse."""
    rows.append(row)
    return "error"


@dataclass(frozen=True)
class CsvDialect:
    """How CSV text is laid out (NiFi's CSV Format and its custom properties)."""

    delimiter: str = ","
    quote: str | None = '"'
    escape: str | None = "\\"
    comment: str | None = None
    null_string: str | None = None
    trim: bool = True
    record_separator: str = "\n"
    quote_mode: str = "MINIMAL"
    trailing_delimiter: bool = False


#: The predefined CSV Formats (Apache Commons CSV's), by NiFi's value; ``custom`` is the default dialect.
DIALECTS: dict[str, CsvDialect] = {
    "custom": CsvDialect(),
    "rfc-4180": CsvDialect(escape=None, trim=False, record_separator="\r\n"),
    "excel": CsvDialect(escape=None, trim=False, record_separator="\r\n"),
    "tdf": CsvDialect(delimiter="\t", escape=None, trim=True, record_separator="\r\n"),
    "mysql": CsvDialect(delimiter="\t", quote=None, escape="\\", null_string="\\N", trim=False, quote_mode="NONE"),
    "informix-unload": CsvDialect(delimiter="|", escape="\\", trim=False),
    "informix-unload-csv": CsvDialect(delimiter=",", escape=None, trim=False),
}


# -- reading ----------------------------------------------------------------------------------

#: What a field equal to a Null String that starts with the escape character (MySQL's ``\N``)
#: is read as: pyarrow would drop the escape character before comparing it with the Null String.
_NULL_SENTINEL = "\x1a\x00null\x00\x1a"


class _LineFilter(io.RawIOBase):
    """A stream whose lines are rewritten before pyarrow parses them: comment lines dropped (pyarrow
    has no comments), escaped Null Strings replaced by a sentinel."""

    def __init__(self, source: BinaryIO, pattern: re.Pattern[bytes], replacement: bytes) -> None:
        self._source = source
        self._pattern = pattern
        self._replacement = replacement
        self._pending = b""
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        while not self._buffer:
            chunk = self._source.read(1 << 20)
            if not chunk:
                self._buffer, self._pending = self._pattern.sub(self._replacement, self._pending), b""
                if not self._buffer:
                    return 0
                break
            data = self._pending + chunk
            cut = data.rfind(b"\n") + 1  # filter whole lines only
            self._buffer, self._pending = self._pattern.sub(self._replacement, data[:cut]), data[cut:]
        size = min(len(target), len(self._buffer))
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        return size


class CsvReader(RecordReader):
    """Reads CSV records from a seekable stream.

    ``schema`` given: the columns are converted to its types (a header, when present and not
    ignored, maps columns to fields by name; otherwise columns map to fields by position).
    ``schema`` None: the first line is a header; with ``strings`` every column is a string
    (Use String Fields From Header), else the types are inferred from the first
    ``INFERENCE_RECORDS`` records.
    """

    def __init__(self, stream: BinaryIO, dialect: CsvDialect, *, schema: RecordSchema | None = None,
                 header: bool = True, ignore_header_names: bool = False, strings: bool = False,
                 formats: TemporalFormats = TemporalFormats(), encoding: str = "UTF-8") -> None:
        self._start = stream.tell()
        self._cursors = StreamCursors(stream)
        self._dialect = dialect
        self._formats = formats
        self._encoding = encoding
        self._encoding_name = encoding.upper() if encoding.lower().replace("-", "") == "utf8" else encoding
        self._records = 0
        self._escaped_null = bool(dialect.null_string and dialect.escape and dialect.null_string[0] == dialect.escape)
        header = header or schema is None
        first = self._first_row()
        if header:
            names = first
            seen: set[str] = set()
            for name in names:
                if name in seen:
                    raise MalformedRecordError(f"line 1: the header names column {name!r} more than once")
                seen.add(name)
        if schema is not None and (not header or ignore_header_names):
            # columns map to the schema's fields by position; columns past its fields are dropped
            fields = schema.field_names
            names = [fields[i] if i < len(fields) else f"_column_{i + 1}" for i in range(len(first))]
        self._reader = self._open(names if first else [], skip=1 if header else 0)
        self._buffered: list[pa.RecordBatch] = []
        if schema is None:
            schema = self._infer(names, strings)
        self._schema = schema

    @property
    def schema(self) -> RecordSchema:
        return self._schema

    def _source(self) -> tuple[BinaryIO, StreamCursor]:
        """The content for one pyarrow reader (its own cursor, rewritten as the dialect needs)."""
        dialect = self._dialect
        cursor = source = self._cursors.open(self._start)
        if dialect.comment:
            marker = re.escape(dialect.comment.encode(self._encoding))
            source = _LineFilter(source, re.compile(rb"(?m)^" + marker + rb"[^\n]*(\n|$)"), b"")
        if self._escaped_null:
            null = re.escape(dialect.null_string.encode(self._encoding))
            separator = re.escape(dialect.delimiter.encode(self._encoding))
            pattern = re.compile(rb"(?m)(?:^|(?<=" + separator + rb"))" + null + rb"(?=" + separator + rb"|\r?$)")
            source = _LineFilter(source, pattern, _NULL_SENTINEL.encode(self._encoding))
        return source, cursor

    def _options(self, names: list[str] | None, skip: int, invalid: list):
        """pyarrow's options for this content; the rows it finds invalid are appended to ``invalid``,
        a list of this parse's own: a reader closed early (the header's) may still parse ahead, and
        with its cursor released it cuts the content short and finds rows invalid that are not."""
        dialect = self._dialect
        read = pacsv.ReadOptions(block_size=BLOCK_SIZE, column_names=names, skip_rows=skip,
                                 encoding=self._encoding)
        parse = pacsv.ParseOptions(delimiter=dialect.delimiter, quote_char=dialect.quote or False,
                                   escape_char=dialect.escape or False, double_quote=dialect.quote is not None,
                                   newlines_in_values=dialect.quote is not None or dialect.escape is not None,
                                   ignore_empty_lines=True, invalid_row_handler=partial(_invalid_row, invalid))
        null_values = [] if dialect.null_string is None else [_NULL_SENTINEL if self._escaped_null else
                                                              dialect.null_string]
        convert = pacsv.ConvertOptions(column_types={name: pa.string() for name in names or ()},
                                       null_values=null_values, strings_can_be_null=bool(null_values),
                                       quoted_strings_can_be_null=False)
        return read, parse, convert

    def _first_row(self) -> list[str]:
        """The values of the first line (the header's names, or tells how many columns there are)."""
        invalid: list = []
        read, parse, _ = self._options(None, 0, invalid)
        read.autogenerate_column_names = True
        read.use_threads = False
        read.block_size = 64 << 10  # small: pyarrow reads dozens of blocks ahead
        reader = None
        while True:
            source, cursor = self._source()
            try:
                reader = pacsv.open_csv(source, read_options=read, parse_options=parse)
                first = reader.read_next_batch()
                break
            except StopIteration:
                return []
            except (pa.ArrowInvalid, UnicodeDecodeError) as error:
                if "Empty CSV file" in str(error):
                    return []
                if "straddling" in str(error) and read.block_size < BLOCK_SIZE:
                    read.block_size = BLOCK_SIZE  # a first line longer than the small block
                    continue
                raise self._error(error, invalid) from None
            finally:
                if reader is not None:
                    reader.close()
                cursor.release()
        values = [str(first.column(i)[0].as_py() or "") for i in range(first.num_columns)]
        return [value.strip() for value in values] if self._dialect.trim else values

    def _open(self, names: list[str] | None, skip: int):
        self._layout = (names, skip)
        read, parse, convert = self._options(names, skip, [])  # its invalid rows are found again by _located
        if names == []:  # empty content
            return iter(())
        try:
            return pacsv.open_csv(self._source()[0], read_options=read, parse_options=parse, convert_options=convert)
        except StopIteration:
            return iter(())
        except (pa.ArrowInvalid, UnicodeDecodeError) as error:
            located = self._located(error)
            self._cursors.release()
            raise located from None

    def _located(self, error: Exception) -> MalformedRecordError:
        """``error`` with its line. Parsing in several threads numbers no rows, so the content is
        parsed again in one thread up to the error (the error path only)."""
        invalid: list = []
        read, parse, convert = self._options(*self._layout, invalid)
        read.use_threads = False
        try:
            for _ in pacsv.open_csv(self._source()[0], read_options=read, parse_options=parse,
                                    convert_options=convert):
                pass
        except (pa.ArrowInvalid, UnicodeDecodeError) as again:
            return self._error(again, invalid)
        return self._error(error, invalid)

    def _error(self, error: Exception, invalid: list) -> MalformedRecordError:
        if invalid:
            row = invalid[-1]
            where = f"line {row.number}" if row.number is not None else f"after record {self._records}"
            return MalformedRecordError(f"{where}: expected {row.expected_columns} fields, found "
                                        f"{row.actual_columns}: {row.text!r}")
        message = str(error).splitlines()[0]
        row = re.search(r"Row #(\d+)", message)
        where = f"line {row.group(1)}" if row else f"after record {self._records}"
        if "straddling" in message:
            return MalformedRecordError(f"{where}: a record is longer than {BLOCK_SIZE >> 10} KB, the most a CSV "
                                        f"record may be")
        if isinstance(error, UnicodeDecodeError) or "invalid UTF8" in message:
            return MalformedRecordError(f"{where}: the content is not {self._encoding_name} text")
        return MalformedRecordError(f"{where}: {message}")

    def _raw(self) -> Iterator[pa.RecordBatch]:
        while True:
            try:
                batch = next(self._reader)
            except StopIteration:
                return
            except (pa.ArrowInvalid, UnicodeDecodeError) as error:
                raise self._located(error) from None
            yield self._trimmed(batch)

    def _trimmed(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        if not self._dialect.trim:
            return batch
        return pa.RecordBatch.from_arrays([pc.utf8_trim_whitespace(column) for column in batch.columns],
                                          names=batch.schema.names)

    def _infer(self, names: list[str], strings: bool) -> RecordSchema:
        if strings:
            return RecordSchema.from_arrow(pa.schema([pa.field(name, pa.string()) for name in names]))
        count = 0
        for batch in self._raw():
            self._buffered.append(batch)
            count += batch.num_rows
            if count >= INFERENCE_RECORDS:
                break
        sample = pa.Table.from_batches(self._buffered, pa.schema([(n, pa.string()) for n in names]))
        fields = [pa.field(name, infer_text_type(sample.column(name).combine_chunks(), self._formats))
                  for name in names]
        return RecordSchema.from_arrow(pa.schema(fields))

    def batches(self) -> Iterator[pa.RecordBatch]:
        schema = self._schema.arrow
        buffered, self._buffered = self._buffered, []
        try:
            for batch in _chain(buffered, self._raw()):
                for start in range(0, batch.num_rows, BATCH_RECORDS):
                    part = batch.slice(start, BATCH_RECORDS)
                    try:
                        converted = conform_batch(part, schema, self._formats)
                    except ConversionError as error:
                        raise MalformedRecordError(f"record {self._records + error.index + 1}, field "
                                                   f"{error.field!r}: {error}") from None
                    self._records += part.num_rows
                    yield converted
        finally:
            self.close()

    def close(self) -> None:
        """Stop pyarrow's read-ahead: nothing reads the stream after this."""
        close = getattr(self._reader, "close", None)
        if close is not None:
            close()
        self._cursors.release()


def _chain(first: list[pa.RecordBatch], rest: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield from first
    yield from rest


# -- writing ----------------------------------------------------------------------------------

_NUMERIC = (pa.types.is_integer, pa.types.is_floating, pa.types.is_decimal)


class CsvWriter(RecordSetWriter):
    """Writes records as CSV (see the module docstring for the quoting rules)."""

    def __init__(self, stream: BinaryIO, schema: RecordSchema, dialect: CsvDialect, *, include_header: bool = True,
                 formats: TemporalFormats = TemporalFormats(), encoding: str = "UTF-8",
                 attributes: dict[str, str] | None = None) -> None:
        if dialect.quote_mode == "NONE" and not dialect.escape:
            raise ValueError("Quote Mode 'Do Not Quote Values' needs an Escape Character")
        self._stream = stream
        self._schema = schema
        self._dialect = dialect
        self._include_header = include_header
        self._formats = formats
        utf8 = encoding.lower().replace("-", "").replace("_", "") == "utf8"
        self._encoder = None if utf8 else codecs.getincrementalencoder(encoding)()
        self._attributes = dict(attributes or {})
        self._count = 0
        self._header_written = False
        escape = dialect.escape or dialect.quote or ""
        specials = "".join(re.escape(c) for c in {dialect.quote or "", escape, dialect.delimiter} if c)
        comment = f"|^{re.escape(dialect.comment)}" if dialect.comment else ""
        self._needs_quote = rf"^[\x00-#]|^\s|[\r\n{specials}]|[\x00-\x20]$|\s${comment}"
        self._quoted_chars = "(" + "|".join(re.escape(c) for c in {dialect.quote or "", escape} if c) + ")"

    @property
    def schema(self) -> RecordSchema:
        return self._schema

    def write_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        if not self._header_written:
            self._write_header()
        rows = self.rendered_rows(batch)
        if len(rows):
            self._write_text(rows)
            self._count += len(rows)

    def rendered_rows(self, batch: pa.RecordBatch | pa.Table) -> pa.Array:
        """``batch``'s records as CSV text, one string per record with its record separator
        (nothing is written); raises MalformedRecordError for a value of the wrong type."""
        try:
            batch = conform_batch(batch, self._schema.arrow, self._formats)
        except ConversionError as error:
            raise MalformedRecordError(f"record {self._count + error.index + 1}, field {error.field!r}: {error}") from None
        if batch.num_rows == 0:
            return pa.array([], pa.string())
        columns = [self._render(format_column(column, self._formats), position == 0,
                                any(test(column.type) for test in _NUMERIC))
                   for position, column in enumerate(batch.columns)]
        return self._rows(columns)

    def header_text(self) -> bytes:
        """The header line as written (empty when no header is written)."""
        if not (self._include_header and self._schema.field_names):
            return b""
        names = self._schema.field_names
        rows = self._rows([self._render(pa.array([name]), i == 0, False) for i, name in enumerate(names)])
        return bytes(split_text(rows, [1])[0])

    @property
    def utf8(self) -> bool:
        """Whether the text is written as UTF-8 (Arrow's own strings, unencoded)."""
        return self._encoder is None

    def finish(self) -> WriteResult:
        if not self._header_written:
            self._write_header()
        flush = getattr(self._stream, "flush", None)  # a session's content writer has only write
        if flush is not None:
            flush()
        return WriteResult(self._count, {**self.finish_attributes(), "record.count": str(self._count)})

    def finish_attributes(self) -> dict[str, str]:
        """The attributes ``finish`` reports besides ``record.count``."""
        return {"mime.type": "text/csv", **self._attributes}

    def _write_header(self) -> None:
        self._header_written = True
        header = self.header_text()
        if header:
            self._write_text(header)

    def _render(self, text: pa.Array, first: bool, numeric: bool) -> pa.Array:
        """Values as CSV cells: trimmed, quoted or escaped, nulls as the Null String."""
        dialect = self._dialect
        if dialect.trim:
            text = pc.utf8_trim_whitespace(text)
        valid = text.is_valid()
        quote = dialect.quote
        mode = dialect.quote_mode
        if mode == "NONE" or quote is None:
            if dialect.escape:
                text = self._escaped(text)
        else:
            if mode == "ALL":
                needs = valid
            elif mode == "NON_NUMERIC":
                needs = pc.and_(valid, pa.scalar(not numeric))
            else:
                needs = pc.match_substring_regex(text, self._needs_quote)
                if first and dialect.null_string is None:
                    needs = pc.or_(needs, pc.equal(text, ""))
            if pc.any(needs).as_py():
                escape = dialect.escape or quote
                inner = pc.replace_substring_regex(text, self._quoted_chars, escape.replace("\\", "\\\\") + r"\1")
                quoted = pc.binary_join_element_wise(quote, inner, quote, "")
                text = pc.if_else(needs, quoted, text)
        null_text = dialect.null_string if dialect.null_string is not None else ""
        if first and null_text == "" and quote is not None and mode == "MINIMAL":
            null_text = quote + quote  # an empty first cell would make an empty line
        return pc.fill_null(text, null_text) if text.null_count else text

    def _escaped(self, text: pa.Array) -> pa.Array:
        dialect = self._dialect
        escape = dialect.escape.replace("\\", "\\\\")
        chars = "".join(re.escape(c) for c in {dialect.escape, dialect.delimiter, dialect.quote or ""} if c)
        text = pc.replace_substring_regex(text, f"([{chars}])", escape + r"\1")
        text = pc.replace_substring(pc.replace_substring(text, "\r", dialect.escape + "r"), "\n", dialect.escape + "n")
        if dialect.comment:
            text = pc.replace_substring_regex(text, f"^({re.escape(dialect.comment)})", escape + r"\1")
        return text

    def _rows(self, columns: list[pa.Array]) -> pa.Array:
        dialect = self._dialect
        ending = (dialect.delimiter if dialect.trailing_delimiter else "") + dialect.record_separator
        rows = pc.binary_join_element_wise(*columns, dialect.delimiter) if len(columns) > 1 else columns[0]
        return pc.binary_join_element_wise(rows, ending, "")

    def _write_text(self, text: pa.Array | bytes) -> None:
        chunk = split_text(text, [len(text)])[0] if isinstance(text, pa.Array) else text
        if self._encoder is not None:  # one encoder for the whole output: a UTF-16 BOM only once
            chunk = self._encoder.encode(bytes(chunk).decode("utf-8"))
        self._stream.write(chunk)


def split_text(rows: pa.Array, counts: Sequence[int]) -> list[memoryview]:
    """``rows`` (strings such as ``CsvWriter.rendered_rows`` gives) cut into runs of ``counts``
    records, each as UTF-8 bytes, without a copy."""
    if not len(rows):
        return [memoryview(b"")] * len(counts)
    _, offsets, data = rows.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int32)[rows.offset:rows.offset + len(rows) + 1]
    bounds = offsets[np.concatenate(([0], np.cumsum(counts, dtype=np.int64)))].tolist()
    data = memoryview(data)
    return [data[start:end] for start, end in zip(bounds[:-1], bounds[1:])]
