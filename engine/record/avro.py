"""Avro content as Arrow record batches, through fastavro.

``AvroRecordReader`` reads an Avro object container file block by block (or, given a schema,
binary datums written one after the other with no header, as NiFi's writers do when the schema
is not embedded) and hands out batches of at most ``BATCH_RECORDS`` records, so memory holds
one block and one batch whatever the content's size. ``AvroRecordWriter`` writes Arrow batches
as a container file (blocks of about 16 KB, compressed with the file's codec) or as bare datums.

Values cross between fastavro's Python values and Arrow with the types of
``engine.record.schema``: fastavro's dates, times, timestamps and decimals are what Arrow's
date32, time32/64, timestamp and decimal128 take and give; the rest is adjusted here (a uuid
becomes its text, a value of a mixed union its text, an Arrow map a dict).

fastavro reads and writes snappy blocks with ``cramjam`` and zstandard blocks with
``backports.zstd``; where those are absent, the codecs of pyarrow (snappy) and of the
``zstandard`` package (which the project already uses) stand in, so no other package is needed.
"""

from __future__ import annotations

import io
import json
import struct
import threading
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, BinaryIO

import fastavro
import fastavro.read
import fastavro.write
import pyarrow as pa

from engine.record.api import BATCH_RECORDS, MalformedRecordError, RecordReader, RecordSetWriter, WriteResult
from engine.record.conform import conform
from engine.record.schema import RecordSchema, SchemaError
from engine.record.streams import CallerInput, OutputSink, buffered_input

__all__ = ["AVRO_MIME_TYPE", "AvroRecordReader", "AvroRecordWriter", "ParsedSchemas"]

AVRO_MIME_TYPE = "application/avro-binary"
MAGIC = b"Obj\x01"
_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError,
                 OverflowError)
#: What fastavro raises for bytes that are not what the schema says (a bad varint, a union
#: index out of range, bytes that are not UTF-8, a short read).
_DECODE_ERRORS = (ValueError, EOFError, IndexError, KeyError, TypeError, UnicodeDecodeError, OverflowError,
                  struct.error, zlib.error, OSError, fastavro.read.SchemaResolutionError)
_ENCODE_ERRORS = (ValueError, TypeError, OverflowError, KeyError, AttributeError)


