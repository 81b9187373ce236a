"""JSON records: a streaming reader (ijson, pyarrow.json for JSON lines) and an orjson writer.

The reader accepts what NiFi's JsonTreeReader accepts: a top-level array of objects, one
object, or many objects one after the other (JSON lines, or concatenated objects). An array is
streamed element by element with ijson (its C backend), so memory is bounded by a batch.
Content whose first line is a complete object is read as JSON lines by ``pyarrow.json`` a block
at a time; when a block has values of other types than the schema's (a number in a text field,
which NiFi coerces), reading goes on from that record with ijson, which coerces them.

Without a schema, the schema is inferred from the first ``INFERENCE_RECORDS`` records (NiFi
reads the whole content to infer; Flowsite keeps memory bounded): numbers are ``int``, ``long``
or ``double``, ``true``/``false`` ``boolean``, objects records, arrays arrays, text ``string``
(or a date, time or timestamp when a Date/Time/Timestamp Format is set and every value matches
it). A field of mixed types is ``string``. A later record whose values do not fit is reported
as malformed, naming the record.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

import ijson
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from engine.record.api import BATCH_RECORDS, MalformedRecordError, RecordReader, RecordSetWriter, WriteResult
from engine.record.schema import RecordSchema
from engine.record.cursors import StreamCursor, StreamCursors
from engine.record.values import ConversionError, TemporalFormats, conform_batch, describe, format_column, \
    infer_text_type, merge_types, unsliced

__all__ = ["INFERENCE_RECORDS", "TIMESTAMP_REPRESENTATIONS", "JsonReader", "JsonWriter",
           "infer_json_type", "nested_schema"]

#: Records schema inference looks at (the first ones of the content).
INFERENCE_RECORDS = BATCH_RECORDS
_BLOCK_SIZE = 512 << 10  # pyarrow.json reads ahead about 32 blocks; longer lines go the ijson way
_LEADING_SPACE = re.compile(rb"^\s+")
_LEADING_COMMENTS = re.compile(rb"^(\s+|//[^\n]*(\n|$)|/\*.*?\*/)+", re.S)


# -- inference --------------------------------------------------------------------------------

def infer_json_type(value: Any, formats: TemporalFormats = TemporalFormats()) -> pa.DataType | None:
    """The type of one JSON value (None for null)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return pa.bool_()
    if isinstance(value, int):
        return pa.int32() if -(2 ** 31) <= value < 2 ** 31 else pa.int64() if -(2 ** 63) <= value < 2 ** 63 \
            else pa.float64()
    if isinstance(value, (float, decimal.Decimal)):
        return pa.float64()
    if isinstance(value, str):
        if formats.date or formats.time or formats.timestamp:
            return infer_text_type(pa.array([value], pa.string()), formats)
        return pa.string()
    if isinstance(value, dict):
        return pa.struct([pa.field(key, _settled(infer_json_type(item, formats))) for key, item in value.items()])
    if isinstance(value, list):
        element = None
        for item in value:
            element = merge_types(element, infer_json_type(item, formats))
        return pa.list_(element if element is not None else pa.null())
    return pa.string()


def _settled(arrow_type: pa.DataType | None) -> pa.DataType:
    return pa.null() if arrow_type is None else arrow_type


def _concrete(arrow_type: pa.DataType | None) -> pa.DataType:
    """Types never seen with a value become string (NiFi's default)."""
    if arrow_type is None or pa.types.is_null(arrow_type):
        return pa.string()
    if pa.types.is_struct(arrow_type):
        return pa.struct([pa.field(f.name, _concrete(f.type)) for f in arrow_type])
    if pa.types.is_list(arrow_type):
        return pa.list_(_concrete(arrow_type.value_type))
    return arrow_type


def _infer_schema(records: list[dict], formats: TemporalFormats) -> RecordSchema:
    fields: dict[str, pa.DataType | None] = {}
    for record in records:
        for key, value in record.items():
            fields[key] = merge_types(fields.get(key), infer_json_type(value, formats))
    return RecordSchema.from_arrow(pa.schema([pa.field(name, _concrete(t)) for name, t in fields.items()]))


