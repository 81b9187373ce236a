"""Values of text formats (CSV, JSON) as Arrow: inference, conversion to a schema, formatting.

Text readers see strings (CSV) or JSON values; this module turns them into the types of a
record schema, a column at a time with Arrow kernels:

- ``infer_text_type`` infers a column's type as NiFi does for CSV: whole numbers are ``int``
  (``long`` beyond 32 bits), numbers with a decimal point ``double`` (NiFi infers ``float`` for
  most of them; Arrow and Spark would lose digits), ``true``/``false`` are ``boolean``, values
  matching the Date/Time/Timestamp Format (when one is set) are dates, times or timestamps;
  anything else, or a mix (numbers and words), is ``string``.
- ``convert_column`` converts a column (strings, or Arrow values of another type) to a field's
  type, raising ``ConversionError`` naming the first value that does not convert.
- ``format_column`` renders values as text for writers (dates with the configured formats).

Date, Time and Timestamp formats are Java ``DateTimeFormatter`` patterns, as NiFi users write
them; ``java_pattern`` translates them for Arrow's strptime/strftime. Pattern letters Arrow has
no counterpart for are refused at validation, and fractional seconds (``S``) are supported only
at the end of a pattern (``yyyy-MM-dd HH:mm:ss.SSS``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from engine.components import PropertyDescriptor

if TYPE_CHECKING:
    from engine.components.context import ConfigurationContext

__all__ = ["DATE_FORMAT", "TIME_FORMAT", "TIMESTAMP_FORMAT", "ConversionError", "TemporalFormats", "conform_array",
           "conform_batch", "convert_column", "describe", "format_column", "infer_text_type", "java_pattern",
           "merge_types", "unsliced"]


class ConversionError(ValueError):
    """A value that does not convert to a field's type: ``index`` is its row in the column."""

    def __init__(self, index: int, value: object, target: pa.DataType, reason: str = "") -> None:
        self.index = index
        self.value = value
        self.target = target
        #: The field (column) it belongs to, when known.
        self.field: str | None = None
        super().__init__(f"value {value!r} does not convert to {describe(target)}{': ' + reason if reason else ''}")


def describe(arrow_type: pa.DataType) -> str:
    """A type as NiFi users name it (int, long, double, timestamp...)."""
    names = {pa.int32(): "int", pa.int64(): "long", pa.float32(): "float", pa.float64(): "double",
             pa.bool_(): "boolean", pa.string(): "string", pa.date32(): "date", pa.binary(): "bytes"}
    if arrow_type in names:
        return names[arrow_type]
    if pa.types.is_timestamp(arrow_type):
        return "timestamp"
    if pa.types.is_time(arrow_type):
        return "time"
    if pa.types.is_decimal(arrow_type):
        return f"decimal({arrow_type.precision}, {arrow_type.scale})"
    return str(arrow_type)


# -- Java date/time patterns ------------------------------------------------------------------

_LETTERS = {
    "yyyy": "%Y", "uuuu": "%Y", "yy": "%y", "uu": "%y", "MMMM": "%B", "MMM": "%b", "MM": "%m", "M": "%m",
    "LLLL": "%B", "LLL": "%b", "LL": "%m", "L": "%m", "dd": "%d", "d": "%d", "DDD": "%j", "D": "%j",
    "HH": "%H", "H": "%H", "hh": "%I", "h": "%I", "mm": "%M", "m": "%M", "ss": "%S", "s": "%S", "a": "%p",
    "EEEE": "%A", "EEE": "%a", "EE": "%a", "E": "%a", "XXX": "%z", "XX": "%z", "X": "%z", "xxx": "%z", "xx": "%z",
    "x": "%z", "Z": "%z", "ZZ": "%z", "ZZZ": "%z", "z": "%Z",
}
_RUN = re.compile(r"'([^']*)'|([A-Za-z])\2*|(.)", re.S)


@dataclass(frozen=True)
class JavaPattern:
    """A Java date/time pattern translated for Arrow: ``strftime`` and the fractional-second
    digits (``SSS``) that follow it, if any."""

    strftime: str
    fraction: int = 0