class ParsedSchemas:
    """fastavro's parsed form of Avro schemas, the last ``size`` used kept (NiFi's Cache Size)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._parsed: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, schema: RecordSchema) -> Any:
        """The parsed form of ``schema``; raises MalformedRecordError when fastavro refuses it."""
        key = schema.avro_text
        with self._lock:
            parsed = self._parsed.get(key)
            if parsed is not None:
                self._parsed.move_to_end(key)
                return parsed
        try:
            parsed = fastavro.parse_schema(json.loads(key))
        except (fastavro.schema.SchemaParseException, ValueError, TypeError, KeyError) as error:
            raise MalformedRecordError(f"the schema is not a valid Avro schema: {error}") from None
        if self._size > 0:
            with self._lock:
                self._parsed[key] = parsed
                while len(self._parsed) > self._size:
                    self._parsed.popitem(last=False)
        return parsed


# -- reading ----------------------------------------------------------------------------------

class AvroRecordReader(RecordReader):
    """Reads Avro content: a container file (its own schema, or ``schema`` when given, to which
    the file's records are resolved), or bare datums of ``schema`` when the content has no header.
    ``parsed`` is fastavro's parsed ``schema``."""

    def __init__(self, stream: BinaryIO, schema: RecordSchema | None = None, parsed: Any = None) -> None:
        self._stream = buffered_input(stream)
        self._start = self._stream.tell()
        self._size = self._stream.seek(0, io.SEEK_END) - self._start
        self._stream.seek(self._start)
        self._records = 0
        head = self._stream.read(len(MAGIC))
        self._stream.seek(self._start)
        self._blocks: Any = None
        self._parsed = parsed
        if schema is not None and head != MAGIC:
            self._schema = schema
            return
        if self._size == 0:
            raise MalformedRecordError("the content is empty: an Avro file starts with a header naming its schema")
        if head != MAGIC:
            raise MalformedRecordError(f"the content is not an Avro object container file: it starts with "
                                       f"{head!r}, not {MAGIC!r}")
        try:
            self._blocks = fastavro.block_reader(self._stream, reader_schema=parsed)
        except _DECODE_ERRORS as error:
            raise MalformedRecordError(f"the Avro header cannot be read ({self._size} bytes of content): "
                                       f"{_reason(error)}") from None
        if schema is not None:
            self._schema = schema
            return
        text = self._blocks.metadata.get("avro.schema")
        try:
            self._schema = RecordSchema.from_avro(text or "")
        except SchemaError as error:
            raise MalformedRecordError(f"the schema in the Avro header is not usable: {error}") from None

    @property
    def schema(self) -> RecordSchema:
        return self._schema

    def batches(self) -> Iterator[pa.RecordBatch]:
        builder = _BatchBuilder(self._schema.arrow)
        rows: list[dict[str, Any]] = []
        first = 0
        records = self._container_records() if self._blocks is not None else self._datum_records()
        for row in records:
            rows.append(row)
            if len(rows) == BATCH_RECORDS:
                yield builder.build(rows, first)
                first += len(rows)
                rows = []
        if rows:
            yield builder.build(rows, first)

    def close(self) -> None:
        if isinstance(self._stream, CallerInput):
            self._stream.release()

    def _container_records(self) -> Iterator[dict[str, Any]]:
        blocks = iter(self._blocks)
        number = 0
        while True:
            position = self._stream.tell() - self._start
            try:
                block = next(blocks)
            except StopIteration:
                return
            except _DECODE_ERRORS as error:
                raise self._block_error(number + 1, position, error) from None
            number += 1
            rows = iter(block)
            for index in range(1, block.num_records + 1):
                try:
                    row = next(rows)
                except (*_DECODE_ERRORS, StopIteration) as error:
                    raise MalformedRecordError(
                        f"record {self._records + 1} (record {index} of block {number}, which starts at byte "
                        f"{block.offset - self._start}) cannot be decoded: {_reason(error)}") from None
                self._records += 1
                yield row

    def _block_error(self, number: int, position: int, error: BaseException) -> MalformedRecordError:
        if isinstance(error, EOFError) or self._stream.tell() - self._start >= self._size:
            return MalformedRecordError(
                f"the content ends inside block {number} (which starts at byte {position} of {self._size}): the "
                f"Avro file is truncated ({_reason(error)})")
        if "sync marker" in str(error):
            return MalformedRecordError(
                f"block {number} at byte {position} is not followed by the file's sync marker: the Avro file is "
                f"damaged there")
        if isinstance(error, fastavro.read.SchemaResolutionError):
            return MalformedRecordError(f"the file's records do not fit the Schema Text: {error}")
        return MalformedRecordError(f"block {number} at byte {position} cannot be read: {_reason(error)}")

    def _datum_records(self) -> Iterator[dict[str, Any]]:
        parsed = self._parsed if self._parsed is not None else fastavro.parse_schema(self._schema.avro)
        stream = self._stream
        while True:
            position = stream.tell() - self._start
            if position >= self._size:
                return
            try:
                row = fastavro.schemaless_reader(stream, parsed, None)
            except _DECODE_ERRORS as error:
                if isinstance(error, EOFError) or stream.tell() - self._start >= self._size:
                    raise MalformedRecordError(
                        f"the content ends inside record {self._records + 1} (which starts at byte {position} of "
                        f"{self._size}): the Avro datums are truncated") from None
                raise MalformedRecordError(f"record {self._records + 1} at byte {position} is not a datum of the "
                                           f"schema: {_reason(error)}") from None
            self._records += 1
            yield row


class _BatchBuilder:
    """Turns fastavro's records into Arrow batches of one schema."""

    def __init__(self, schema: pa.Schema) -> None:
        self._schema = schema
        self._direct = True  # False once a batch needed values adjusted: later ones go column by column

    def build(self, rows: list[dict[str, Any]], first: int) -> pa.RecordBatch:
        if self._direct:
            try:
                return pa.RecordBatch.from_pylist(rows, schema=self._schema)
            except _ARROW_ERRORS:
                self._direct = False
        columns = [self._column([row.get(field.name) for row in rows], field, first) for field in self._schema]
        return pa.RecordBatch.from_arrays(columns, schema=self._schema)

    @staticmethod
    def _column(values: list[Any], field: pa.Field, first: int) -> pa.Array:
        try:
            return pa.array(values, type=field.type)
        except _ARROW_ERRORS:
            values = [_to_arrow_value(value, field.type) for value in values]
        try:
            return pa.array(values, type=field.type)
        except _ARROW_ERRORS:
            for index, value in enumerate(values):
                try:
                    pa.array([value], type=field.type)
                except _ARROW_ERRORS as error:
                    raise MalformedRecordError(f"record {first + index + 1}: field {field.name!r}: {value!r} is not "
                                               f"a {field.type} value ({_reason(error)})") from None
            raise


def _to_arrow_value(value: Any, arrow_type: pa.DataType) -> Any:
    """``value`` as Arrow takes it for ``arrow_type``: uuids and mixed-union values as text,
    nested values adjusted likewise."""
    if value is None:
        return None
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return value if isinstance(value, str) else _text(value)
    if pa.types.is_struct(arrow_type) and isinstance(value, dict):
        return {field.name: _to_arrow_value(value.get(field.name), field.type) for field in arrow_type}
    if (pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)) and isinstance(value, list):
        return [_to_arrow_value(item, arrow_type.value_type) for item in value]
    if pa.types.is_map(arrow_type) and isinstance(value, dict):
        return [(key, _to_arrow_value(item, arrow_type.item_type)) for key, item in value.items()]
    return value


