"""AvroReader and AvroRecordSetWriter: every Avro type, codecs, schema strategies, damaged content.

Avro content is made and checked with fastavro's own reader and writer (not the services'), so
each test compares the services against an independent implementation of the format.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
import uuid
import zlib

import fastavro
import fastavro.write
import pyarrow as pa
import pytest
import zstandard

from engine.components import validate_properties
from engine.record.api import BATCH_RECORDS, MalformedRecordError
from engine.record.schema import RecordSchema
from engine.services.apis import RecordReaderFactory, RecordSetWriterFactory
from engine.services.record_avro import AvroReader, AvroRecordSetWriter

UTC = datetime.timezone.utc
UUID = uuid.UUID("12345678-1234-5678-1234-567812345678")

#: One field of every Avro type and logical type NiFi's records have.
EVERY_TYPE = {
    "type": "record", "name": "Everything", "namespace": "test.avro", "fields": [
        {"name": "flag", "type": "boolean"},
        {"name": "small", "type": "int"},
        {"name": "big", "type": "long"},
        {"name": "single", "type": "float"},
        {"name": "double", "type": "double"},
        {"name": "text", "type": "string"},
        {"name": "raw", "type": "bytes"},
        {"name": "four", "type": {"type": "fixed", "name": "Four", "size": 4}},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "clock_ms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "clock_us", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "at_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "local_us", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "amount", "type": {"type": "fixed", "name": "Amount", "size": 8, "logicalType": "decimal",
                                    "precision": 12, "scale": 3}},
        {"name": "numbers", "type": {"type": "array", "items": "long"}},
        {"name": "labels", "type": {"type": "map", "values": ["null", "string"]}},
        {"name": "inner", "type": {"type": "record", "name": "Inner", "fields": [
            {"name": "x", "type": "int"}, {"name": "tag", "type": ["null", {"type": "string", "logicalType": "uuid"}]}]}},
        {"name": "maybe_inner", "type": ["null", "Inner"]},
        {"name": "maybe", "type": ["null", "long"]},
        {"name": "choice", "type": ["int", "string", "boolean"]},
        {"name": "number", "type": ["int", "double"]},
    ]}

#: The Arrow type each field of EVERY_TYPE reads as (engine/record/schema.py's mapping).
EVERY_ARROW_TYPE = {
    "flag": pa.bool_(), "small": pa.int32(), "big": pa.int64(), "single": pa.float32(), "double": pa.float64(),
    "text": pa.string(), "raw": pa.binary(), "four": pa.binary(4), "color": pa.string(), "id": pa.string(),
    "day": pa.date32(), "clock_ms": pa.time32("ms"), "clock_us": pa.time64("us"),
    "at_ms": pa.timestamp("ms", tz="UTC"), "at_us": pa.timestamp("us", tz="UTC"), "local_ms": pa.timestamp("ms"),
    "local_us": pa.timestamp("us"), "price": pa.decimal128(10, 2), "amount": pa.decimal128(12, 3),
    "numbers": pa.list_(pa.int64()), "labels": pa.map_(pa.string(), pa.string()),
    "inner": pa.struct([pa.field("x", pa.int32(), nullable=False), pa.field("tag", pa.string())]),
    "maybe_inner": pa.struct([pa.field("x", pa.int32(), nullable=False), pa.field("tag", pa.string())]),
    "maybe": pa.int64(), "choice": pa.string(), "number": pa.float64(),
}


def every_type_record(n: int) -> dict:
    """A record of EVERY_TYPE as fastavro writes it (Python values of the logical types)."""
    return {
        "flag": n % 2 == 0, "small": -n, "big": 2 ** 40 + n, "single": 1.5, "double": n / 4, "text": f"héllo {n}",
        "raw": bytes([n % 256, 0]), "four": b"abcd", "color": ["RED", "GREEN", "BLUE"][n % 3], "id": UUID,
        "day": datetime.date(2024, 2, 29), "clock_ms": datetime.time(12, 34, 56, 789000),
        "clock_us": datetime.time(1, 2, 3, 456789), "at_ms": datetime.datetime(2024, 1, 2, 3, 4, 5, 678000, UTC),
        "at_us": datetime.datetime(2024, 1, 2, 3, 4, 5, 678901, UTC),
        "local_ms": datetime.datetime(2024, 1, 2, 3, 4, 5, 678000),
        "local_us": datetime.datetime(2024, 1, 2, 3, 4, 5, 678901), "price": decimal.Decimal("12345678.90"),
        "amount": decimal.Decimal("-123456789.123"), "numbers": list(range(n % 4)), "labels": {"k": "v", "none": None},
        "inner": {"x": n, "tag": UUID if n % 2 else None}, "maybe_inner": {"x": 1, "tag": None} if n % 2 else None,
        "maybe": None if n % 2 else n, "choice": [7, "seven", True][n % 3], "number": [3, 2.5][n % 2],
    }


def expected_row(n: int) -> dict:
    """What the reader gives for every_type_record(n) (Arrow's Python values)."""
    row = every_type_record(n)
    row.update(id=str(UUID), labels=[("k", "v"), ("none", None)], inner={"x": n, "tag": str(UUID) if n % 2 else None},
               choice=["7", "seven", "true"][n % 3], number=float(row["number"]))
    return row


def written_record(n: int) -> dict:
    """What the writer writes for the records read from every_type_record(n): the same values,
    but the mixed union's value is the text it was read as (its Arrow type is string)."""
    return dict(every_type_record(n), choice=["7", "seven", "true"][n % 3])


def avro_file(records, schema=EVERY_TYPE, codec="null", **options) -> io.BytesIO:
    """An Avro object container file written by fastavro."""
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, codec=codec, **options)
    out.seek(0)
    return out


