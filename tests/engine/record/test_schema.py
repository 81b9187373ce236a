"""RecordSchema: NiFi's record types as Avro schemas, held as Arrow schemas."""

import json

import pyarrow as pa
import pytest

from engine.record.schema import RecordSchema, SchemaError

EVERY_TYPE = {
    "type": "record", "name": "everything", "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": ["null", "long"]},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "raw", "type": "bytes"},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "colour", "type": {"type": "enum", "name": "Colour", "symbols": ["RED", "GREEN"]}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "scores", "type": {"type": "map", "values": "double"}},
        {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
            {"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "string"]}]}},
        {"name": "home", "type": ["null", "Address"]},
        {"name": "number", "type": ["int", "double"]},
        {"name": "either", "type": ["null", "int", "string"]},
    ]}


def test_every_nifi_type_maps_to_its_arrow_type():
    schema = RecordSchema.from_avro(json.dumps(EVERY_TYPE))
    types = {field.name: field.type for field in schema.arrow}
    assert types == {
        "b": pa.bool_(), "i": pa.int32(), "l": pa.int64(), "f": pa.float32(), "d": pa.float64(), "s": pa.string(),
        "raw": pa.binary(), "day": pa.date32(), "clock": pa.time32("ms"), "at": pa.timestamp("ms", tz="UTC"),
        "at_us": pa.timestamp("us", tz="UTC"), "price": pa.decimal128(10, 2), "id": pa.string(),
        "colour": pa.string(), "tags": pa.list_(pa.string()), "scores": pa.map_(pa.string(), pa.float64()),
        "address": pa.struct([pa.field("city", pa.string(), nullable=False), pa.field("zip", pa.string())]),
        "home": pa.struct([pa.field("city", pa.string(), nullable=False), pa.field("zip", pa.string())]),
        "number": pa.float64(), "either": pa.string(),
    }
    assert [f.name for f in schema.arrow if f.nullable] == ["l", "home", "either"]
    assert schema.field_names[:3] == ["b", "i", "l"]


def test_the_avro_view_keeps_what_arrow_cannot_say():
    schema = RecordSchema.from_avro(EVERY_TYPE)
    again = RecordSchema.from_arrow(schema.arrow, name="everything")
    fields = {field["name"]: field["type"] for field in again.avro["fields"]}
    assert fields["colour"] == {"type": "enum", "name": "Colour", "symbols": ["RED", "GREEN"]}
    assert fields["id"] == {"type": "string", "logicalType": "uuid"}
    assert fields["either"] == ["null", "int", "string"]
    assert fields["i"] == "int" and fields["l"] == ["null", "long"]
    assert fields["price"] == {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}
    assert fields["at"] == {"type": "long", "logicalType": "timestamp-millis"}
    assert RecordSchema.from_avro(again.avro_text) == again


def test_a_schema_inferred_from_arrow_data_accepts_null_everywhere():
    table = pa.table({"n": [1, None], "name": ["a", "b"], "when": pa.array([0, 1], pa.timestamp("us"))})
    schema = RecordSchema.from_arrow(table.schema)
    assert schema.avro["fields"] == [
        {"name": "n", "type": ["null", "long"]},
        {"name": "name", "type": ["null", "string"]},
        {"name": "when", "type": ["null", {"type": "long", "logicalType": "local-timestamp-micros"}]},
    ]
    assert RecordSchema.from_avro(schema.avro_text).arrow.equals(table.schema)


def test_nested_records_get_unique_names_in_avro():
    struct = pa.struct([pa.field("inner", pa.struct([pa.field("x", pa.int64())]))])
    schema = RecordSchema.from_arrow(pa.schema([pa.field("a", struct), pa.field("b", struct)]))
    names = []

    def collect(avro):
        if isinstance(avro, dict):
            if avro.get("type") == "record":
                names.append(avro["name"])
            for value in avro.values():
                collect(value)
        elif isinstance(avro, list):
            for value in avro:
                collect(value)
    collect(schema.avro)
    assert len(names) == len(set(names)) == 5
    RecordSchema.from_avro(schema.avro_text)


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ('{"type": "enum", "name": "E", "symbols": []}', '"type": "record"'),
    ('{"type": "record", "name": "r"}', "has no list of fields"),
    ('{"type": "record", "name": "r", "fields": [{"type": "int"}]}', "field without a name"),
    ('{"type": "record", "name": "r", "fields": [{"name": "a", "type": "Missing"}]}', "unknown Avro type 'Missing'"),
])
def test_an_unusable_schema_text_says_why(text, message):
    with pytest.raises(SchemaError, match=message):
        RecordSchema.from_avro(text)
