"""Record schemas: NiFi's record types written as Avro schemas, held as Arrow schemas.

NiFi describes a record's shape with an Avro schema (the ``Schema Text`` property, the
``avro.schema`` attribute, an Avro file's header); readers, writers and Spark all work on
Arrow. ``RecordSchema`` is both views of one schema. The type mapping:

==================================  ==========================================
Avro (NiFi record type)             Arrow
==================================  ==========================================
null                                null
boolean (BOOLEAN)                   bool
int (INT)                           int32
long (LONG)                         int64
float (FLOAT)                       float32
double (DOUBLE)                     float64
bytes, fixed (ARRAY of BYTE)        binary, fixed_size_binary
string, enum, uuid (STRING, ENUM,   string (the enum's symbols and the logical
UUID)                               type are kept in the field's metadata)
int/date (DATE)                     date32
int/time-millis (TIME)              time32[ms]
long/time-micros                    time64[us]
long/timestamp-millis (TIMESTAMP)   timestamp[ms, UTC]
long/timestamp-micros               timestamp[us, UTC]
long/local-timestamp-millis         timestamp[ms]
bytes|fixed/decimal (DECIMAL)       decimal128(precision, scale); decimal256
                                    above precision 38
array (ARRAY)                       list
map (MAP)                           map<string, value>
record (RECORD)                     struct
["null", T]                         T, nullable
[T1, T2, ...] (CHOICE)              the widest numeric type when all are numbers,
                                    string otherwise (Arrow unions do not reach
                                    Spark); the Avro text keeps the union
==================================  ==========================================

A field is nullable in Arrow when its Avro type accepts null; fields of Arrow data (inferred,
or a query's result) become ``["null", T]``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pyarrow as pa

__all__ = ["RecordSchema", "SchemaError", "avro_to_arrow", "arrow_to_avro"]

_AVRO_META = b"avro.type"  # field metadata: the Avro type the Arrow field came from (JSON)


class SchemaError(ValueError):
    """A schema text that is not a usable Avro record schema, or a type Flowsite cannot map."""


@dataclass(frozen=True, eq=False)
class RecordSchema:
    """One record schema, as Avro (``avro``, a parsed JSON value) and as Arrow (``arrow``)."""

    arrow: pa.Schema
    avro: dict[str, Any]

    @classmethod
    def from_avro(cls, schema: str | dict[str, Any]) -> RecordSchema:
        """Parse an Avro record schema (its JSON text or parsed value); raises SchemaError."""
        if isinstance(schema, str):
            try:
                parsed = json.loads(schema)
            except json.JSONDecodeError as error:
                raise SchemaError(f"the schema is not valid JSON: {error.msg} at character {error.pos}") from None
        else:
            parsed = schema
        if not isinstance(parsed, dict) or parsed.get("type") != "record":
            raise SchemaError('a record schema must be a JSON object with "type": "record"')
        arrow_type = avro_to_arrow(parsed)
        return cls(pa.schema(list(arrow_type)), parsed)

    @classmethod
    def from_arrow(cls, schema: pa.Schema, name: str = "nifiRecord") -> RecordSchema:
        """The schema of Arrow data (inferred by a reader, or the result of a query)."""
        seen = {name}
        fields = [_avro_field(field, name, seen) for field in schema]
        return cls(schema, {"type": "record", "name": name, "fields": fields})

    @cached_property
    def avro_text(self) -> str:
        """The Avro schema as compact JSON text (the ``avro.schema`` attribute's value)."""
        return json.dumps(self.avro, separators=(",", ":"))

    @property
    def field_names(self) -> list[str]:
        """The top-level field names, in order."""
        return list(self.arrow.names)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordSchema) and self.arrow.equals(other.arrow)

    def __hash__(self) -> int:
        return hash(tuple(self.arrow.names))


# -- Avro -> Arrow ----------------------------------------------------------------------------

