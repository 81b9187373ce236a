"""JsonTreeReader and JsonRecordSetWriter: NiFi's properties and defaults, the JSON shapes,
inference, explicit schemas, the writer's options, malformed content and streaming."""

from __future__ import annotations

import bz2
import datetime
import decimal
import gzip
import lzma
import io
import json

import pyarrow as pa
import pytest

from engine.components import default_registry
from engine.record.api import BATCH_RECORDS, MalformedRecordError
from engine.record.schema import RecordSchema
from engine.services.record_json import JsonRecordSetWriter, JsonTreeReader
from tests.engine.services.streaming import copy_peak_growth, copy_through_repository

TEXT = {"Schema Access Strategy": "schema-text-property"}
ORDER = {"type": "record", "name": "order", "fields": [
    {"name": "id", "type": "long"}, {"name": "customer", "type": ["null", "string"]},
    {"name": "total", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}]},
    {"name": "placed", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]},
    {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}]},
    {"name": "items", "type": ["null", {"type": "array", "items": {"type": "record", "name": "item", "fields": [
        {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}]},
    {"name": "tags", "type": ["null", {"type": "map", "values": "string"}]}]}


def read(reader, data: bytes, attributes=None):
    """(schema, records) read from ``data``."""
    with reader.create_reader(io.BytesIO(data), attributes or {}) as records:
        return records.schema, records.read_all().to_pylist()


def write(writer, schema: RecordSchema, *tables, attributes=None):
    """(bytes, WriteResult) of writing ``tables`` with ``schema``."""
    out = io.BytesIO()
    records = writer.create_writer(out, writer.get_schema(attributes or {}, schema), attributes or {})
    for table in tables:
        records.write_batch(table)
    result = records.finish()
    return out.getvalue(), result


def types(schema: RecordSchema) -> dict[str, str]:
    return {field.name: str(field.type) for field in schema.arrow}


# -- NiFi's names and defaults ----------------------------------------------------------------

def test_nifi_types_properties_and_defaults():
    registry = default_registry()
    assert registry.service("org.apache.nifi.json.JsonTreeReader") is JsonTreeReader
    assert registry.service("org.apache.nifi.json.JsonRecordSetWriter") is JsonRecordSetWriter
    reader = {p.name: p for p in JsonTreeReader.properties}
    assert list(reader) == ["Schema Access Strategy", "Schema Text", "Starting Field Strategy", "Starting Field Name",
                            "Schema Application Strategy", "Max String Length", "Parsing Strategy", "Date Format",
                            "Time Format", "Timestamp Format"]
    assert reader["Schema Access Strategy"].default == "infer-schema"
    assert [(v.value, v.display_name) for v in reader["Schema Access Strategy"].allowed_values] == [
        ("infer-schema", "Infer Schema"), ("schema-text-property", "Use 'Schema Text' Property")]
    assert [(v.value, v.display_name) for v in reader["Starting Field Strategy"].allowed_values] == [
        ("ROOT_NODE", "Root Node"), ("NESTED_FIELD", "Nested Field")]
    assert reader["Starting Field Strategy"].default == "ROOT_NODE"
    writer = {p.name: p for p in JsonRecordSetWriter.properties}
    defaults = {name: p.default for name, p in writer.items() if p.default is not None}
    assert defaults == {
        "Schema Write Strategy": "no-schema", "Schema Access Strategy": "inherit-record-schema",
        "Schema Text": "${avro.schema}", "Pretty Print JSON": "false", "Suppress Null Values": "never-suppress",
        "Allow Scientific Notation": "false", "Output Grouping": "output-array", "Compression Format": "none",
        "Compression Level": "1", "Serialized JSON Input Handling": "ENABLED", "Timestamp Representation": "AUTO"}
    assert [(v.value, v.display_name) for v in writer["Output Grouping"].allowed_values] == [
        ("output-array", "Array"), ("output-oneline", "One Line Per Object")]
    assert [v.value for v in writer["Suppress Null Values"].allowed_values] == [
        "never-suppress", "always-suppress", "suppress-missing"]


def test_nifi_1_property_names_are_migrated():
    assert JsonTreeReader.migrate_properties({"starting-field-strategy": "NESTED_FIELD", "starting-field-name": "rows",
                                             "schema-access-strategy": "infer-schema"}) == {
        "Starting Field Strategy": "NESTED_FIELD", "Starting Field Name": "rows",
        "Schema Access Strategy": "infer-schema"}
    assert JsonRecordSetWriter.migrate_properties({"output-grouping": "output-oneline", "suppress-nulls":
                                                  "always-suppress"}) == {
        "Output Grouping": "output-oneline", "Suppress Null Values": "always-suppress"}


def test_validation(services):
    assert services.problems(JsonTreeReader, {}) == []
    assert services.problems(JsonTreeReader, {"Starting Field Strategy": "NESTED_FIELD"}) == [
        "'Starting Field Name' is required when 'Starting Field Strategy' is 'Nested Field'"]
    assert services.problems(JsonRecordSetWriter, {"Pretty Print JSON": "true", "Output Grouping": "output-oneline"}) \
        == ["'Pretty Print JSON' must be false when 'Output Grouping' is set to 'One Line Per Object'"]
    assert services.problems(JsonRecordSetWriter, {"Timestamp Representation": "FORMATTED_STRING"}) == [
        "'Timestamp Format' must be configured when 'Timestamp Representation' is set to 'Formatted String'"]
    assert services.problems(JsonRecordSetWriter, {"Compression Format": "zstd"})[0].startswith(
        "'Compression Format' is 'zstd', which is not one of the allowed values")


# -- reading ----------------------------------------------------------------------------------

@pytest.mark.parametrize("data", [
    b'[{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]',
    b'\xef\xbb\xbf  [\n  {"a": 1, "b": "x"},\n  {"a": 2, "b": "y"}\n]\n',
    b'{"a": 1, "b": "x"}\n{"a": 2, "b": "y"}\n',
    b'{"a": 1, "b": "x"}{"a": 2, "b": "y"}',
    b'{\n  "a": 1,\n  "b": "x"\n}\n{\n  "a": 2,\n  "b": "y"\n}',
], ids=["array", "pretty-array-with-bom", "json-lines", "concatenated", "pretty-objects"])
def test_the_json_shapes_nifi_accepts(services, data):
    reader = services.enable("reader", JsonTreeReader, {})
    assert read(reader, data)[1] == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]