def _text(value: Any) -> str:
    """The text of a non-string value held in a string field (a uuid, a branch of a mixed union)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=str, separators=(",", ":"))
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


# -- writing ----------------------------------------------------------------------------------

class AvroRecordWriter(RecordSetWriter):
    """Writes records of ``schema`` as an Avro container file (``embed``; blocks compressed with
    ``codec``, a fastavro codec name) or as bare datums. ``attributes`` are added to the result's."""

    def __init__(self, stream: BinaryIO, schema: RecordSchema, parsed: Any, *, embed: bool, codec: str = "null",
                 attributes: Mapping[str, str] | None = None) -> None:
        self._stream = OutputSink(stream)
        self._schema = schema
        self._parsed = parsed
        # The Arrow form of the Avro schema (a schema that came from Arrow data may hold types,
        # such as nanosecond timestamps, that Avro keeps at a coarser unit).
        self._arrow = RecordSchema.from_avro(schema.avro).arrow
        # Dates, times and timestamps go to fastavro as the numbers Avro stores (it takes them as
        # they are): making Python datetimes of them would cost more than the rest of the write.
        self._numbers = pa.schema([field.with_type(_as_numbers(field.type)) for field in self._arrow])
        self._fixers = [(field.name, fixer) for field in self._arrow if (fixer := _avro_fixer(field.type))]
        self._attributes = dict(attributes or {})
        self._count = 0
        self._container = fastavro.write.Writer(self._stream, parsed, codec=codec) if embed else None

    @property
    def schema(self) -> RecordSchema:
        return self._schema

    def write_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        table = conform(batch, self._arrow)
        if not self._numbers.equals(self._arrow):
            table = table.cast(self._numbers)
        for chunk in table.to_batches(max_chunksize=BATCH_RECORDS):
            rows = chunk.to_pylist()
            for name, fixer in self._fixers:
                for row in rows:
                    row[name] = fixer(row[name])
            if self._container is not None:
                self._write_rows(rows, self._container.write)
            else:
                buffer = io.BytesIO()
                self._write_rows(rows, lambda row: fastavro.schemaless_writer(buffer, self._parsed, row))
                self._stream.write(buffer.getvalue())

    def _write_rows(self, rows: list[dict[str, Any]], write: Callable[[dict[str, Any]], Any]) -> None:
        for row in rows:
            try:
                write(row)
            except _ENCODE_ERRORS as error:
                raise MalformedRecordError(f"record {self._count + 1} does not fit the Avro schema: "
                                           f"{_reason(error)}") from None
            self._count += 1

    def finish(self) -> WriteResult:
        if self._container is not None:
            self._container.flush()
        self._stream.flush()
        return WriteResult(self._count, {"mime.type": AVRO_MIME_TYPE, "record.count": str(self._count),
                                         **self._attributes})