def read(service, content: bytes | io.BytesIO, attributes=None):
    stream = content if isinstance(content, io.BytesIO) else io.BytesIO(content)
    with service.create_reader(stream, attributes or {}) as reader:
        return reader.schema, reader.read_all()


def write(service, table: pa.Table, read_schema: RecordSchema, attributes=None) -> tuple[bytes, dict]:
    out = io.BytesIO()
    schema = service.get_schema(attributes or {}, read_schema)
    writer = service.create_writer(out, schema, attributes or {})
    writer.write_batch(table)
    result = writer.finish()
    assert result.attributes["record.count"] == str(result.record_count)
    return out.getvalue(), result.attributes


def normalized(rows):
    """fastavro's rows with timezones made comparable (it gives datetime.timezone.utc, Arrow ZoneInfo)."""
    def fix(value):
        if isinstance(value, datetime.datetime) and value.tzinfo is not None:
            return value.astimezone(UTC)
        if isinstance(value, dict):
            return {key: fix(item) for key, item in value.items()}
        if isinstance(value, list):
            return [fix(item) for item in value]
        return value
    return [fix(row) for row in rows]


# -- NiFi's names and defaults ----------------------------------------------------------------

def test_nifi_names_and_defaults():
    assert AvroReader.nifi_type == "org.apache.nifi.avro.AvroReader"
    assert AvroRecordSetWriter.nifi_type == "org.apache.nifi.avro.AvroRecordSetWriter"
    assert AvroReader.provides == (RecordReaderFactory,)
    assert AvroRecordSetWriter.provides == (RecordSetWriterFactory,)
    reader = {d.name: d for d in AvroReader.properties}
    assert reader["Schema Access Strategy"].default == "embedded-avro-schema"
    assert reader["Schema Access Strategy"].allowed() == ("embedded-avro-schema", "schema-text-property")
    assert reader["Schema Text"].default == "${avro.schema}"
    assert reader["Cache Size"].default == "1000"
    writer = {d.name: d for d in AvroRecordSetWriter.properties}
    assert writer["Schema Write Strategy"].default == "avro-embedded"
    assert writer["Schema Access Strategy"].default == "inherit-record-schema"
    assert writer["Compression Format"].default == "NONE"
    assert writer["Compression Format"].allowed() == ("BZIP2", "DEFLATE", "NONE", "SNAPPY", "LZO")
    assert writer["Encoder Pool Size"].default == "32"
    assert AvroRecordSetWriter().mime_type == "application/avro-binary"