def test_one_object_and_empty_content(services):
    reader = services.enable("reader", JsonTreeReader, {})
    assert read(reader, b'{"a": {"b": [1, 2]}}')[1] == [{"a": {"b": [1, 2]}}]
    assert read(reader, b"") == (RecordSchema.from_arrow(pa.schema([])), [])
    assert read(reader, b"[]")[1] == []


def test_inferred_types(services):
    reader = services.enable("reader", JsonTreeReader, {"Timestamp Format": "yyyy-MM-dd HH:mm:ss"})
    schema, rows = read(reader, json.dumps([
        {"i": 1, "l": 3_000_000_000, "d": 1.5, "b": True, "s": "x", "n": None, "mixed": 1, "nums": 1,
         "rec": {"x": 1}, "arr": [1, 2], "when": "2024-01-02 03:04:05"},
        {"i": 2, "l": 1, "d": 2, "b": False, "s": "y", "n": None, "mixed": "one", "nums": 2.5,
         "rec": {"y": "z"}, "arr": [], "when": None},
    ]).encode())
    assert types(schema) == {
        "i": "int32", "l": "int64", "d": "double", "b": "bool", "s": "string", "n": "string", "mixed": "string",
        "nums": "double", "rec": "struct<x: int32, y: string>", "arr": "list<item: int32>",
        "when": "timestamp[ms]"}
    assert rows[1]["mixed"] == "one" and rows[0]["mixed"] == "1" and rows[1]["rec"] == {"x": None, "y": "z"}
    assert rows[0]["when"] == datetime.datetime(2024, 1, 2, 3, 4, 5)
    assert schema.avro["fields"][9] == {"name": "arr", "type": ["null", {"type": "array", "items": ["null", "int"]}]}