def _as_numbers(arrow_type: pa.DataType) -> pa.DataType:
    """``arrow_type`` with its dates, times and timestamps as the integers Avro stores them as
    (days, milliseconds or microseconds: the units of the Avro schema's Arrow types)."""
    t = pa.types
    if t.is_timestamp(arrow_type) or t.is_time64(arrow_type):
        return pa.int64()
    if t.is_date32(arrow_type) or t.is_time32(arrow_type):
        return pa.int32()
    if t.is_struct(arrow_type):
        return pa.struct([field.with_type(_as_numbers(field.type)) for field in arrow_type])
    if t.is_list(arrow_type):
        return pa.list_(arrow_type.value_field.with_type(_as_numbers(arrow_type.value_type)))
    if t.is_map(arrow_type):
        return pa.map_(arrow_type.key_field, arrow_type.item_field.with_type(_as_numbers(arrow_type.item_type)))
    return arrow_type


def _avro_fixer(arrow_type: pa.DataType) -> Callable[[Any], Any] | None:
    """A function making Arrow's Python value of ``arrow_type`` what fastavro writes (a map's
    pairs a dict), or None when Arrow's values need nothing."""
    if pa.types.is_map(arrow_type):
        item = _avro_fixer(arrow_type.item_type)
        if item is None:
            return lambda value: None if value is None else dict(value)
        return lambda value: None if value is None else {key: item(element) for key, element in value}
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type) or pa.types.is_fixed_size_list(arrow_type):
        inner = _avro_fixer(arrow_type.value_type)
        if inner is None:
            return None
        return lambda value: None if value is None else [inner(element) for element in value]
    if pa.types.is_struct(arrow_type):
        fields = [(field.name, fixer) for field in arrow_type if (fixer := _avro_fixer(field.type))]
        if not fields:
            return None

        def fix_struct(value: Any) -> Any:
            if value is not None:
                for name, fixer in fields:
                    value[name] = fixer(value[name])
            return value

        return fix_struct
    return None


# -- streams and codecs -----------------------------------------------------------------------

def _reason(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _read_long(stream: BinaryIO) -> int:
    """An Avro long (zig-zag varint) from ``stream``."""
    shift = result = 0
    while True:
        byte = stream.read(1)
        if not byte:
            raise EOFError("the content ends inside a block header")
        result |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return (result >> 1) ^ -(result & 1)
        shift += 7


def _long_bytes(value: int) -> bytes:
    """``value`` as an Avro long (zig-zag varint)."""
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _snappy_length(data: bytes) -> int:
    """The uncompressed length a raw snappy block starts with (an unsigned varint)."""
    shift = result = 0
    for byte in data[:5]:
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result
        shift += 7
    raise ValueError("the snappy block has no valid length")


def _snappy_read_block(stream: BinaryIO) -> io.BytesIO:
    length = _read_long(stream)
    data = stream.read(length - 4)
    checksum = stream.read(4)
    if len(data) != length - 4 or len(checksum) != 4:
        raise EOFError(f"the snappy block of {length} bytes is cut short")
    plain = pa.decompress(data, decompressed_size=_snappy_length(data), codec="snappy", asbytes=True)
    if struct.unpack(">I", checksum)[0] != zlib.crc32(plain):
        raise ValueError("the snappy block's CRC32 does not match its data")
    return io.BytesIO(plain)


def _snappy_write_block(stream: BinaryIO, block: bytes, compression_level: int | None = None) -> None:
    data = pa.compress(block, codec="snappy", asbytes=True)
    stream.write(_long_bytes(len(data) + 4))
    stream.write(data)
    stream.write(struct.pack(">I", zlib.crc32(block)))


def _zstandard_read_block(stream: BinaryIO) -> io.BytesIO:
    import zstandard

    length = _read_long(stream)
    data = stream.read(length)
    if len(data) != length:
        raise EOFError(f"the zstandard block of {length} bytes is cut short")
    with zstandard.ZstdDecompressor().stream_reader(data) as reader:
        return io.BytesIO(reader.read())


def _install_codecs() -> None:
    """Give fastavro the snappy and zstandard codecs through libraries the project has, where
    the ones fastavro looks for are missing."""
    try:
        import cramjam  # noqa: F401
    except ImportError:
        fastavro.read.BLOCK_READERS["snappy"] = _snappy_read_block
        fastavro.write._write.BLOCK_WRITERS["snappy"] = _snappy_write_block
    try:
        from backports import zstd  # noqa: F401
    except ImportError:
        fastavro.read.BLOCK_READERS["zstandard"] = _zstandard_read_block


_install_codecs()