def nested_schema(schema: RecordSchema, name: str) -> RecordSchema | None:
    """The record schema of the first field called ``name`` in ``schema`` (depth first; an
    array's items when the field is an array of records), or None."""
    def find(arrow_type: pa.DataType) -> pa.DataType | None:
        if pa.types.is_list(arrow_type):
            return find(arrow_type.value_type)
        if not pa.types.is_struct(arrow_type):
            return None
        for field in arrow_type:
            if field.name == name:
                found = field.type.value_type if pa.types.is_list(field.type) else field.type
                return found if pa.types.is_struct(found) else None
            found = find(field.type)
            if found is not None:
                return found
        return None

    found = find(pa.struct(list(schema.arrow)))
    return RecordSchema.from_arrow(pa.schema(list(found))) if found is not None else None


# -- transport: what a JSON value is parsed as before conversion to the schema's type --------

def _transport(arrow_type: pa.DataType) -> pa.DataType:
    """The type JSON values are parsed into (text for dates, decimals, bytes: converted after)."""
    t = pa.types
    if t.is_struct(arrow_type):
        return pa.struct([pa.field(f.name, _transport(f.type)) for f in arrow_type])
    if t.is_list(arrow_type) or t.is_large_list(arrow_type):
        return pa.list_(_transport(arrow_type.value_type))
    if t.is_map(arrow_type):
        return pa.map_(pa.string(), _transport(arrow_type.item_type))
    if t.is_integer(arrow_type):
        return pa.int64()
    if t.is_floating(arrow_type):
        return pa.float64()
    if t.is_boolean(arrow_type) or t.is_null(arrow_type):
        return arrow_type
    return pa.string()


def _has_map(arrow_type: pa.DataType) -> bool:
    if pa.types.is_map(arrow_type):
        return True
    if pa.types.is_struct(arrow_type):
        return any(_has_map(f.type) for f in arrow_type)
    if pa.types.is_list(arrow_type):
        return _has_map(arrow_type.value_type)
    return False


def _coerce(value: Any, arrow_type: pa.DataType) -> Any:
    """A JSON value made to fit a transport type the way NiFi coerces (5 in a text field is "5")."""
    if value is None:
        return None
    t = pa.types
    if t.is_string(arrow_type):
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float, decimal.Decimal)):
            return str(value)
        return orjson.dumps(value).decode()
    if t.is_integer(arrow_type) and isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value)
    if t.is_integer(arrow_type) and isinstance(value, float) and value.is_integer():
        return int(value)
    if t.is_floating(arrow_type) and isinstance(value, (str, int)) and not isinstance(value, bool):
        try:
            return float(value)
        except ValueError:
            return value
    if t.is_boolean(arrow_type) and isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if t.is_struct(arrow_type) and isinstance(value, dict):
        return {f.name: _coerce(value.get(f.name), f.type) for f in arrow_type}
    if t.is_list(arrow_type) and isinstance(value, list):
        return [_coerce(item, arrow_type.value_type) for item in value]
    if t.is_map(arrow_type) and isinstance(value, dict):
        return {key: _coerce(item, arrow_type.item_type) for key, item in value.items()}
    return value


# -- reading ----------------------------------------------------------------------------------

