"""Many small CSV contents read as one table: one parse, one pass of each kernel.

Reading a 4 KB CSV content costs pyarrow some 250 µs however small it is (its reader's set-up),
and inferring its types a few dozen kernel calls; a micro-batch of a thousand such FlowFiles
spends seconds there. ``read_csv_contents`` reads contents that share a dialect, a header line
and a schema together:

- each content's header line is cut off and a *boundary row* (a random token in the first
  column) put after its records; the whole is parsed once, every column as text;
- the boundary rows tell where each content's records end; there must be exactly one per
  content (a quote left open swallows one, and the contents are then read one by one);
- the types are inferred for each content apart (``values.infer_text_types``), and the records
  of contents whose schemas agree are converted together.

The answers are those of ``CsvReader`` for each content alone. A content this cannot read so (a
header with quotes, a comment marker or an escaped Null String in the dialect, another text
encoding, a content larger than a block, any error) gets None: the caller reads it with
``CsvReader``, which also gives the error with its line.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from engine.record.csv_format import BLOCK_SIZE, CsvDialect
from engine.record.schema import RecordSchema
from engine.record.values import ConversionError, TemporalFormats, conform_batch, infer_text_types

__all__ = ["read_csv_contents"]

_BOM = b"\xef\xbb\xbf"


def read_csv_contents(contents: Sequence[bytes], dialects: Sequence[CsvDialect],
                      schemas: Sequence[RecordSchema | None], *, header: bool, ignore_header_names: bool,
                      strings: bool, formats: TemporalFormats) -> list[tuple[RecordSchema, pa.Table] | None]:
    """Each content's ``(schema, records)`` as ``CsvReader`` (with the same options) reads it, or
    None for a content to be read alone."""
    answers: list[tuple[RecordSchema, pa.Table] | None] = [None] * len(contents)
    groups: dict[tuple, list[int]] = {}
    for number, (content, dialect, schema) in enumerate(zip(contents, dialects, schemas)):
        line = _header_line(content, dialect) if header or schema is None else None
        if line is not None:
            groups.setdefault((line, dialect, schema.avro_text if schema else None), []).append(number)
    for (line, dialect, _), members in groups.items():
        schema = schemas[members[0]]
        names = _names(line, dialect, schema, ignore_header_names)
        if names is None:
            continue
        parsed = _parse([contents[number][len(line):] for number in members], dialect, len(names))
        if parsed is None:
            continue
        table, segments = parsed
        table = table.rename_columns(names)
        if schema is not None or strings:
            fixed = schema or RecordSchema.from_arrow(pa.schema([pa.field(name, pa.string()) for name in names]))
            inferred = [fixed] * len(members)
        else:
            inferred = _infer(table, segments, len(members), formats)
        for answer, number in zip(_convert(table, segments, inferred, formats), members):
            answers[number] = answer
    return answers


def _header_line(content: bytes, dialect: CsvDialect) -> bytes | None:
    """The content's first line (with its line break) when this module can read the content."""
    if len(content) > BLOCK_SIZE or content.startswith(_BOM) or dialect.comment or (
            dialect.null_string and dialect.escape and dialect.null_string[0] == dialect.escape):
        return None
    end = content.find(b"\n")
    line = content if end < 0 else content[:end + 1]
    special = [c.encode() for c in (dialect.quote, dialect.escape) if c]
    if not line.strip() or b"\r" in line.rstrip(b"\r\n") or any(c in line for c in special):
        return None
    return line


def _names(line: bytes, dialect: CsvDialect, schema: RecordSchema | None, ignore_header_names: bool) -> list[str] | None:
    """The column names ``CsvReader`` gives the columns under this header line."""
    try:
        values = line.rstrip(b"\r\n").decode("utf-8").split(dialect.delimiter)
    except UnicodeDecodeError:
        return None
    if dialect.trim:
        values = [value.strip() for value in values]
    if dialect.null_string is not None and dialect.null_string in values:
        return None
    if schema is not None and ignore_header_names:
        fields = schema.field_names
        return [fields[i] if i < len(fields) else f"_column_{i + 1}" for i in range(len(values))]
    if len(set(values)) != len(values):
        return None  # duplicate names: CsvReader says which
    return values