def test_nifi_1_property_names_are_read():
    migrated = AvroRecordSetWriter.migrate_properties({"compression-format": "DEFLATE", "cache-size": "5",
                                                       "schema-access-strategy": "schema-text-property"})
    assert migrated == {"Compression Format": "DEFLATE", "Cache Size": "5",
                        "Schema Access Strategy": "schema-text-property"}
    assert AvroReader.migrate_properties({"schema-text": "{}"}) == {"Schema Text": "{}"}


def test_compression_needs_the_embedded_schema(services):
    problems = services.problems(AvroRecordSetWriter, {"Schema Write Strategy": "no-schema",
                                                        "Compression Format": "DEFLATE"})
    assert any("Compression Format" in problem and "NONE" in problem for problem in problems)
    assert not validate_properties(AvroRecordSetWriter, {"Compression Format": "BZIP2"})
    assert validate_properties(AvroRecordSetWriter, {"Compression Format": "ZIP"})


# -- reading ----------------------------------------------------------------------------------

def test_reads_every_type_as_its_arrow_type_with_known_values(services):
    reader = services.enable("reader", AvroReader, {})
    schema, table = read(reader, avro_file([every_type_record(n) for n in range(6)]))
    assert {field.name: field.type for field in schema.arrow} == EVERY_ARROW_TYPE
    assert table.schema.equals(schema.arrow)
    assert not schema.arrow.field("flag").nullable and schema.arrow.field("maybe").nullable
    assert table.to_pylist() == [expected_row(n) for n in range(6)]
    # The Avro view keeps what Arrow cannot say: enum symbols, the uuid, the unions, the names.
    fields = {field["name"]: field["type"] for field in schema.avro["fields"]}
    assert fields["color"]["symbols"] == ["RED", "GREEN", "BLUE"]
    assert fields["choice"] == ["int", "string", "boolean"]
    assert schema.avro["name"] == "test.avro.Everything"  # fastavro writes full names


@pytest.mark.parametrize("codec", ["null", "deflate", "bzip2", "xz", "lz4"])
def test_reads_every_codec(services, codec):
    reader = services.enable("reader", AvroReader, {})
    _, table = read(reader, avro_file([every_type_record(n) for n in range(50)], codec=codec))
    assert table.to_pylist() == [expected_row(n) for n in range(50)]


def _literal_snappy(data: bytes) -> bytes:
    """Raw snappy of ``data`` made of literals only (the format's simplest valid encoding)."""
    out = bytearray()
    length = len(data)
    while True:  # the uncompressed length, as an unsigned varint
        out.append((length & 0x7F) | (0x80 if length > 0x7F else 0))
        length >>= 7
        if not length:
            break
    for start in range(0, len(data), 60):
        chunk = data[start:start + 60]
        out.append((len(chunk) - 1) << 2)
        out += chunk
    return bytes(out)