@lru_cache(maxsize=64)
def java_pattern(pattern: str) -> JavaPattern:
    """Translate a Java ``DateTimeFormatter`` pattern; raises ValueError for what Arrow cannot do."""
    parts: list[str] = []
    fraction = 0
    for match in _RUN.finditer(pattern):
        literal, letter, other = match.group(1), match.group(2), match.group(3)
        if fraction:
            raise ValueError(f"fractional seconds must end the pattern {pattern!r}")
        if literal is not None:
            parts.append("'" if literal == "" else literal.replace("%", "%%"))
        elif other is not None:
            parts.append(other.replace("%", "%%"))
        elif letter == "S":
            if not parts or not parts[-1].endswith(".") or "%S" not in "".join(parts):
                raise ValueError(f"fractional seconds (S) are supported only as '.S...' after the seconds in {pattern!r}")
            parts[-1] = parts[-1][:-1]
            fraction = len(match.group(0))
        else:
            run = match.group(0)
            if run not in _LETTERS:
                raise ValueError(f"pattern letters {run!r} in {pattern!r} have no equivalent Flowsite can use")
            parts.append(_LETTERS[run])
    if not parts and not fraction:
        raise ValueError("the pattern is empty")
    return JavaPattern("".join(parts), fraction)


def _pattern_validator(value: str, context) -> str | None:
    try:
        java_pattern(value)
    except ValueError as error:
        return f"is not a usable date/time pattern: {error}"
    return None


def _format_property(name: str, kind: str, example: str, iso: str) -> PropertyDescriptor:
    extra = (" Without one, numbers are read as milliseconds since the epoch, and the JSON writer writes epoch "
             "milliseconds (see its Timestamp Representation).") if kind == "Timestamp" else ""
    return PropertyDescriptor(
        name, description=f"Specifies the format to use when reading/writing {kind} fields, as a Java "
        f"DateTimeFormatter pattern (for example {example}). If not specified, {kind} values are read and written "
        f"in ISO form ({iso}).{extra}", validators=[_pattern_validator])


DATE_FORMAT = _format_property("Date Format", "Date", "MM/dd/yyyy", "yyyy-MM-dd")
TIME_FORMAT = _format_property("Time Format", "Time", "HH:mm:ss", "HH:mm:ss")
TIMESTAMP_FORMAT = _format_property("Timestamp Format", "Timestamp", "MM/dd/yyyy HH:mm:ss", "yyyy-MM-dd HH:mm:ss")


@dataclass(frozen=True)
class TemporalFormats:
    """The configured Date, Time and Timestamp Formats (Java patterns; None when unset)."""

    date: str | None = None
    time: str | None = None
    timestamp: str | None = None

    @classmethod
    def from_context(cls, context: ConfigurationContext) -> TemporalFormats:
        """The formats a service is configured with."""
        return cls(context.property(DATE_FORMAT).value or None, context.property(TIME_FORMAT).value or None,
                   context.property(TIMESTAMP_FORMAT).value or None)


# -- parsing text -----------------------------------------------------------------------------

_INTEGER = r"^[-+]?\d+$"
_DECIMAL = r"^[-+]?(\d+\.\d+|\.\d+)$"
_INT32 = (-(2 ** 31), 2 ** 31 - 1)


def _parse_pattern(strings: pa.Array, pattern: JavaPattern, unit: str) -> pa.Array:
    """Parse with a pattern; values that do not match become null."""
    if not pattern.fraction:
        return pc.strptime(strings, format=pattern.strftime, unit=unit, error_is_null=True)
    parts = pc.extract_regex(strings, r"^(?P<head>.*)\.(?P<frac>\d{1,9})$")
    digits = pc.utf8_slice_codeunits(pc.binary_join_element_wise(pc.struct_field(parts, "frac"), "000000", ""), 0, 6)
    fraction = pc.cast(pc.cast(digits, pa.int64()), pa.duration("us"))
    parsed = pc.strptime(pc.struct_field(parts, "head"), format=pattern.strftime, unit="us", error_is_null=True)
    return pc.add(parsed, fraction)


