"""ParquetReader and ParquetRecordSetWriter: known answers, options, round trips with Avro, damaged files.

Parquet content is made and checked with pyarrow.parquet directly (not through the services).
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.components import validate_properties
from engine.record.api import BATCH_RECORDS, MalformedRecordError
from engine.record.schema import RecordSchema
from engine.services.apis import RecordReaderFactory, RecordSetWriterFactory
from engine.services.record_avro import AvroReader, AvroRecordSetWriter
from engine.services.record_parquet import ParquetReader, ParquetRecordSetWriter
from tests.engine.services.test_record_avro import (
    EVERY_ARROW_TYPE,
    avro_file,
    every_type_record,
    expected_row,
    normalized,
    read,
    write,
    written_record,
)

UTC = datetime.timezone.utc


def parquet_file(table: pa.Table, **options) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, **options)
    return out.getvalue()


# -- NiFi's names and defaults ----------------------------------------------------------------

def test_nifi_names_and_defaults():
    assert ParquetReader.nifi_type == "org.apache.nifi.parquet.ParquetReader"
    assert ParquetRecordSetWriter.nifi_type == "org.apache.nifi.parquet.ParquetRecordSetWriter"
    assert ParquetReader.provides == (RecordReaderFactory,)
    assert ParquetRecordSetWriter.provides == (RecordSetWriterFactory,)
    assert {d.name: d.default for d in ParquetReader.properties} == {
        "Avro Read Compatibility": "true", "Avro Add List Element Records": "true"}
    writer = {d.name: d for d in ParquetRecordSetWriter.properties}
    assert writer["Schema Write Strategy"].default == "no-schema"
    assert writer["Schema Access Strategy"].default == "inherit-record-schema"
    assert writer["Compression Type"].default == "UNCOMPRESSED"
    assert writer["Compression Type"].allowed() == ("UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD",
                                                    "LZ4_RAW")
    assert writer["Writer Version"].allowed() == ("PARQUET_1_0", "PARQUET_2_0")
    for unset in ("Row Group Size", "Page Size", "Dictionary Page Size", "Enable Dictionary Encoding",
                  "Writer Version", "INT96 Fields"):
        assert writer[unset].default is None, unset
    assert ParquetRecordSetWriter().mime_type == "application/parquet"
    assert ParquetRecordSetWriter.migrate_properties({"row-group-size": "1 MB", "writer-version": "PARQUET_2_0"}) == {
        "Row Group Size": "1 MB", "Writer Version": "PARQUET_2_0"}


def test_what_pyarrow_cannot_write_is_invalid(services):
    assert any("LZO" in problem for problem in services.problems(ParquetRecordSetWriter, {"Compression Type": "LZO"}))
    assert any("INT96 Fields" in problem
               for problem in services.problems(ParquetRecordSetWriter, {"INT96 Fields": "/when"}))
    assert validate_properties(ParquetRecordSetWriter, {"Row Group Size": "big"})
    assert not services.problems(ParquetRecordSetWriter, {"Compression Type": "ZSTD", "Row Group Size": "1 MB"})


# -- reading ----------------------------------------------------------------------------------

def test_reads_a_parquet_file_with_its_own_schema(services):
    table = pa.table({
        "id": pa.array([1, 2, 3], pa.int64()), "name": ["a", None, "c"],
        "when": pa.array([0, 1_000_000, None], pa.timestamp("us", tz="UTC")),
        "day": pa.array([0, 1, 2], pa.date32()), "price": pa.array([decimal.Decimal("1.25")] * 3, pa.decimal128(5, 2)),
        "tags": pa.array([["x"], [], None], pa.list_(pa.string())),
        "point": pa.array([{"x": 1.0, "y": 2.0}] * 3, pa.struct([("x", pa.float64()), ("y", pa.float64())])),
    })
    reader = services.enable("reader", ParquetReader, {})
    schema, back = read(reader, parquet_file(table, row_group_size=2))
    assert schema.arrow.equals(table.schema)
    assert back.to_pylist() == table.to_pylist()
    fields = {field["name"]: field["type"] for field in schema.avro["fields"]}
    assert fields["when"] == ["null", {"type": "long", "logicalType": "timestamp-micros"}]
    assert fields["price"] == ["null", {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}]


def test_reads_row_group_by_row_group_in_batches(services):
    total = BATCH_RECORDS * 2 + 5
    content = parquet_file(pa.table({"n": pa.array(range(total), pa.int64())}), row_group_size=BATCH_RECORDS + 1)
    reader = services.enable("reader", ParquetReader, {})
    with reader.create_reader(io.BytesIO(content), {}) as records:
        sizes = [batch.num_rows for batch in records.batches()]
    assert sizes == [BATCH_RECORDS, 1, BATCH_RECORDS, 1, 3]
    assert sum(sizes) == total


# -- writing ----------------------------------------------------------------------------------

def _every_type(services, count=30):
    return read(services.enable("avro", AvroReader, {}), avro_file([every_type_record(n) for n in range(count)]))


@pytest.mark.parametrize("compression, stored", [
    ("UNCOMPRESSED", "UNCOMPRESSED"), ("SNAPPY", "SNAPPY"), ("GZIP", "GZIP"), ("BROTLI", "BROTLI"), ("LZ4", "LZ4"),
    ("ZSTD", "ZSTD"), ("LZ4_RAW", "LZ4")])
def test_writes_every_type_with_each_compression(services, compression, stored):
    schema, table = _every_type(services)
    writer = services.enable("writer", ParquetRecordSetWriter, {"Compression Type": compression})
    content, attributes = write(writer, table, schema)
    assert attributes == {"mime.type": "application/parquet", "record.count": "30"}
    file = pq.ParquetFile(io.BytesIO(content))
    assert file.metadata.row_group(0).column(0).compression == stored
    back = file.read()
    assert {field.name: field.type for field in back.schema} == EVERY_ARROW_TYPE
    assert back.to_pylist() == [expected_row(n) for n in range(30)]


def test_row_groups_pages_dictionary_and_version(services):
    table = pa.table({"n": pa.array(range(100_000), pa.int64()), "s": pa.array(["same"] * 100_000)})
    schema = RecordSchema.from_arrow(table.schema)
    plain = services.enable("plain", ParquetRecordSetWriter, {})
    single = pq.ParquetFile(io.BytesIO(write(plain, table, schema)[0])).metadata
    assert single.num_row_groups == 1
    assert "RLE_DICTIONARY" in single.row_group(0).column(1).encodings
    tuned = services.enable("tuned", ParquetRecordSetWriter, {
        "Row Group Size": "${group}", "Page Size": "8 KB", "Enable Dictionary Encoding": "false",
        "Writer Version": "PARQUET_2_0"})
    content = write(tuned, table, schema, {"group": "256 KB"})[0]
    metadata = pq.ParquetFile(io.BytesIO(content)).metadata
    # Batches of 8192 records of 16 bytes (128 KB): two fill a row group of 256 KB.
    assert metadata.num_row_groups == 7
    assert [metadata.row_group(i).num_rows for i in range(7)] == [2 * BATCH_RECORDS] * 6 + [100_000 - 12 * BATCH_RECORDS]
    assert "RLE_DICTIONARY" not in metadata.row_group(0).column(1).encodings
    assert pq.read_table(io.BytesIO(content)).equals(table)
    assert single.row_group(0).column(0).total_compressed_size > 0
    with pytest.raises(MalformedRecordError, match="Row Group Size"):
        write(tuned, table, schema, {"group": "lots"})


def test_the_avro_schema_attribute_and_the_schema_text(services):
    schema, table = _every_type(services, 5)
    writer = services.enable("writer", ParquetRecordSetWriter, {"Schema Write Strategy": "full-schema-attribute"})
    assert write(writer, table, schema)[1]["avro.schema"] == schema.avro_text
    text = {"type": "record", "name": "Few", "fields": [{"name": "small", "type": "long"},
                                                        {"name": "missing", "type": ["null", "string"]}]}
    chosen = services.enable("chosen", ParquetRecordSetWriter, {"Schema Access Strategy": "schema-text-property",
                                                                "Schema Text": json.dumps(text)})
    content = write(chosen, table, schema)[0]
    assert pq.read_table(io.BytesIO(content)).to_pylist() == [{"small": -n, "missing": None} for n in range(5)]


# -- round trips ------------------------------------------------------------------------------

def test_avro_to_parquet_to_avro_keeps_values_and_types(services):
    avro_reader = services.enable("avro-reader", AvroReader, {})
    parquet_writer = services.enable("parquet-writer", ParquetRecordSetWriter, {"Compression Type": "SNAPPY"})
    parquet_reader = services.enable("parquet-reader", ParquetReader, {})
    avro_writer = services.enable("avro-writer", AvroRecordSetWriter, {"Compression Format": "DEFLATE"})

    schema, table = read(avro_reader, avro_file([every_type_record(n) for n in range(100)]))
    parquet, _ = write(parquet_writer, table, schema)
    parquet_schema, parquet_table = read(parquet_reader, parquet)
    # The Parquet file keeps the Avro schema (as parquet-avro does): names, enums, uuids, unions.
    assert parquet_schema.avro == schema.avro
    assert parquet_table.to_pylist() == table.to_pylist()
    avro, _ = write(avro_writer, parquet_table, parquet_schema)
    source = fastavro.reader(io.BytesIO(avro))
    assert json.loads(source.metadata["avro.schema"]) == fastavro.parse_schema(schema.avro, _write_hint=False)
    assert normalized(list(source)) == normalized([written_record(n) for n in range(100)])
    assert read(avro_reader, avro)[1].equals(table)


def test_parquet_from_elsewhere_converts_to_avro(services):
    table = pa.table({"n": pa.array([1, None], pa.int32()), "ts": pa.array([1000, 2], pa.timestamp("ns")),
                      "u": pa.array([7, 8], pa.uint16()), "s": pa.array(["x", "y"]).dictionary_encode()})
    parquet_reader = services.enable("reader", ParquetReader, {})
    avro_writer = services.enable("writer", AvroRecordSetWriter, {})
    schema, back = read(parquet_reader, parquet_file(table))
    avro, _ = write(avro_writer, back.slice(0, 1), schema)
    fields = {field["name"]: field["type"] for field in json.loads(fastavro.reader(io.BytesIO(avro)).metadata[
        "avro.schema"])["fields"]}
    assert fields["u"] == ["null", "int"] and fields["s"] == ["null", "string"]
    assert fields["ts"] == ["null", {"type": "long", "logicalType": "local-timestamp-micros"}]
    with pytest.raises(MalformedRecordError, match="field 'ts'"):
        write(avro_writer, back, schema)  # 2 ns cannot be held in microseconds without loss


# -- damaged content --------------------------------------------------------------------------

@pytest.mark.parametrize("cut, expected", [
    (4, r"does not end with Parquet's b'PAR1' \(its last 4 bytes are .*truncated"),
    (1, "truncated or its footer damaged"),
])
def test_a_truncated_footer(services, cut, expected):
    content = parquet_file(pa.table({"n": list(range(1000))}))
    reader = services.enable("reader", ParquetReader, {})
    with pytest.raises(MalformedRecordError, match=expected):
        read(reader, content[:-cut])


def test_a_footer_longer_than_the_content(services):
    content = bytearray(parquet_file(pa.table({"n": list(range(10))})))
    content[-8:-4] = (len(content) * 2).to_bytes(4, "little")
    reader = services.enable("reader", ParquetReader, {})
    with pytest.raises(MalformedRecordError, match="the file is truncated"):
        read(reader, bytes(content))


def test_a_damaged_footer(services):
    content = bytearray(parquet_file(pa.table({"n": list(range(10))})))
    footer = int.from_bytes(content[-8:-4], "little")
    start = len(content) - 8 - footer
    content[start:start + footer] = b"\xff" * footer
    reader = services.enable("reader", ParquetReader, {})
    with pytest.raises(MalformedRecordError, match=f"the Parquet footer \\({footer} bytes at byte {start}\\)"):
        read(reader, bytes(content))


def test_a_damaged_row_group_names_it(services):
    table = pa.table({"s": [f"value {n}" for n in range(3000)]})
    content = bytearray(parquet_file(table, row_group_size=1000, compression="snappy", use_dictionary=False))
    metadata = pq.ParquetFile(io.BytesIO(bytes(content))).metadata
    column = metadata.row_group(1).column(0)
    start = column.data_page_offset
    content[start + 20:start + column.total_compressed_size - 20] = b"\x00" * (column.total_compressed_size - 40)
    reader = services.enable("reader", ParquetReader, {})
    with reader.create_reader(io.BytesIO(bytes(content)), {}) as records, \
            pytest.raises(MalformedRecordError,
                          match=f"row group 2 of 3 \\(records 1001 to 2000, bytes {start} to "
                                f"{start + column.total_compressed_size}\\) cannot be read"):
        for _ in records.batches():
            pass


@pytest.mark.parametrize("content, expected", [
    (b"", r"the content \(0 bytes\) is not a Parquet file"),
    (b"id,name\n1,some name\n", "not a Parquet file: it starts with b'id,n', not b'PAR1'"),
])
def test_content_that_is_not_parquet(services, content, expected):
    reader = services.enable("reader", ParquetReader, {})
    with pytest.raises(MalformedRecordError, match=expected):
        read(reader, content)


# -- memory -----------------------------------------------------------------------------------

#: Converts content in a fresh interpreter with the services' defaults and prints how far its
#: peak RSS rose above what it had after converting a small content of the same records (so
#: the interpreter's own first-use costs, thread pools and caches, are not counted).
_CONVERT = """
import io, json, sys
from pathlib import Path
import psutil
from tests.engine.services.conftest import Services
from engine.services.record_avro import AvroReader, AvroRecordSetWriter
from engine.services.record_parquet import ParquetReader, ParquetRecordSetWriter
direction, warmup, source, target = sys.argv[1:5]
services = Services(Path(target + ".services"))
if direction == "avro-to-parquet":
    reader, writer = services.enable("r", AvroReader, {}), services.enable("w", ParquetRecordSetWriter, {})