def test_explicit_schema(services):
    reader = services.enable("reader", JsonTreeReader, {**TEXT, "Schema Text": json.dumps(ORDER),
                                                        "Date Format": "dd.MM.yyyy"})
    data = json.dumps([
        {"id": "7", "customer": 42, "total": 12.5, "placed": 1_700_000_000_000, "day": "02.01.2024",
         "items": [{"sku": "A", "qty": 2}], "tags": {"k": "v"}, "ignored": True},
        {"id": 8, "placed": "2024-01-02T03:04:05Z"}]).encode()
    schema, rows = read(reader, data)
    assert schema == RecordSchema.from_avro(ORDER)
    assert rows[0] == {"id": 7, "customer": "42", "total": decimal.Decimal("12.50"),
                       "placed": datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.UTC),
                       "day": datetime.date(2024, 1, 2), "items": [{"sku": "A", "qty": 2}], "tags": [("k", "v")]}
    assert rows[1] == {"id": 8, "customer": None, "total": None,
                       "placed": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC), "day": None,
                       "items": None, "tags": None}


def test_starting_field(services):
    nested = services.enable("nested", JsonTreeReader, {"Starting Field Strategy": "NESTED_FIELD",
                                                        "Starting Field Name": "rows"})
    document = b'{"meta": {"count": 2, "rows": "not this one"}, "data": {"rows": [{"a": 1}, {"a": 2}]}}'
    assert read(nested, b'{"meta": {"count": 2}, "data": {"rows": [{"a": 1}, {"a": 2}]}}')[1] == [{"a": 1}, {"a": 2}]
    assert read(nested, b'{"x": 1, "rows": {"a": 3}}')[1] == [{"a": 3}]
    assert read(nested, b'{"other": [{"a": 1}]}')[1] == []
    assert read(nested, document)[1] == []  # the first field called rows holds text: no records
    whole = services.enable("whole", JsonTreeReader, {
        **TEXT, "Starting Field Strategy": "NESTED_FIELD", "Starting Field Name": "rows",
        "Schema Application Strategy": "WHOLE_JSON", "Schema Text": json.dumps({
            "type": "record", "name": "doc", "fields": [{"name": "rows", "type": {"type": "array", "items": {
                "type": "record", "name": "row", "fields": [{"name": "a", "type": "long"}]}}}]})})
    schema, rows = read(whole, b'{"rows": [{"a": 1, "b": 2}]}')
    assert schema.field_names == ["a"] and rows == [{"a": 1}]


def test_json_lines_with_values_of_other_types_later_on(services):
    # pyarrow.json refuses the block where "code" is a number; reading goes on with ijson from there
    reader = services.enable("reader", JsonTreeReader, {**TEXT, "Schema Text": json.dumps({
        "type": "record", "name": "r", "fields": [{"name": "n", "type": "long"}, {"name": "code", "type": "string"}]})})
    lines = [json.dumps({"n": n, "code": n if n >= 30_000 else f"c{n}"}).encode() for n in range(40_000)]
    with reader.create_reader(io.BytesIO(b"\n".join(lines)), {}) as records:
        batches = list(records.batches())
    table = pa.Table.from_batches(batches)
    assert max(b.num_rows for b in batches) <= BATCH_RECORDS
    assert table["n"].to_pylist() == list(range(40_000))
    assert table["code"].to_pylist()[29_999:30_001] == ["c29999", "30000"]


def test_lenient_parsing_allows_comments(services):
    lenient = services.enable("lenient", JsonTreeReader, {"Parsing Strategy": "LENIENT"})
    assert read(lenient, b'// exported\n[{"a": 1} /* first */, {"a": 2}]')[1] == [{"a": 1}, {"a": 2}]
    strict = services.enable("strict", JsonTreeReader, {})
    with pytest.raises(MalformedRecordError):
        read(strict, b'// exported\n[{"a": 1}]')


# -- malformed content ------------------------------------------------------------------------

def test_a_truncated_array(services):
    reader = services.enable("reader", JsonTreeReader, {})
    with pytest.raises(MalformedRecordError, match=r"^JSON is malformed after record 2 \(28 bytes read\): "
                                                   r"parse error: premature EOF"):
        read(reader, b'[{"a": 1}, {"a": 2}, {"a": 3')