def _parse(bodies: list[bytes], dialect: CsvDialect, width: int) -> tuple[pa.Table, np.ndarray] | None:
    """The bodies' records (every column text, trimmed as the dialect says) and, for each
    record, the number of its body; None when the boundaries do not come out one per body."""
    token = "flowsite-boundary-" + uuid.uuid4().hex
    boundary = (token + dialect.delimiter * (width - 1) + "\n").encode()
    pieces = []
    for body in bodies:
        pieces.append(body)
        if body and not body.endswith((b"\n", b"\r")):
            pieces.append(b"\n")
        pieces.append(boundary)
    names = [f"f{i}" for i in range(width)]
    read = pacsv.ReadOptions(block_size=1 << 20, column_names=names)
    parse = pacsv.ParseOptions(delimiter=dialect.delimiter, quote_char=dialect.quote or False,
                               escape_char=dialect.escape or False, double_quote=dialect.quote is not None,
                               newlines_in_values=dialect.quote is not None or dialect.escape is not None,
                               ignore_empty_lines=True)
    nulls = [] if dialect.null_string is None else [dialect.null_string]
    convert = pacsv.ConvertOptions(column_types={name: pa.string() for name in names}, null_values=nulls,
                                   strings_can_be_null=bool(nulls), quoted_strings_can_be_null=False)
    try:
        table = pacsv.read_csv(pa.py_buffer(b"".join(pieces)), read_options=read, parse_options=parse,
                               convert_options=convert)
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    marks = pc.equal(table.column(0), token).to_numpy(zero_copy_only=False)
    ends = np.flatnonzero(marks)
    if len(ends) != len(bodies) or (len(ends) and ends[-1] != table.num_rows - 1):
        return None
    lengths = np.diff(ends, prepend=-1) - 1
    segments = np.repeat(np.arange(len(bodies), dtype=np.int32), lengths)
    table = table.filter(pa.array(~marks)).combine_chunks()
    if dialect.trim:
        table = pa.table([pc.utf8_trim_whitespace(column) for column in table.columns], names=names)
    return table, segments


def _infer(table: pa.Table, segments: np.ndarray, count: int, formats: TemporalFormats) -> list[RecordSchema]:
    """Each body's schema, inferred from its own records."""
    columns = [infer_text_types(column.combine_chunks(), segments, count, formats) for column in table.columns]
    schemas: dict[tuple, RecordSchema] = {}
    inferred = []
    for number in range(count):
        types = tuple(column[number] for column in columns)
        if types not in schemas:
            schemas[types] = RecordSchema.from_arrow(pa.schema(list(zip(table.column_names, types))))
        inferred.append(schemas[types])
    return inferred


def _convert(table: pa.Table, segments: np.ndarray, schemas: list[RecordSchema],
             formats: TemporalFormats) -> list[tuple[RecordSchema, pa.Table] | None]:
    """Each body's records converted to its schema, the bodies of one schema together; a body
    with a value that does not convert gets None (CsvReader reports it)."""
    answers: list[tuple[RecordSchema, pa.Table] | None] = [None] * len(schemas)
    starts = np.searchsorted(segments, np.arange(len(schemas) + 1, dtype=np.int32))
    by_schema: dict[int, list[int]] = {}
    for number, schema in enumerate(schemas):
        by_schema.setdefault(id(schema), []).append(number)
    for members in by_schema.values():
        schema = schemas[members[0]]
        pending = list(members)
        while pending:
            rows = np.concatenate([np.arange(starts[n], starts[n + 1]) for n in pending])
            part = table.take(pa.array(rows, pa.int64())) if len(pending) < len(schemas) else table
            try:
                converted = pa.Table.from_batches([conform_batch(part, schema.arrow, formats)])
            except ConversionError as error:
                row = error.index if error.index is not None else 0
                lengths = [starts[n + 1] - starts[n] for n in pending]
                pending.pop(int(np.searchsorted(np.cumsum(lengths), row, side="right")))
                continue
            offset = 0
            for number in pending:
                length = int(starts[number + 1] - starts[number])
                answers[number] = (schema, converted.slice(offset, length))
                offset += length
            break
    return answers