def _temporal(strings: pa.Array, target: pa.DataType, formats: TemporalFormats) -> pa.Array:
    """Strings to a date, time or timestamp; values that do not parse become null."""
    if pa.types.is_date(target):
        if formats.date:
            return pc.cast(_parse_pattern(strings, java_pattern(formats.date), "s"), pa.date32()).cast(target)
        return _iso(strings, pa.date32()).cast(target)
    if pa.types.is_time(target):
        pattern = java_pattern(formats.time) if formats.time else JavaPattern("%H:%M:%S", 3)
        if not formats.time:  # HH:mm:ss with optional fraction
            plain = pc.strptime(strings, format="%H:%M:%S", unit="ms", error_is_null=True)
            parsed = pc.coalesce(plain, _parse_pattern(strings, pattern, "ms"))
        else:
            parsed = _parse_pattern(strings, pattern, "ms")
        return pc.cast(pc.cast(parsed, pa.timestamp("us")), pa.time64("us")).cast(target)
    unit, tz = target.unit, target.tz
    if formats.timestamp:
        parsed = _parse_pattern(strings, java_pattern(formats.timestamp), unit)
    else:
        parsed = _iso(strings, pa.timestamp(unit))
        numbers = pc.if_else(pc.match_substring_regex(strings, _INTEGER), strings, None)
        epoch = pc.cast(pc.cast(pc.cast(numbers, pa.int64()), pa.timestamp("ms")), pa.timestamp(unit), safe=False)
        parsed = pc.coalesce(parsed, epoch)
    if parsed.type.tz is None and tz is not None:
        parsed = pc.cast(pc.cast(parsed, pa.timestamp(parsed.type.unit)), pa.timestamp(parsed.type.unit, tz="UTC"))
    return pc.cast(parsed, target, safe=False)