else:
    reader, writer = services.enable("r", ParquetReader, {}), services.enable("w", AvroRecordSetWriter, {})
def convert(source, target):
    with io.FileIO(source, "r") as content, io.FileIO(target, "w") as out:
        with reader.create_reader(content, {}) as records:
            output = writer.create_writer(out, writer.get_schema({}, records.schema), {})
            for batch in records.batches():
                output.write_batch(batch)
            return output.finish().record_count
convert(warmup, target + ".warmup")
before = psutil.Process().memory_info().rss
count = convert(source, target)
# The high-water mark of this process's own memory: getrusage's ru_maxrss would also count the
# parent's, which the kernel carries over when the child is started.
status = Path("/proc/self/status").read_text()
peak = int(status.split("VmHWM:")[1].split()[0]) * 1024
print(json.dumps({"records": count, "growth": peak - before}))
"""


def _convert(direction: str, warmup, source, target) -> dict:
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", _CONVERT, direction, str(warmup), str(source), str(target)],
                          cwd=root, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_200_mb_converts_both_ways_in_bounded_memory(tmp_path):
    schema = fastavro.parse_schema({"type": "record", "name": "Big", "fields": [
        {"name": "n", "type": "long"}, {"name": "text", "type": "string"}, {"name": "value", "type": "double"},
        {"name": "when", "type": {"type": "long", "logicalType": "timestamp-micros"}}]})

    def records(count):
        rnd = random.Random(13)
        for n in range(count):
            yield {"n": n, "text": rnd.randbytes(48).hex(), "value": n / 3, "when": 1_700_000_000_000_000 + n}

    total = 1_700_000
    big, small = tmp_path / "big.avro", tmp_path / "small.avro"
    with open(big, "wb") as out:
        fastavro.writer(out, schema, records(total))
    with open(small, "wb") as out:
        fastavro.writer(out, schema, records(20_000))
    size = os.path.getsize(big)
    assert size > 190_000_000

    to_parquet = _convert("avro-to-parquet", small, big, tmp_path / "big.parquet")
    assert to_parquet["records"] == total
    assert pq.ParquetFile(tmp_path / "big.parquet").metadata.num_rows == total
    back = _convert("parquet-to-avro", tmp_path / "big.parquet.warmup", tmp_path / "big.parquet",
                    tmp_path / "back.avro")
    assert back["records"] == total
    with open(tmp_path / "back.avro", "rb") as content:
        blocks = fastavro.block_reader(content)
        first = next(iter(next(blocks)))
        assert first == dict(next(records(1)), when=datetime.datetime.fromtimestamp(1_700_000_000, UTC))
    # The whole content is never held: each side holds a block or row group and a batch.
    for direction, result in (("Avro to Parquet", to_parquet), ("Parquet to Avro", back)):
        assert result["growth"] < size / 2, (direction, result, size)


class _WriteOnly:
    """An output stream with nothing but ``write``, like a session's content writer."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data) -> int:
        self.data += data
        return len(data)


@pytest.mark.parametrize("service, properties", [(ParquetRecordSetWriter, {}), (AvroRecordSetWriter, {}),
                                                 (AvroRecordSetWriter, {"Schema Write Strategy": "no-schema"})])
def test_writers_need_only_write_on_the_stream(services, service, properties):
    table = pa.table({"n": pa.array(range(20_000), pa.int64())})
    writer = services.enable("writer", service, properties)
    out = _WriteOnly()
    output = writer.create_writer(out, writer.get_schema({}, RecordSchema.from_arrow(table.schema)), {})
    output.write_batch(table)
    assert output.finish().record_count == 20_000
    reader = (services.enable("parquet", ParquetReader, {}) if service is ParquetRecordSetWriter else
              services.enable("avro", AvroReader, {"Schema Access Strategy": "schema-text-property"}))
    attributes = {"avro.schema": RecordSchema.from_arrow(table.schema).avro_text}
    assert read(reader, bytes(out.data), attributes)[1].column("n").to_pylist() == list(range(20_000))