def _zigzag(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def test_reads_snappy_and_zstandard_blocks_made_to_the_specification(services, monkeypatch):
    def snappy_block(fo, block, level=None):
        data = _literal_snappy(block)
        fo.write(_zigzag(len(data) + 4) + data + zlib.crc32(block).to_bytes(4, "big"))

    def zstandard_block(fo, block, level=None):
        data = zstandard.ZstdCompressor().compress(block)
        fo.write(_zigzag(len(data)) + data)

    reader = services.enable("reader", AvroReader, {})
    for codec, block_writer in (("snappy", snappy_block), ("zstandard", zstandard_block)):
        with monkeypatch.context() as patch:
            patch.setitem(fastavro.write._write.BLOCK_WRITERS, codec, block_writer)
            content = avro_file([every_type_record(n) for n in range(300)], codec=codec)
        _, table = read(reader, content)
        assert table.to_pylist() == [expected_row(n) for n in range(300)], codec


def test_reads_in_batches_of_at_most_batch_records(services):
    schema = {"type": "record", "name": "r", "fields": [{"name": "n", "type": "long"}]}
    total = BATCH_RECORDS * 2 + 17
    content = avro_file(({"n": n} for n in range(total)), schema=schema, sync_interval=1000)
    reader = services.enable("reader", AvroReader, {})
    with reader.create_reader(content, {}) as records:
        sizes = [batch.num_rows for batch in records.batches()]
        assert sizes == [BATCH_RECORDS, BATCH_RECORDS, 17]


def test_schema_text_resolves_a_container_file_to_it(services):
    writer_schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"},
                                                               {"name": "b", "type": "string"}]}
    reader_schema = {"type": "record", "name": "r", "fields": [{"name": "b", "type": "string"},
                                                               {"name": "c", "type": "int", "default": 5}]}
    reader = services.enable("reader", AvroReader, {"Schema Access Strategy": "schema-text-property",
                                                    "Schema Text": json.dumps(reader_schema)})
    schema, table = read(reader, avro_file([{"a": 1, "b": "x"}], schema=writer_schema))
    assert schema.field_names == ["b", "c"]
    assert table.to_pylist() == [{"b": "x", "c": 5}]


def test_schema_text_from_the_avro_schema_attribute_reads_bare_datums(services):
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"},
                                                        {"name": "s", "type": ["null", "string"]}]}
    parsed = fastavro.parse_schema(schema)
    out = io.BytesIO()
    for n in range(1000):
        fastavro.schemaless_writer(out, parsed, {"a": n, "s": None if n % 3 else str(n)})
    reader = services.enable("reader", AvroReader, {"Schema Access Strategy": "schema-text-property"})
    _, table = read(reader, out.getvalue(), {"avro.schema": json.dumps(schema)})
    assert table.to_pylist() == [{"a": n, "s": None if n % 3 else str(n)} for n in range(1000)]
    _, empty = read(reader, b"", {"avro.schema": json.dumps(schema)})
    assert empty.num_rows == 0


# -- damaged content --------------------------------------------------------------------------

def _blocks(content: bytes) -> list[int]:
    """Where the blocks of an Avro file start."""
    return [block.offset for block in fastavro.block_reader(io.BytesIO(content))]


def test_a_truncated_file_names_the_block_and_where(services):
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
    content = avro_file(({"s": "x" * 50} for _ in range(100)), schema=schema, sync_interval=500).getvalue()
    starts = _blocks(content)
    cut = starts[2] + 20
    reader = services.enable("reader", AvroReader, {})
    with pytest.raises(MalformedRecordError) as caught:
        read(reader, content[:cut])
    message = str(caught.value)
    assert "truncated" in message and f"block 3 (which starts at byte {starts[2]} of {cut})" in message


def test_a_bad_sync_marker_names_the_block(services):
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
    content = bytearray(avro_file(({"s": "x" * 50} for _ in range(100)), schema=schema, sync_interval=500).getvalue())
    starts = _blocks(bytes(content))
    content[starts[2] - 1] ^= 0xFF  # the last byte of the sync marker after block 2
    reader = services.enable("reader", AvroReader, {})
    with pytest.raises(MalformedRecordError) as caught:
        read(reader, bytes(content))
    assert f"block 2 at byte {starts[1]} is not followed by the file's sync marker" in str(caught.value)


def test_a_bad_record_names_the_record_and_its_block(services):
    schema = {"type": "record", "name": "r", "fields": [{"name": "u", "type": ["null", "string"]}]}
    content = bytearray(avro_file([{"u": "ok"}] * 3, schema=schema).getvalue())
    start = _blocks(bytes(content))[0]
    # The block: count (3), size, then the records; the second record's union index becomes 9.
    body = start + 2
    assert content[body:body + 8] == b"\x02\x04ok\x02\x04ok"
    content[body + 4] = 18
    reader = services.enable("reader", AvroReader, {})
    with pytest.raises(MalformedRecordError) as caught:
        read(reader, bytes(content))
    assert f"record 2 (record 2 of block 1, which starts at byte {start}) cannot be decoded" in str(caught.value)