def test_records_that_are_not_objects_or_do_not_fit(services):
    reader = services.enable("reader", JsonTreeReader, {})
    with pytest.raises(MalformedRecordError, match=r"^record 2 is a JSON number, not an object$"):
        read(reader, b'[{"a": 1}, 5]')
    typed = services.enable("typed", JsonTreeReader, {**TEXT, "Schema Text": json.dumps(ORDER)})
    with pytest.raises(MalformedRecordError, match=r"^record 2, field 'id': value \"x\" does not convert to long$"):
        read(typed, b'[{"id": 1}, {"id": "x"}]')
    with pytest.raises(MalformedRecordError, match=r"^record 1, field 'day': value 'soon' does not convert to date$"):
        read(typed, b'{"id": 1, "day": "soon"}')
    with pytest.raises(MalformedRecordError, match=r"record 2, field 'id': value \"x\" does not convert to long"):
        read(typed, b'{"id": 1}\n{"id": "x"}\n')  # JSON lines: the ijson path names it too
    with pytest.raises(MalformedRecordError, match="JSON is malformed after record 1"):
        read(typed, b'{"id": 1}\n{"id": 2,,}\n')


# -- writing ----------------------------------------------------------------------------------

def order_table(schema: RecordSchema) -> pa.Table:
    return pa.Table.from_pylist([
        {"id": 1, "customer": "Ann", "total": decimal.Decimal("12.50"),
         "placed": datetime.datetime(2024, 1, 2, 3, 4, 5, 123000, tzinfo=datetime.UTC),
         "day": datetime.date(2024, 1, 2), "items": [{"sku": "A", "qty": 2}], "tags": [("k", "v")]},
        {"id": 2, "customer": None, "total": None, "placed": None, "day": None, "items": None, "tags": None},
    ], schema=schema.arrow)


def test_array_output_known_answer(services):
    schema = RecordSchema.from_avro(ORDER)
    writer = services.enable("writer", JsonRecordSetWriter, {})
    data, result = write(writer, schema, order_table(schema))
    assert data == (b'[{"id":1,"customer":"Ann","total":12.50,"placed":1704164645123,"day":"2024-01-02",'
                    b'"items":[{"sku":"A","qty":2}],"tags":{"k":"v"}},'
                    b'{"id":2,"customer":null,"total":null,"placed":null,"day":null,"items":null,"tags":null}]')
    assert result.record_count == 2 and result.attributes == {"mime.type": "application/json", "record.count": "2"}
    assert write(writer, schema)[0] == b"[]"


def test_output_options(services):
    schema = RecordSchema.from_avro(ORDER)
    rows = order_table(schema)
    one_line = services.enable("one_line", JsonRecordSetWriter, {"Output Grouping": "output-oneline",
                                                                 "Suppress Null Values": "always-suppress"})
    data, _ = write(one_line, schema, rows.slice(1), rows.slice(0, 1))
    assert data == b'{"id":2}\n{"id":1,"customer":"Ann","total":12.50,"placed":1704164645123,"day":"2024-01-02",' \
                   b'"items":[{"sku":"A","qty":2}],"tags":{"k":"v"}}'
    pretty = services.enable("pretty", JsonRecordSetWriter, {"Pretty Print JSON": "true"})
    data, _ = write(pretty, schema, rows.slice(1), rows.slice(1))
    assert json.loads(data) == [json.loads(write(one_line, schema, rows.slice(1))[0])
                                | {k: None for k in schema.field_names[1:]}] * 2
    assert data.startswith(b'[\n  {\n    "id": 2,\n') and data.endswith(b"\n  }\n]")
    formats = services.enable("formats", JsonRecordSetWriter, {
        "Timestamp Format": "dd/MM/yyyy HH:mm:ss.SSS", "Date Format": "dd/MM/yyyy"})
    record = json.loads(write(formats, schema, rows.slice(0, 1))[0])[0]
    assert record["placed"] == "02/01/2024 03:04:05.123" and record["day"] == "02/01/2024"
    seconds = services.enable("seconds", JsonRecordSetWriter, {"Timestamp Representation": "EPOCH_SECONDS"})
    assert b'"placed":1704164645.123' in write(seconds, schema, rows.slice(0, 1))[0]