def _iso(strings: pa.Array, target: pa.DataType) -> pa.Array:
    """ISO strings to ``target`` (timestamps with or without a zone offset); values that do not
    parse become null. Column by column when Arrow can, value by value when the column mixes forms."""
    candidates = [target]
    if pa.types.is_timestamp(target):
        candidates.append(pa.timestamp(target.unit, "UTC"))  # strings with an offset: their UTC time
    for candidate in candidates:
        try:
            return pc.cast(pc.cast(strings, candidate), target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    values = []
    for value in strings.to_pylist():
        parsed = None
        for candidate in candidates if value is not None else ():
            try:
                parsed = pc.cast(pc.cast(pa.array([value]), candidate), target)[0].as_py()
                break
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue
        values.append(parsed)
    return pa.array(values, target)


def _matches_all(strings: pa.Array, parsed: pa.Array) -> bool:
    return parsed.null_count == strings.null_count


def infer_text_type(strings: pa.Array, formats: TemporalFormats = TemporalFormats()) -> pa.DataType:
    """The type NiFi would infer for a column of text values (nulls and empty values ignored)."""
    values = pc.drop_null(pc.if_else(pc.equal(strings, ""), None, strings)) if len(strings) else strings
    if len(values) == 0:
        return pa.string()
    integer = pc.match_substring_regex(values, _INTEGER)
    if pc.all(integer).as_py():
        try:
            numbers = pc.cast(values, pa.int64())
        except pa.ArrowInvalid:
            return pa.string()  # beyond a long: NiFi keeps such values as text
        bounds = pc.min_max(numbers)
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        return pa.int32() if _INT32[0] <= low and high <= _INT32[1] else pa.int64()
    if pc.all(pc.or_(integer, pc.match_substring_regex(values, _DECIMAL))).as_py():
        return pa.float64()
    if pc.all(pc.is_in(pc.utf8_lower(values), pa.array(["true", "false"]))).as_py():
        return pa.bool_()
    for fmt, target in ((formats.timestamp, pa.timestamp("ms")), (formats.date, pa.date32()),
                        (formats.time, pa.time32("ms"))):
        if fmt and _matches_all(values, _temporal(values, target, formats)):
            return target
    return pa.string()


def infer_text_types(strings: pa.Array, segments: np.ndarray, count: int,
                     formats: TemporalFormats = TemporalFormats()) -> list[pa.DataType]:
    """``infer_text_type`` for each of ``count`` parts of one column: ``segments`` (one int per
    value, ascending) says which part each value belongs to. The same answers as inferring each
    part alone, with one pass of each kernel over the whole column (many small CSV contents read
    as one table)."""
    considered = pc.and_kleene(strings.is_valid(), pc.not_equal(strings, ""))
    ignored = pc.invert(considered)
    # every part has values, none null or empty: a kind all values have (or none has) is every part's
    everywhere = not pc.any(ignored).as_py() and bool(np.all(np.bincount(segments, minlength=count) > 0))
    integer = pc.match_substring_regex(strings, _INTEGER)
    # a value counts against a kind only when it is considered (not null, not empty); a kind
    # every value of the column has needs no look at the kinds after it
    flags = {"int": pc.or_kleene(ignored, integer)}
    temporal = [(fmt, target) for fmt, target in ((formats.timestamp, pa.timestamp("ms")),
                                                   (formats.date, pa.date32()), (formats.time, pa.time32("ms"))) if fmt]
    if pc.all(flags["int"]).as_py():
        if everywhere:
            try:
                bounds = pc.min_max(pc.cast(strings, pa.int64()))
            except pa.ArrowInvalid:
                bounds = None
            if bounds is not None and _INT32[0] <= bounds["min"].as_py() and bounds["max"].as_py() <= _INT32[1]:
                return [pa.int32()] * count
    else:
        some_integer = pc.any(integer).as_py()
        flags["number"] = pc.or_kleene(ignored, pc.or_(integer, pc.match_substring_regex(strings, _DECIMAL)))
        if pc.all(flags["number"]).as_py():
            if everywhere and not some_integer:
                return [pa.float64()] * count
        else:
            flags["bool"] = pc.or_kleene(ignored, pc.is_in(pc.utf8_lower(strings), pa.array(["true", "false"])))
            for position, (_, target) in enumerate(temporal):
                flags[f"temporal{position}"] = pc.or_kleene(ignored, _temporal(strings, target, formats).is_valid())
            if everywhere and not some_integer and not any(pc.any(pc.and_(considered, flags[name])).as_py()
                                                           for name in flags if name != "int"):
                return [pa.string()] * count
    table = pa.table({"segment": segments, "any": considered, **flags})
    aggregates = [("any", "any")] + [(name, "all") for name in flags]
    bounded = False
    try:
        numbers = pc.cast(pc.if_else(pc.and_(considered, integer), strings, None), pa.int64())
    except pa.ArrowInvalid:  # a value beyond a long: such parts are inferred one by one
        pass
    else:
        table = table.append_column("number_value", numbers)
        aggregates += [("number_value", "min"), ("number_value", "max")]
        bounded = True
    grouped = table.group_by("segment", use_threads=False).aggregate(aggregates).to_pydict()
    types: list[pa.DataType] = [pa.string()] * count
    for row, segment in enumerate(grouped["segment"]):
        if not grouped["any_any"][row]:
            continue
        if grouped["int_all"][row]:
            if not bounded:
                part = pc.filter(strings, pa.array(segments == segment))
                types[segment] = infer_text_type(part, formats)
                continue
            low, high = grouped["number_value_min"][row], grouped["number_value_max"][row]
            types[segment] = pa.int32() if _INT32[0] <= low and high <= _INT32[1] else pa.int64()
        elif grouped["number_all"][row]:
            types[segment] = pa.float64()
        elif grouped["bool_all"][row]:
            types[segment] = pa.bool_()
        else:
            for position, (_, target) in enumerate(temporal):
                if grouped[f"temporal{position}_all"][row]:
                    types[segment] = target
                    break
    return types


_WIDTH = [pa.int32(), pa.int64(), pa.float64()]


def merge_types(first: pa.DataType | None, second: pa.DataType | None) -> pa.DataType | None:
    """The type of a field seen as ``first`` in some records and ``second`` in others."""
    if first is None or pa.types.is_null(first):
        return second
    if second is None or pa.types.is_null(second) or first == second:
        return first
    if first in _WIDTH and second in _WIDTH:
        return max(first, second, key=_WIDTH.index)
    if pa.types.is_struct(first) and pa.types.is_struct(second):
        fields = {f.name: f.type for f in first}
        for field in second:
            fields[field.name] = merge_types(fields.get(field.name), field.type)
        return pa.struct([pa.field(name, t if t is not None else pa.null()) for name, t in fields.items()])
    if pa.types.is_list(first) and pa.types.is_list(second):
        return pa.list_(merge_types(first.value_type, second.value_type) or pa.null())
    return pa.string()


# -- converting to a schema's types -----------------------------------------------------------

def _first_failure(source: pa.Array, converted: pa.Array) -> int:
    """The row of the first value that became null in conversion (assumes there is one)."""
    lost = pc.and_(source.is_valid(), converted.is_null())
    return pc.index(lost, True).as_py()


def convert_column(column: pa.Array, target: pa.DataType, formats: TemporalFormats = TemporalFormats()) -> pa.Array:
    """``column`` as ``target`` values; raises ConversionError for a value that does not convert.
    Empty strings become null for every type but string."""
    if column.type == target:
        return column
    if pa.types.is_null(column.type):
        return pa.nulls(len(column), target)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        return _from_text(column, target, formats)
    if pa.types.is_string(target):
        return format_column(column, formats)
    try:
        return pc.cast(column, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as error:
        return _cast_each(column, target, str(error))


def _cast_each(column: pa.Array, target: pa.DataType, reason: str, explain: bool = True) -> pa.Array:
    """Find the value a cast refuses (the error path only: one value at a time)."""
    for index, value in enumerate(column):
        try:
            pc.cast(pa.array([value.as_py()], column.type), target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as error:
            raise ConversionError(index, value.as_py(), target,
                                  str(error).split("\n")[0] if explain else "") from None
    raise ConversionError(0, None, target, reason)


def _from_text(strings: pa.Array, target: pa.DataType, formats: TemporalFormats) -> pa.Array:
    if pa.types.is_string(target):
        return strings.cast(target)
    text = pc.if_else(pc.equal(strings, ""), None, strings)
    if pa.types.is_boolean(target):
        lowered = pc.utf8_lower(text)
        converted = pc.if_else(pc.equal(lowered, "true"), True, pc.if_else(pc.equal(lowered, "false"), False, None))
    elif pa.types.is_date(target) or pa.types.is_time(target) or pa.types.is_timestamp(target):
        converted = _temporal(text, target, formats)
    elif pa.types.is_binary(target) or pa.types.is_large_binary(target):
        return text.cast(target)
    else:
        try:
            return pc.cast(text, target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return _cast_each(text, target, "", explain=False)
    if converted.null_count != text.null_count:
        index = _first_failure(text, converted)
        raise ConversionError(index, text[index].as_py(), target)
    return converted


# -- formatting for text writers --------------------------------------------------------------

def _strftime(values: pa.Array, pattern: str) -> pa.Array:
    """Dates or timestamps as text in a Java pattern (Arrow prints the fraction after %S by unit)."""
    translated = java_pattern(pattern)
    timestamps = values if pa.types.is_timestamp(values.type) else pc.cast(values, pa.timestamp("s"))
    unit, digits = ("s", 0) if not translated.fraction else ("ms", 3) if translated.fraction <= 3 else ("us", 6)
    text = pc.strftime(pc.cast(timestamps, pa.timestamp(unit, timestamps.type.tz), safe=False),
                       format=translated.strftime)
    if translated.fraction and translated.fraction != digits:
        text = pc.utf8_slice_codeunits(text, 0, -(digits - translated.fraction))
    return text


def format_column(column: pa.Array, formats: TemporalFormats = TemporalFormats(), *,
                  epoch_timestamps: bool = False) -> pa.Array:
    """Values as text, as NiFi's text writers render them (nulls stay null): numbers as Java
    prints them (``2.0``), booleans ``true``/``false``, dates and times with the configured
    formats or in ISO form; with ``epoch_timestamps``, unformatted timestamps as epoch millis."""
    kind = column.type
    if pa.types.is_string(kind):
        return column
    if pa.types.is_large_string(kind):
        return column.cast(pa.string())
    if pa.types.is_floating(kind):
        text = pc.cast(column, pa.string())
        return pc.if_else(pc.match_substring_regex(text, r"^-?\d+$"), pc.binary_join_element_wise(text, ".0", ""), text)
    if pa.types.is_date(kind):
        return _strftime(column, formats.date) if formats.date else pc.cast(pc.cast(column, pa.date32()), pa.string())
    if pa.types.is_time(kind):
        if formats.time:
            day = pc.cast(pc.cast(column, pa.time64("us")), pa.int64())
            return _strftime(pc.cast(day, pa.timestamp("us")), formats.time)
        return pc.cast(pc.cast(column, pa.time32("s"), safe=False), pa.string())
    if pa.types.is_timestamp(kind):
        if formats.timestamp:
            return _strftime(column, formats.timestamp)
        if epoch_timestamps:
            return pc.cast(pc.cast(pc.cast(column, pa.timestamp("ms", kind.tz), safe=False), pa.int64()), pa.string())
        naive = pc.cast(column, pa.timestamp(kind.unit)) if kind.tz else column
        return pc.strftime(pc.cast(naive, pa.timestamp("s"), safe=False), format="%Y-%m-%d %H:%M:%S")
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind):
        return pc.cast(pc.cast(column, pa.binary()), pa.string(), safe=False)
    try:
        return pc.cast(column, pa.string())
    except pa.ArrowNotImplementedError:  # lists, maps, records: their JSON text
        return pa.array([None if value is None else orjson.dumps(value, default=str).decode()
                         for value in column.to_pylist()], pa.string())


# -- whole records ----------------------------------------------------------------------------

def unsliced(column: pa.Array) -> pa.Array:
    """``column`` with offset 0 (Arrow rebuilds nested arrays with a null mask only from those)."""
    return pa.concat_arrays([column]) if column.offset and pa.types.is_nested(column.type) else column


def conform_array(column: pa.Array, target: pa.DataType, formats: TemporalFormats = TemporalFormats()) -> pa.Array:
    """``column`` as ``target``, records and lists field by field (their missing fields null);
    raises ConversionError."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.type == target:
        return column
    column = unsliced(column)
    mask = column.is_null() if column.null_count else None
    if pa.types.is_struct(target) and pa.types.is_struct(column.type):
        names = {column.type.field(i).name: i for i in range(column.type.num_fields)}
        children = [conform_array(column.field(names[f.name]), f.type, formats) if f.name in names
                    else pa.nulls(len(column), f.type) for f in target]
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if pa.types.is_list(target) and (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
        column = column.cast(pa.list_(column.type.value_type)) if pa.types.is_large_list(column.type) else column
        values = conform_array(column.values, target.value_type, formats)
        return pa.ListArray.from_arrays(column.offsets, values, type=target, mask=mask)
    if pa.types.is_map(target) and pa.types.is_map(column.type):
        keys = conform_array(column.keys, target.key_type, formats)
        items = conform_array(column.items, target.item_type, formats)
        return pa.MapArray.from_arrays(column.offsets, keys, items, type=target, mask=mask)
    return convert_column(column, target, formats)


def conform_batch(batch: pa.RecordBatch | pa.Table, schema: pa.Schema,
                  formats: TemporalFormats = TemporalFormats()) -> pa.RecordBatch:
    """``batch``'s columns, by name, as ``schema``'s fields (absent ones null, others dropped).
    Raises ConversionError with the column's name in ``field``."""
    if isinstance(batch, pa.Table):
        batch = batch.combine_chunks().to_batches()[0] if batch.num_rows else pa.RecordBatch.from_pylist([], batch.schema)
    if batch.schema.equals(schema):
        return batch
    names = {name: i for i, name in enumerate(batch.schema.names)}
    columns = []
    for field in schema:
        if field.name not in names:
            columns.append(pa.nulls(batch.num_rows, field.type))
            continue
        try:
            columns.append(conform_array(batch.column(names[field.name]), field.type, formats))
        except ConversionError as error:
            error.field = field.name
            raise
    return pa.RecordBatch.from_arrays(columns, schema=schema)