_PRIMITIVES: dict[str, pa.DataType] = {
    "null": pa.null(), "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
    "double": pa.float64(), "bytes": pa.binary(), "string": pa.string(),
}
_LOGICAL: dict[tuple[str, str], pa.DataType] = {
    ("int", "date"): pa.date32(), ("int", "time-millis"): pa.time32("ms"), ("long", "time-micros"): pa.time64("us"),
    ("long", "timestamp-millis"): pa.timestamp("ms", tz="UTC"), ("long", "timestamp-micros"): pa.timestamp("us", tz="UTC"),
    ("long", "local-timestamp-millis"): pa.timestamp("ms"), ("long", "local-timestamp-micros"): pa.timestamp("us"),
    ("string", "uuid"): pa.string(),
}
_NUMERIC_ORDER = [pa.int32(), pa.int64(), pa.float32(), pa.float64()]


def avro_to_arrow(schema: Any, named: dict[str, pa.DataType] | None = None) -> pa.DataType:
    """The Arrow type of an Avro type (a record becomes a struct); raises SchemaError."""
    named = {} if named is None else named
    if isinstance(schema, str):
        if schema in _PRIMITIVES:
            return _PRIMITIVES[schema]
        if schema in named:
            return named[schema]
        raise SchemaError(f"unknown Avro type {schema!r}")
    if isinstance(schema, list):
        return _union(schema, named)
    if not isinstance(schema, dict) or "type" not in schema:
        raise SchemaError(f"not an Avro type: {schema!r}")
    kind = schema["type"]
    logical = schema.get("logicalType")
    if logical == "decimal":
        return _decimal(schema)
    if isinstance(kind, str) and (kind, logical) in _LOGICAL:
        return _LOGICAL[(kind, logical)]
    if kind == "record":
        fields = schema.get("fields")
        if not isinstance(fields, list):
            raise SchemaError(f"record {schema.get('name')!r} has no list of fields")
        arrow_fields = []
        for field in fields:
            if not isinstance(field, dict) or not isinstance(field.get("name"), str):
                raise SchemaError(f"record {schema.get('name')!r} has a field without a name: {field!r}")
            avro_type = field.get("type")
            arrow_fields.append(pa.field(field["name"], avro_to_arrow(avro_type, named), nullable=_accepts_null(avro_type),
                                         metadata=_field_metadata(avro_type)))
        struct = pa.struct(arrow_fields)
        if isinstance(schema.get("name"), str):
            named[schema["name"]] = struct
        return struct
    if kind == "enum":
        return _remember(schema, pa.string(), named)
    if kind == "fixed":
        return _remember(schema, pa.binary(int(schema.get("size", 0))), named)
    if kind == "array":
        return pa.list_(avro_to_arrow(schema.get("items"), named))
    if kind == "map":
        return pa.map_(pa.string(), avro_to_arrow(schema.get("values"), named))
    return avro_to_arrow(kind, named)


def _decimal(schema: dict[str, Any]) -> pa.DataType:
    """decimal128 up to precision 38 (what Spark holds), decimal256 up to 76; SchemaError beyond."""
    try:
        precision, scale = int(schema.get("precision", 38)), int(schema.get("scale", 0))
        return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    except (TypeError, ValueError) as error:
        raise SchemaError(f"decimal {schema!r} has no usable precision and scale: {error}") from None


def _accepts_null(avro_type: Any) -> bool:
    return avro_type == "null" or (isinstance(avro_type, list) and "null" in avro_type)


def _remember(schema: dict[str, Any], arrow_type: pa.DataType, named: dict[str, pa.DataType]) -> pa.DataType:
    if isinstance(schema.get("name"), str):
        named[schema["name"]] = arrow_type
    return arrow_type


def _union(branches: list[Any], named: dict[str, pa.DataType]) -> pa.DataType:
    types = [avro_to_arrow(branch, named) for branch in branches if branch != "null"]
    if not types:
        return pa.null()
    if len(types) == 1:
        return types[0]
    if all(t in _NUMERIC_ORDER for t in types):
        return max(types, key=_NUMERIC_ORDER.index)
    return pa.string()


