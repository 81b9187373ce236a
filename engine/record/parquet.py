"""Parquet content as Arrow record batches, through pyarrow.parquet.

``ParquetRecordReader`` reads the footer, then one row group at a time (``iter_batches`` of at
most ``BATCH_RECORDS`` records), so memory holds one row group's pages whatever the content's
size. ``ParquetRecordWriter`` gathers batches until they hold ``row_group_bytes`` of Arrow data,
writes them as one row group, and writes the footer at the end: memory holds one row group.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from engine.record.api import BATCH_RECORDS, MalformedRecordError, RecordReader, RecordSetWriter, WriteResult
from engine.record.conform import conform
from engine.record.schema import RecordSchema, SchemaError
from engine.record.streams import OutputSink

__all__ = ["PARQUET_MIME_TYPE", "ParquetOptions", "ParquetRecordReader", "ParquetRecordWriter"]

PARQUET_MIME_TYPE = "application/parquet"
MAGIC = b"PAR1"
#: The key-value metadata entry parquet-avro keeps the Avro schema in.
AVRO_SCHEMA_KEY = b"parquet.avro.schema"
_ERRORS = (pa.ArrowException, OSError, ValueError)
#: Column chunks are read through buffers of this size rather than whole (a row group's pages
#: are not all held at once).
_READ_BUFFER = 1 << 20


class ParquetRecordReader(RecordReader):
    """Reads a Parquet file (the whole content, which must be seekable); the schema is the file's."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        start = stream.tell()
        if start:
            raise ValueError("a Parquet reader needs the stream at the content's first byte")
        self._size = stream.seek(0, io.SEEK_END)
        footer = _check_frame(stream, self._size)
        stream.seek(0)
        try:
            self._file = pq.ParquetFile(stream, pre_buffer=False, buffer_size=_READ_BUFFER)
        except _ERRORS as error:
            raise MalformedRecordError(f"the Parquet footer ({footer} bytes at byte {self._size - 8 - footer}) "
                                       f"cannot be read: {error}") from None
        self._schema = _file_schema(self._file.schema_arrow)

    @property
    def schema(self) -> RecordSchema:
        return self._schema

    def batches(self) -> Iterator[pa.RecordBatch]:
        metadata = self._file.metadata
        first = 0
        for group in range(metadata.num_row_groups):
            rows = metadata.row_group(group).num_rows
            try:
                for batch in self._file.iter_batches(batch_size=BATCH_RECORDS, row_groups=[group]):
                    yield batch
            except _ERRORS as error:
                start, end = _byte_range(metadata.row_group(group))
                raise MalformedRecordError(
                    f"row group {group + 1} of {metadata.num_row_groups} (records {first + 1} to {first + rows}, "
                    f"bytes {start} to {end}) cannot be read: {error}") from None
            first += rows

    def close(self) -> None:
        self._file.close()


def _file_schema(arrow: pa.Schema) -> RecordSchema:
    """The records' schema: the Avro schema the file keeps (parquet-avro's ``parquet.avro.schema``,
    which NiFi's and Flowsite's writers store) when it describes the file's columns, else the
    Arrow schema's own."""
    metadata = arrow.metadata or {}
    arrow = arrow.remove_metadata()
    text = metadata.get(AVRO_SCHEMA_KEY)
    if text:
        try:
            kept = RecordSchema.from_avro(text.decode())
        except (SchemaError, UnicodeDecodeError):
            kept = None
        if kept is not None and kept.arrow.equals(arrow):
            return RecordSchema(arrow, kept.avro)
    try:
        return RecordSchema.from_arrow(arrow)
    except SchemaError as error:
        raise MalformedRecordError(f"the Parquet file has a column records cannot hold: {error}") from None