def test_compression_and_schema_attribute(services):
    schema = RecordSchema.from_avro(ORDER)
    writer = services.enable("writer", JsonRecordSetWriter, {"Compression Format": "gzip",
                                                             "Schema Write Strategy": "full-schema-attribute"})
    data, result = write(writer, schema, order_table(schema))
    assert result.attributes["mime.type"] == "application/gzip" and writer.mime_type == "application/gzip"
    assert json.loads(gzip.decompress(data))[0]["customer"] == "Ann"
    assert RecordSchema.from_avro(result.attributes["avro.schema"]) == schema


def test_writer_schema_from_schema_text(services):
    schema = RecordSchema.from_avro(ORDER)
    writer = services.enable("writer", JsonRecordSetWriter, {**TEXT, "Schema Text": json.dumps({
        "type": "record", "name": "r", "fields": [{"name": "customer", "type": ["null", "string"]},
                                                  {"name": "id", "type": "string"}]})})
    assert write(writer, schema, order_table(schema))[0] == b'[{"customer":"Ann","id":"1"},{"customer":null,"id":"2"}]'


def test_json_round_trip(services):
    reader = services.enable("reader", JsonTreeReader, {**TEXT})
    writer = services.enable("writer", JsonRecordSetWriter, {"Schema Write Strategy": "full-schema-attribute"})
    schema = RecordSchema.from_avro(ORDER)
    first, result = write(writer, schema, order_table(schema))
    with reader.create_reader(io.BytesIO(first), result.attributes) as records:
        second, _ = write(writer, records.schema, *records.batches())
    assert second == first


@pytest.mark.parametrize("compression", ["none", "gzip", "bzip2", "xz-lzma2"])
@pytest.mark.parametrize("data", [b'[{"a": 1, "b": "x"}, {"a": 2, "b": null}]', b'{"a": 1, "b": "x"}\n{"a": 2}\n'],
                         ids=["array", "lines"])
def test_content_repository_streams(services, tmp_path, compression, data):
    # a session's content reader is unbuffered and its writer has only write() and close()
    reader = services.enable("reader", JsonTreeReader, {})
    writer = services.enable("writer", JsonRecordSetWriter, {"Compression Format": compression,
                                                             "Output Grouping": "output-oneline"})
    written, result = copy_through_repository(tmp_path / "content", reader, writer, data)
    decompress = {"none": bytes, "gzip": gzip.decompress, "bzip2": bz2.decompress, "xz-lzma2": lzma.decompress}
    assert decompress[compression](written) == b'{"a":1,"b":"x"}\n{"a":2,"b":null}'
    assert result.attributes["mime.type"] == writer.mime_type


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["array", "lines"])
def test_a_200_mb_content_is_copied_in_bounded_memory(tmp_path, shape):
    # an array streams through ijson, JSON lines through pyarrow.json
    source, warmup = tmp_path / "big.json", tmp_path / "small.json"
    filler = "x" * 900
    start, separator, end = (b"[", b",", b"]") if shape == "array" else (b"", b"\n", b"\n")
    with open(source, "wb") as out:
        out.write(start)
        n = 0
        while out.tell() < 200_000_000:
            chunk = separator.join(json.dumps({"id": i, "text": filler, "inner": {"flag": i % 2 == 0}}).encode()
                                   for i in range(n, n + 10_000))
            out.write((separator if n else b"") + chunk)
            n += 10_000
        out.write(end)
    warmup.write_bytes(start + separator.join(json.dumps({"id": i, "text": filler, "inner": {"flag": True}}).encode()
                                              for i in range(BATCH_RECORDS + 1)) + end)
    outcome = copy_peak_growth("JsonTreeReader", {}, "JsonRecordSetWriter", {}, source, warmup, tmp_path / "copy.json")
    assert outcome["records"] == n and outcome["largest_batch"] <= BATCH_RECORDS
    assert outcome["growth"] < 100_000_000, outcome
    assert (tmp_path / "copy.json").stat().st_size > 190_000_000