def _field_metadata(avro_type: Any) -> dict[bytes, bytes] | None:
    """Keep the Avro type of fields Arrow cannot say all of (enums, uuids, unions, fixed)."""
    plain = avro_type[1] if isinstance(avro_type, list) and len(avro_type) == 2 and avro_type[0] == "null" else avro_type
    if isinstance(plain, list) or (isinstance(plain, dict) and (plain.get("type") in ("enum", "fixed")
                                                                or plain.get("logicalType") == "uuid")):
        return {_AVRO_META: json.dumps(avro_type).encode()}
    return None


# -- Arrow -> Avro ----------------------------------------------------------------------------

def arrow_to_avro(arrow_type: pa.DataType, name: str = "nifiRecord", seen: set[str] | None = None) -> Any:
    """The Avro type of an Arrow type (not nullable; ``_avro_field`` adds the null branch)."""
    seen = set() if seen is None else seen
    t = pa.types
    if t.is_null(arrow_type):
        return "null"
    if t.is_boolean(arrow_type):
        return "boolean"
    if t.is_int8(arrow_type) or t.is_int16(arrow_type) or t.is_int32(arrow_type) or t.is_uint8(arrow_type) \
            or t.is_uint16(arrow_type):
        return "int"
    if t.is_integer(arrow_type):
        return "long"
    if t.is_float16(arrow_type) or t.is_float32(arrow_type):
        return "float"
    if t.is_float64(arrow_type):
        return "double"
    if t.is_string(arrow_type) or t.is_large_string(arrow_type) or t.is_dictionary(arrow_type):
        return "string"
    if t.is_fixed_size_binary(arrow_type):
        return {"type": "fixed", "name": _unique(f"{name}_fixed", seen), "size": arrow_type.byte_width}
    if t.is_binary(arrow_type) or t.is_large_binary(arrow_type):
        return "bytes"
    if t.is_decimal(arrow_type):
        return {"type": "bytes", "logicalType": "decimal", "precision": arrow_type.precision, "scale": arrow_type.scale}
    if t.is_date(arrow_type):
        return {"type": "int", "logicalType": "date"}
    if t.is_time32(arrow_type):
        return {"type": "int", "logicalType": "time-millis"}
    if t.is_time64(arrow_type):
        return {"type": "long", "logicalType": "time-micros"}
    if t.is_timestamp(arrow_type):
        precision = "millis" if arrow_type.unit in ("s", "ms") else "micros"
        prefix = "timestamp" if arrow_type.tz else "local-timestamp"
        return {"type": "long", "logicalType": f"{prefix}-{precision}"}
    if t.is_list(arrow_type) or t.is_large_list(arrow_type) or t.is_fixed_size_list(arrow_type):
        return {"type": "array", "items": _nullable(arrow_to_avro(arrow_type.value_type, f"{name}_item", seen))}
    if t.is_map(arrow_type):
        return {"type": "map", "values": _nullable(arrow_to_avro(arrow_type.item_type, f"{name}_value", seen))}
    if t.is_struct(arrow_type):
        record_name = _unique(name, seen)
        return {"type": "record", "name": record_name,
                "fields": [_avro_field(arrow_type.field(i), record_name, seen) for i in range(arrow_type.num_fields)]}
    raise SchemaError(f"Arrow type {arrow_type} has no record type")


def _avro_field(field: pa.Field, parent: str = "nifiRecord", seen: set[str] | None = None) -> dict[str, Any]:
    kept = (field.metadata or {}).get(_AVRO_META)
    if kept is not None:
        return {"name": field.name, "type": json.loads(kept)}
    avro_type = arrow_to_avro(field.type, f"{field.name}Type" if pa.types.is_struct(field.type) else field.name, seen)
    return {"name": field.name, "type": _nullable(avro_type) if field.nullable else avro_type}


def _nullable(avro_type: Any) -> Any:
    if _accepts_null(avro_type):
        return avro_type
    return ["null", avro_type]


def _unique(name: str, seen: set[str]) -> str:
    candidate, number = name, 1
    while candidate in seen:
        number += 1
        candidate = f"{name}{number}"
    seen.add(candidate)
    return candidate