@pytest.mark.parametrize("content, expected", [
    (b"", "the content is empty"),
    (b"id,name\n1,x\n", "not an Avro object container file: it starts with b'id,n'"),
    (b"Obj\x01\x02", "the Avro header cannot be read"),
])
def test_content_that_is_not_avro(services, content, expected):
    reader = services.enable("reader", AvroReader, {})
    with pytest.raises(MalformedRecordError, match=expected):
        read(reader, content)


def test_truncated_bare_datums_name_the_record(services):
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
    parsed = fastavro.parse_schema(schema)
    out = io.BytesIO()
    for _ in range(3):
        fastavro.schemaless_writer(out, parsed, {"s": "abcdef"})
    reader = services.enable("reader", AvroReader, {"Schema Access Strategy": "schema-text-property",
                                                    "Schema Text": json.dumps(schema)})
    with pytest.raises(MalformedRecordError, match=r"ends inside record 3 \(which starts at byte 14 of 18\)"):
        read(reader, out.getvalue()[:18])


def test_an_unusable_schema_text_is_a_malformed_record_error(services):
    reader = services.enable("reader", AvroReader, {"Schema Access Strategy": "schema-text-property"})
    with pytest.raises(MalformedRecordError, match="Schema Text"):
        read(reader, b"", {"avro.schema": '{"type": "enum"}'})


# -- writing ----------------------------------------------------------------------------------

def _every_type_table(services, count=40):
    reader = services.enable("source", AvroReader, {})
    return read(reader, avro_file([every_type_record(n) for n in range(count)]))


@pytest.mark.parametrize("compression, codec", [("NONE", "null"), ("DEFLATE", "deflate"), ("BZIP2", "bzip2"),
                                                ("SNAPPY", "snappy"), ("LZO", "xz")])
def test_writes_a_container_file_with_each_compression(services, compression, codec):
    schema, table = _every_type_table(services)
    writer = services.enable("writer", AvroRecordSetWriter, {"Compression Format": compression})
    content, attributes = write(writer, table, schema)
    assert attributes == {"mime.type": "application/avro-binary", "record.count": "40"}
    source = fastavro.reader(io.BytesIO(content))
    assert source.metadata["avro.codec"] == codec
    assert normalized(list(source)) == normalized([written_record(n) for n in range(40)])


def test_writes_bare_datums_and_the_avro_schema_attribute(services):
    schema, table = _every_type_table(services, 10)
    writer = services.enable("writer", AvroRecordSetWriter, {"Schema Write Strategy": "full-schema-attribute"})
    content, attributes = write(writer, table, schema)
    assert attributes["avro.schema"] == schema.avro_text
    assert not content.startswith(b"Obj\x01")
    parsed = fastavro.parse_schema(schema.avro)
    stream = io.BytesIO(content)
    rows = [fastavro.schemaless_reader(stream, parsed, None) for _ in range(10)]
    assert stream.tell() == len(content)
    assert normalized(rows) == normalized([written_record(n) for n in range(10)])
    # ... which AvroReader reads back through the attribute.
    reader = services.enable("reader", AvroReader, {"Schema Access Strategy": "schema-text-property"})
    _, back = read(reader, content, attributes)
    assert back.to_pylist() == table.to_pylist()
    plain = services.enable("plain", AvroRecordSetWriter, {"Schema Write Strategy": "no-schema"})
    assert write(plain, table, schema)[1] == {"mime.type": "application/avro-binary", "record.count": "10"}