def _check_frame(stream: BinaryIO, size: int) -> int:
    """The footer's length, after checking the magic bytes Parquet puts at both ends."""
    if size < 12:
        raise MalformedRecordError(f"the content ({size} bytes) is not a Parquet file: one has at least 12 bytes "
                                   f"(the magic {MAGIC!r} at both ends and the footer's length)")
    stream.seek(0)
    head = stream.read(4)
    if head != MAGIC:
        raise MalformedRecordError(f"the content is not a Parquet file: it starts with {head!r}, not {MAGIC!r}")
    stream.seek(size - 8)
    tail = stream.read(8)
    if tail[4:] != MAGIC:
        raise MalformedRecordError(f"the content ({size} bytes) does not end with Parquet's {MAGIC!r} (its last "
                                   f"4 bytes are {tail[4:]!r}): the Parquet file is truncated or its footer damaged")
    footer = int.from_bytes(tail[:4], "little")
    if footer > size - 12:
        raise MalformedRecordError(f"the Parquet footer is said to be {footer} bytes, more than the {size - 12} the "
                                   f"content holds besides the magic bytes: the file is truncated")
    return footer


def _byte_range(group: pq.RowGroupMetaData) -> tuple[int, int]:
    """Where a row group's column chunks lie in the file."""
    starts, ends = [], []
    for index in range(group.num_columns):
        column = group.column(index)
        start = column.dictionary_page_offset if column.has_dictionary_page else column.data_page_offset
        starts.append(start)
        ends.append(start + column.total_compressed_size)
    return min(starts, default=0), max(ends, default=0)


@dataclass(frozen=True)
class ParquetOptions:
    """How a ParquetRecordWriter encodes: pyarrow's names for NiFi's properties."""

    compression: str = "none"
    row_group_bytes: int = 32 * 1024 * 1024
    data_page_size: int | None = None
    dictionary_pagesize_limit: int | None = None
    use_dictionary: bool = True
    data_page_version: str = "1.0"


class ParquetRecordWriter(RecordSetWriter):
    """Writes records of ``schema`` as a Parquet file; ``attributes`` are added to the result's."""

    def __init__(self, stream: BinaryIO, schema: RecordSchema, options: ParquetOptions,
                 attributes: Mapping[str, str] | None = None) -> None:
        self._schema = schema
        self._arrow = schema.arrow.remove_metadata()
        stored = self._arrow.with_metadata({AVRO_SCHEMA_KEY: schema.avro_text.encode()})
        self._options = options
        self._attributes = dict(attributes or {})
        self._pending: list[pa.RecordBatch] = []
        self._pending_bytes = 0
        self._count = 0
        self._sink = OutputSink(stream)
        try:
            self._writer = pq.ParquetWriter(
                self._sink, stored, compression=options.compression, use_dictionary=options.use_dictionary,
                data_page_size=options.data_page_size, dictionary_pagesize_limit=options.dictionary_pagesize_limit,
                data_page_version=options.data_page_version)
        except _ERRORS as error:
            raise MalformedRecordError(f"the schema cannot be written as Parquet: {error}") from None

    @property
    def schema(self) -> RecordSchema:
        return self._schema

    def write_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        for chunk in conform(batch, self._arrow).to_batches(max_chunksize=BATCH_RECORDS):
            self._pending.append(chunk)
            self._pending_bytes += chunk.nbytes
            self._count += chunk.num_rows
            if self._pending_bytes >= self._options.row_group_bytes:
                self._write_row_group()

    def _write_row_group(self) -> None:
        table = pa.Table.from_batches(self._pending, schema=self._arrow)
        self._pending, self._pending_bytes = [], 0
        try:
            self._writer.write_table(table, row_group_size=max(table.num_rows, 1))
        except _ERRORS as error:
            raise MalformedRecordError(f"records up to record {self._count} cannot be written as Parquet: "
                                       f"{error}") from None

    def finish(self) -> WriteResult:
        if self._pending:
            self._write_row_group()
        self._writer.close()
        self._sink.flush()
        return WriteResult(self._count, {"mime.type": PARQUET_MIME_TYPE, "record.count": str(self._count),
                                         **self._attributes})