class JsonReader(RecordReader):
    """Reads JSON records from a seekable stream (see the module docstring)."""

    def __init__(self, stream: BinaryIO, *, schema: RecordSchema | None = None, starting_field: str | None = None,
                 formats: TemporalFormats = TemporalFormats(), allow_comments: bool = False) -> None:
        self._stream = stream
        self._options = {"allow_comments": True} if allow_comments else {}
        self._start = stream.tell()
        self._cursors = StreamCursors(stream)
        self._cursor: StreamCursor | None = None
        self._formats = formats
        self._records = 0
        self._prefix, self._multiple = self._locate(starting_field)
        self._sample: list = []
        self._lines = self._prefix == "" and self._multiple and self._first_line_is_object()
        if schema is None:
            values = self._values(0)
            try:
                for value in values:
                    self._sample.append(value)
                    if len(self._sample) >= INFERENCE_RECORDS:
                        break
            except ijson.JSONError as error:
                self._records = len(self._sample)
                raise self._malformed(error) from None
            self._pending = values
            schema = _infer_schema([self._checked(v, i + 1) for i, v in enumerate(self._sample)], formats)
        else:
            self._pending = None
        self._schema = schema
        self._transport = _transport(pa.struct(list(schema.arrow)))
        self._records_done = False

    @property
    def schema(self) -> RecordSchema:
        return self._schema

    def _locate(self, starting_field: str | None) -> tuple[str | None, bool]:
        """Where the records are: (ijson prefix, whether many values follow one another)."""
        self._stream.seek(self._start)
        head = self._stream.read(4096)
        if head.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark, which ijson refuses
            self._start += 3
            head = head[3:]
        head = (_LEADING_COMMENTS if self._options else _LEADING_SPACE).sub(b"", head)
        if not head:
            return None, False
        if starting_field is None:
            return ("item", False) if head[:1] == b"[" else ("", True)
        self._cursor = self._cursors.open(self._start)
        expect = False
        try:
            for prefix, event, value in ijson.parse(self._cursor, multiple_values=True, **self._options):
                if expect:
                    if event == "start_array":
                        return f"{prefix}.item", False
                    if event == "start_map":
                        return prefix, False
                    return None, False  # a scalar: no records
                expect = event == "map_key" and value == starting_field
        except ijson.JSONError as error:
            raise self._malformed(error) from None
        return None, False

    def _first_line_is_object(self) -> bool:
        self._stream.seek(self._start)
        head = self._stream.read(_BLOCK_SIZE)  # one read: the content stream may be unbuffered
        line = head.split(b"\n", 1)[0].strip()
        if not line.startswith(b"{"):
            return False
        try:
            return isinstance(orjson.loads(line), dict)
        except orjson.JSONDecodeError:
            return False

    def _values(self, skip: int) -> Iterator[Any]:
        """The record values, after the first ``skip`` ones."""
        if self._prefix is None:
            return iter(())
        self._cursor = self._cursors.open(self._start)
        values = ijson.items(self._cursor, self._prefix, multiple_values=self._multiple, use_float=True,
                             **self._options)
        for _ in range(skip):
            next(values, None)
        return values

    def _checked(self, value: Any, number: int) -> dict:
        if not isinstance(value, dict):
            kind = "array" if isinstance(value, list) else "null" if value is None else "text" \
                if isinstance(value, str) else "number" if not isinstance(value, bool) else "boolean"
            raise MalformedRecordError(f"record {number} is a JSON {kind}, not an object")
        return value

    def _malformed(self, error: Exception) -> MalformedRecordError:
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        detail = lines[0] if lines else type(error).__name__
        context = f" near {lines[1]!r}" if len(lines) > 2 else ""
        offset = f" ({self._cursor.tell() - self._start} bytes read)" if self._cursor is not None else ""
        return MalformedRecordError(f"JSON is malformed after record {self._records}{offset}: {detail}{context}")

    def batches(self) -> Iterator[pa.RecordBatch]:
        try:
            if self._lines and not _has_map(self._transport):
                yield from self._line_batches()
                if self._records_done:
                    return
                values = self._values(self._records)
            elif self._pending is not None:
                values = _chain(self._sample, self._pending)
            else:
                values = self._values(0)
            yield from self._value_batches(values)
        finally:
            self.close()

    def close(self) -> None:
        """Nothing reads the stream after this (pyarrow's read-ahead included)."""
        self._cursors.release()

    def _line_batches(self) -> Iterator[pa.RecordBatch]:
        """JSON lines through pyarrow.json; stops (``_records_done`` False) at a block it refuses."""
        self._records_done = False
        cursor = self._cursors.open(self._start)
        options = pajson.ParseOptions(explicit_schema=pa.schema(list(self._transport)),
                                      unexpected_field_behavior="ignore", newlines_in_values=False)
        reader = None
        try:
            reader = pajson.open_json(cursor, read_options=pajson.ReadOptions(use_threads=False,
                                                                                block_size=_BLOCK_SIZE),
                                      parse_options=options)
            while True:
                try:
                    block = reader.read_next_batch()
                except StopIteration:
                    self._records_done = True
                    return
                for start in range(0, block.num_rows, BATCH_RECORDS):
                    yield self._converted(block.slice(start, BATCH_RECORDS))
        except (pa.ArrowInvalid, StopIteration):
            return  # values of other types (coerced by the ijson path), or not JSON lines after all
        finally:
            if reader is not None:
                reader.close()
            cursor.release()  # pyarrow may still be reading ahead: it now reads nothing

    def _value_batches(self, values: Iterator[Any]) -> Iterator[pa.RecordBatch]:
        chunk: list[dict] = []
        try:
            for value in values:
                chunk.append(self._checked(value, self._records + len(chunk) + 1))
                if len(chunk) >= BATCH_RECORDS:
                    yield self._arrow(chunk)
                    chunk = []
        except ijson.JSONError as error:
            self._records += len(chunk)
            raise self._malformed(error) from None
        if chunk:
            yield self._arrow(chunk)

    def _arrow(self, records: list[dict]) -> pa.RecordBatch:
        try:
            array = pa.array(records, type=self._transport)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            array = None
        if array is None:
            coerced = [_coerce(record, self._transport) for record in records]
            try:
                array = pa.array(coerced, type=self._transport)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                raise self._misfit(coerced) from None
        return self._converted(pa.RecordBatch.from_struct_array(array))

    def _misfit(self, records: list[dict]) -> MalformedRecordError:
        """Name the record and field that do not fit the schema (the error path)."""
        for index, record in enumerate(records):
            for field in self._transport:
                try:
                    pa.array([record.get(field.name)], type=field.type)
                except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                    return MalformedRecordError(
                        f"record {self._records + index + 1}, field {field.name!r}: value "
                        f"{_short(record.get(field.name))} does not convert to "
                        f"{describe(self._schema.arrow.field(field.name).type)}")
        return MalformedRecordError(f"records {self._records + 1} to {self._records + len(records)} do not fit the "
                                    f"schema")

    def _converted(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        try:
            converted = conform_batch(batch, self._schema.arrow, self._formats)
        except ConversionError as error:
            raise MalformedRecordError(f"record {self._records + error.index + 1}, field {error.field!r}: "
                                       f"{error}") from None
        self._records += batch.num_rows
        return converted


def _short(value: Any) -> str:
    text = orjson.dumps(value, default=str).decode()
    return text if len(text) <= 60 else text[:57] + "..."


def _chain(first: list, rest: Iterator) -> Iterator:
    yield from first
    yield from rest


# -- writing ----------------------------------------------------------------------------------

#: NiFi's Timestamp Representation values.
TIMESTAMP_REPRESENTATIONS = ("AUTO", "FORMATTED_STRING", "EPOCH_MILLISECONDS", "EPOCH_SECONDS")


def _jsonable(column: pa.Array, formats: TemporalFormats, timestamps: str = "AUTO") -> pa.Array:
    """Values as orjson writes them: dates and times as text; timestamps as ``timestamps`` says
    (AUTO: text with a Timestamp Format, else epoch milliseconds, as NiFi does)."""
    kind = column.type
    t = pa.types
    column = unsliced(column)
    mask = column.is_null() if column.null_count else None
    if t.is_struct(kind):
        children = [_jsonable(column.field(i), formats, timestamps) for i in range(kind.num_fields)]
        return pa.StructArray.from_arrays(children, names=[f.name for f in kind], mask=mask)
    if t.is_list(kind) or t.is_large_list(kind):
        column = column.cast(pa.list_(kind.value_type)) if t.is_large_list(kind) else column
        values = _jsonable(column.values, formats, timestamps)
        return pa.ListArray.from_arrays(column.offsets, values, mask=mask)
    if t.is_timestamp(kind):
        if timestamps == "FORMATTED_STRING" or (timestamps == "AUTO" and formats.timestamp):
            return format_column(column, formats)
        millis = pc.cast(pc.cast(column, pa.timestamp("ms", kind.tz), safe=False), pa.int64())
        if timestamps == "EPOCH_SECONDS":
            thousandth = pa.scalar(decimal.Decimal("0.001"), pa.decimal128(4, 3))
            return pc.cast(pc.multiply(pc.cast(millis, pa.decimal128(23, 0)), thousandth), pa.decimal128(23, 3))
        return millis
    if t.is_date(kind) or t.is_time(kind):
        return format_column(column, formats)
    return column


def _default(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return orjson.Fragment(str(value))
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _maps_to_objects(value: Any, arrow_type: pa.DataType) -> Any:
    """Map values come from Arrow as lists of pairs: make them objects."""
    if value is None:
        return None
    if pa.types.is_map(arrow_type):
        return {key: _maps_to_objects(item, arrow_type.item_type) for key, item in value}
    if pa.types.is_struct(arrow_type):
        return {f.name: _maps_to_objects(value.get(f.name), f.type) for f in arrow_type}
    if pa.types.is_list(arrow_type):
        return [_maps_to_objects(item, arrow_type.value_type) for item in value]
    return value


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _flush(stream: BinaryIO) -> None:
    """Flush a stream that can be flushed (a session's content writer has only ``write``)."""
    flush = getattr(stream, "flush", None)
    if flush is not None:
        flush()


class JsonWriter(RecordSetWriter):
    """Writes records as a JSON array or one object per line (NiFi's Output Grouping)."""

    def __init__(self, stream: BinaryIO, schema: RecordSchema, *, one_line_per_object: bool = False,
                 pretty: bool = False, suppress_nulls: bool = False, formats: TemporalFormats = TemporalFormats(),
                 timestamps: str = "AUTO", compressor: BinaryIO | None = None, mime_type: str = "application/json",
                 attributes: dict[str, str] | None = None) -> None:
        self._stream = stream
        self._out = compressor if compressor is not None else stream
        self._compressor = compressor
        self._timestamps = timestamps
        self._mime_type = mime_type
        self._schema = schema
        self._lines = one_line_per_object
        self._option = orjson.OPT_INDENT_2 if pretty and not one_line_per_object else 0
        self._suppress = suppress_nulls
        self._formats = formats
        self._attributes = dict(attributes or {})
        self._count = 0
        self._maps = _has_map(pa.struct(list(schema.arrow)))

    @property
    def schema(self) -> RecordSchema:
        return self._schema

    def write_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        try:
            batch = conform_batch(batch, self._schema.arrow, self._formats)
        except ConversionError as error:
            raise MalformedRecordError(f"record {self._count + error.index + 1}, field {error.field!r}: {error}") from None
        if batch.num_rows == 0:
            return
        columns = [_jsonable(column, self._formats, self._timestamps) for column in batch.columns]
        records = pa.StructArray.from_arrays(columns, names=batch.schema.names).to_pylist()
        if self._maps:
            records = [_maps_to_objects(record, pa.struct(list(self._schema.arrow))) for record in records]
        if self._suppress:
            records = [_without_nulls(record) for record in records]
        if self._lines:
            data = b"\n".join(orjson.dumps(record, default=_default) for record in records)
            self._out.write((b"\n" if self._count else b"") + data)
        else:
            text = orjson.dumps(records, default=_default, option=self._option)
            inner = text[1:-1].strip(b"\n") if self._option else text[1:-1]
            separator = (b",\n" if self._count else b"[\n") if self._option else (b"," if self._count else b"[")
            self._out.write(separator + inner)
        self._count += batch.num_rows

    def finish(self) -> WriteResult:
        if not self._lines:
            self._out.write(b"[]" if self._count == 0 else (b"\n]" if self._option else b"]"))
        if self._compressor is not None:
            self._compressor.close()  # writes the compressed stream's end; the stream stays open
        _flush(self._stream)
        attributes = {"mime.type": self._mime_type, "record.count": str(self._count), **self._attributes}
        return WriteResult(self._count, attributes)