def test_writes_with_the_schema_text(services):
    schema = {"type": "record", "name": "Out", "fields": [
        {"name": "small", "type": "int"}, {"name": "extra", "type": ["null", "string"]},
        {"name": "when", "type": {"type": "long", "logicalType": "timestamp-millis"}}]}
    writer = services.enable("writer", AvroRecordSetWriter, {"Schema Access Strategy": "schema-text-property",
                                                             "Schema Text": json.dumps(schema)})
    # Columns in another order, of castable types, one missing (null) and one more (dropped).
    table = pa.table({"when": pa.array([0, 1000], pa.timestamp("s", tz="UTC")), "small": pa.array([1, 2], pa.int64()),
                      "other": ["a", "b"]})
    content, _ = write(writer, table, RecordSchema.from_arrow(table.schema))
    assert normalized(list(fastavro.reader(io.BytesIO(content)))) == [
        {"small": 1, "extra": None, "when": datetime.datetime(1970, 1, 1, tzinfo=UTC)},
        {"small": 2, "extra": None, "when": datetime.datetime(1970, 1, 1, 0, 16, 40, tzinfo=UTC)}]


def test_an_empty_record_set_is_a_file_with_a_header(services):
    schema, table = _every_type_table(services, 1)
    writer = services.enable("writer", AvroRecordSetWriter, {})
    content, attributes = write(writer, table.slice(0, 0), schema)
    assert attributes["record.count"] == "0"
    assert fastavro.reader(io.BytesIO(content)).metadata["avro.schema"]
    assert list(fastavro.reader(io.BytesIO(content))) == []


def test_a_record_that_does_not_fit_names_the_record(services):
    schema = RecordSchema.from_avro({"type": "record", "name": "r", "fields": [
        {"name": "color", "type": {"type": "enum", "name": "C", "symbols": ["RED"]}}]})
    writer = services.enable("writer", AvroRecordSetWriter, {})
    with pytest.raises(MalformedRecordError, match="record 3 does not fit the Avro schema"):
        write(writer, pa.table({"color": ["RED", "RED", "PINK"]}), schema)
    with pytest.raises(MalformedRecordError, match="field 'color'"):
        write(writer, pa.table({"color": pa.array([[1]])}), schema)


def test_inherit_needs_the_records_schema(services):
    writer = services.enable("writer", AvroRecordSetWriter, {})
    with pytest.raises(MalformedRecordError, match="Inherit Record Schema"):
        writer.get_schema({}, None)


def test_decimals_beyond_38_digits(services):
    big = {"type": "record", "name": "r", "fields": [
        {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 2}}]}
    value = decimal.Decimal("12345678901234567890123456789012345678.91")
    reader = services.enable("reader", AvroReader, {})
    schema, table = read(reader, avro_file([{"d": value}], schema=big))
    assert schema.arrow.field("d").type == pa.decimal256(40, 2)
    assert table.column("d").to_pylist() == [value]
    content, _ = write(services.enable("writer", AvroRecordSetWriter, {}), table, schema)
    assert list(fastavro.reader(io.BytesIO(content))) == [{"d": value}]
    too_big = json.loads(json.dumps(big))
    too_big["fields"][0]["type"]["precision"] = 80
    with pytest.raises(MalformedRecordError, match="the schema in the Avro header is not usable: decimal"):
        read(reader, avro_file([], schema=too_big))


class _Unbuffered(io.RawIOBase):
    """An unbuffered, seekable content stream, like a session's content reader."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        return self._data.readinto(buffer)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._data.seek(offset, whence)

    def tell(self) -> int:
        return self._data.tell()


def test_an_unbuffered_stream_is_read_through_a_buffer_and_left_open(services):
    schema = {"type": "record", "name": "r", "fields": [{"name": "n", "type": "long"}]}
    parsed = fastavro.parse_schema(schema)
    datums = io.BytesIO()
    for n in range(5000):
        fastavro.schemaless_writer(datums, parsed, {"n": n})
    reader = services.enable("reader", AvroReader, {"Schema Access Strategy": "schema-text-property",
                                                    "Schema Text": json.dumps(schema)})
    for content in (datums.getvalue(), avro_file(({"n": n} for n in range(5000)), schema=schema).getvalue()):
        stream = _Unbuffered(content)
        with reader.create_reader(stream, {}) as records:
            assert records.read_all().column("n").to_pylist() == list(range(5000))
        assert not stream.closed
