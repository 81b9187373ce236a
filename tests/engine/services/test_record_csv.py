"""CSVReader and CSVRecordSetWriter: NiFi's properties and defaults, inference, explicit schemas,
the CSV formats, quoting, malformed content and streaming in bounded memory."""

from __future__ import annotations

import datetime
import io
import json
import time

import pyarrow as pa
import pytest

from engine.components import default_registry
from engine.record.api import BATCH_RECORDS, MalformedRecordError
from engine.record.schema import RecordSchema
from engine.services.apis import RecordReaderFactory, RecordSetWriterFactory
from engine.services.record_csv import CSVReader, CSVRecordSetWriter, unescape
from tests.engine.services.streaming import copy_peak_growth, copy_through_repository

PEOPLE = b"id,name,score,active,joined\n1,Alice,2.5,true,2024-01-02\n2,\"Smith, Bob\",3,false,\n3,Carol,,TRUE,2023-12-31\n"
PERSON_SCHEMA = json.dumps({"type": "record", "name": "person", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": ["null", "string"]},
    {"name": "score", "type": ["null", "double"]}, {"name": "active", "type": ["null", "boolean"]},
    {"name": "joined", "type": ["null", {"type": "int", "logicalType": "date"}]}]})
TEXT = {"Schema Access Strategy": "schema-text-property"}


def read(reader, data: bytes, attributes=None):
    """(schema, records) read from ``data``."""
    with reader.create_reader(io.BytesIO(data), attributes or {}) as records:
        return records.schema, records.read_all().to_pylist()


def write(writer, schema: RecordSchema, *tables, attributes=None) -> tuple[bytes, object]:
    """(bytes, WriteResult) of writing ``tables`` with ``schema``."""
    out = io.BytesIO()
    records = writer.create_writer(out, writer.get_schema(attributes or {}, schema), attributes or {})
    for table in tables:
        records.write_batch(table)
    result = records.finish()
    return out.getvalue(), result


def table(schema: RecordSchema, rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema.arrow)


# -- NiFi's names and defaults ----------------------------------------------------------------

def test_nifi_types_properties_and_defaults():
    registry = default_registry()
    assert registry.service("org.apache.nifi.csv.CSVReader") is CSVReader
    assert registry.service("org.apache.nifi.csv.CSVRecordSetWriter") is CSVRecordSetWriter
    assert CSVReader.provides == (RecordReaderFactory,) and CSVRecordSetWriter.provides == (RecordSetWriterFactory,)
    reader = {p.name: p for p in CSVReader.properties}
    assert list(reader) == [
        "Schema Access Strategy", "Schema Text", "CSV Parser", "Date Format", "Time Format", "Timestamp Format",
        "CSV Format", "Value Separator", "Record Separator", "Treat First Line as Header",
        "Ignore CSV Header Column Names", "Quote Character", "Escape Character", "Comment Marker", "Null String",
        "Trim Fields", "Character Set", "Allow Duplicate Header Names", "Trim Double Quote"]
    defaults = {name: p.default for name, p in reader.items() if p.default is not None}
    assert defaults == {
        "Schema Access Strategy": "infer-schema", "Schema Text": "${avro.schema}", "CSV Parser": "commons-csv",
        "CSV Format": "custom", "Value Separator": ",", "Record Separator": "\\n",
        "Treat First Line as Header": "false", "Ignore CSV Header Column Names": "false", "Quote Character": '"',
        "Escape Character": "\\", "Trim Fields": "true", "Character Set": "UTF-8",
        "Allow Duplicate Header Names": "true", "Trim Double Quote": "true"}
    assert [v.value for v in reader["Schema Access Strategy"].allowed_values] == [
        "schema-text-property", "csv-header-derived", "infer-schema"]
    assert [(v.value, v.display_name) for v in reader["CSV Format"].allowed_values] == [
        ("custom", "Custom Format"), ("rfc-4180", "RFC 4180"), ("excel", "Microsoft Excel"), ("tdf", "Tab-Delimited"),
        ("mysql", "MySQL Format"), ("informix-unload", "Informix Unload"),
        ("informix-unload-csv", "Informix Unload Escape Disabled")]
    writer = {p.name: p for p in CSVRecordSetWriter.properties}
    assert writer["Schema Write Strategy"].default == "no-schema"
    assert writer["Schema Access Strategy"].default == "inherit-record-schema"
    assert writer["Include Header Line"].default == "true" and writer["Quote Mode"].default == "MINIMAL"
    assert [v.value for v in writer["Quote Mode"].allowed_values] == ["ALL", "MINIMAL", "NON_NUMERIC", "NONE"]
    assert writer["Include Trailing Delimiter"].default == "false"


def test_nifi_1_property_names_are_migrated():
    assert CSVReader.migrate_properties({"schema-access-strategy": "csv-header-derived", "Skip Header Line": "true",
                                         "ignore-csv-header": "true", "csvutils-character-set": "UTF-16"}) == {
        "Schema Access Strategy": "csv-header-derived", "Treat First Line as Header": "true",
        "Ignore CSV Header Column Names": "true", "Character Set": "UTF-16"}
    assert CSVRecordSetWriter.migrate_properties({"schema-text": "x", "csv-writer": "fast-csv"}) == {
        "Schema Text": "x", "CSV Writer": "fast-csv"}


def test_validation(services):
    assert services.problems(CSVReader, {}) == []
    assert services.problems(CSVReader, {"Value Separator": "\\t"}) == []
    assert services.problems(CSVReader, {"Value Separator": "${separator}"}) == []
    assert services.problems(CSVReader, {"Value Separator": ";;"}) == [
        "'Value Separator' must be a single character (escapes such as \\t are allowed)"]
    assert services.problems(CSVReader, {"Timestamp Format": "yyyy-MM-dd HH:mm:ss.SSS"}) == []
    assert services.problems(CSVReader, {"Date Format": "yyyy-QQQ"})[0].startswith(
        "'Date Format' is not a usable date/time pattern: pattern letters 'QQQ'")
    assert services.problems(CSVReader, {**TEXT, "Schema Text": "{}"})[0].startswith(
        "'Schema Text' is not a valid Avro record schema")
    # custom-format properties do not matter under a predefined format
    assert services.problems(CSVReader, {"CSV Format": "rfc-4180", "Value Separator": ";;"}) == []
    assert services.problems(CSVRecordSetWriter, {"Quote Mode": "NONE", "Escape Character": ""}) == [
        "'Quote Mode' 'Do Not Quote Values' needs an 'Escape Character' to escape special characters with"]


def test_unescape():
    assert unescape("\\t") == "\t" and unescape("\\n") == "\n" and unescape("\\r\\n") == "\r\n"
    assert unescape("\\u0001") == "\x01" and unescape("\\") == "\\" and unescape(";") == ";"


# -- reading ----------------------------------------------------------------------------------

def test_inferred_schema_and_values(services):
    reader = services.enable("reader", CSVReader, {"Date Format": "yyyy-MM-dd"})
    schema, rows = read(reader, PEOPLE)
    assert schema.avro == {"type": "record", "name": "nifiRecord", "fields": [
        {"name": "id", "type": ["null", "int"]}, {"name": "name", "type": ["null", "string"]},
        {"name": "score", "type": ["null", "double"]}, {"name": "active", "type": ["null", "boolean"]},
        {"name": "joined", "type": ["null", {"type": "int", "logicalType": "date"}]}]}
    assert rows == [
        {"id": 1, "name": "Alice", "score": 2.5, "active": True, "joined": datetime.date(2024, 1, 2)},
        {"id": 2, "name": "Smith, Bob", "score": 3.0, "active": False, "joined": None},
        {"id": 3, "name": "Carol", "score": None, "active": True, "joined": datetime.date(2023, 12, 31)}]


def test_inference_types(services):
    reader = services.enable("reader", CSVReader, {})
    schema, rows = read(reader, b"small,big,mixed,word,empty,huge\n1,3000000000,1,a,,99999999999999999999\n"
                                b"-2,4,2.5,b,,1\n")
    assert [str(f.type) for f in schema.arrow] == ["int32", "int64", "double", "string", "string", "string"]
    assert rows[1] == {"small": -2, "big": 4, "mixed": 2.5, "word": "b", "empty": "", "huge": "1"}
    # without a Date Format, dates are text (as NiFi infers them)
    assert read(reader, b"d\n2024-01-02\n")[0].arrow.field("d").type == pa.string()


def test_use_string_fields_from_header(services):
    reader = services.enable("reader", CSVReader, {"Schema Access Strategy": "csv-header-derived"})
    schema, rows = read(reader, PEOPLE)
    assert [f.type for f in schema.arrow] == [pa.string()] * 5
    assert rows[0] == {"id": "1", "name": "Alice", "score": "2.5", "active": "true", "joined": "2024-01-02"}


def test_explicit_schema_from_the_avro_schema_attribute(services):
    reader = services.enable("reader", CSVReader, {**TEXT, "Treat First Line as Header": "true"})
    schema, rows = read(reader, PEOPLE, {"avro.schema": PERSON_SCHEMA})
    assert schema == RecordSchema.from_avro(PERSON_SCHEMA)
    assert rows[1] == {"id": 2, "name": "Smith, Bob", "score": 3.0, "active": False, "joined": None}
    assert rows[2]["joined"] == datetime.date(2023, 12, 31)
    with pytest.raises(MalformedRecordError, match="'Schema Text' is empty for this FlowFile"):
        read(reader, PEOPLE, {})


def test_header_names_map_columns_to_fields(services):
    schema_text = json.dumps({"type": "record", "name": "r", "fields": [
        {"name": "name", "type": "string"}, {"name": "id", "type": "int"}, {"name": "missing", "type": ["null", "long"]}]})
    by_name = services.enable("by_name", CSVReader, {**TEXT, "Schema Text": schema_text,
                                                     "Treat First Line as Header": "true"})
    _, rows = read(by_name, PEOPLE)
    assert rows[0] == {"name": "Alice", "id": 1, "missing": None}
    by_position = services.enable("by_position", CSVReader, {
        **TEXT, "Schema Text": schema_text, "Treat First Line as Header": "true",
        "Ignore CSV Header Column Names": "true"})
    _, rows = read(by_position, b"first,second\nAlice,1\n")
    assert rows == [{"name": "Alice", "id": 1, "missing": None}]
    no_header = services.enable("no_header", CSVReader, {**TEXT, "Schema Text": schema_text})
    _, rows = read(no_header, b"Alice,1\nBob,2\n")
    assert rows == [{"name": "Alice", "id": 1, "missing": None}, {"name": "Bob", "id": 2, "missing": None}]


def test_predefined_formats(services):
    tdf = services.enable("tdf", CSVReader, {"CSV Format": "tdf"})
    assert read(tdf, b"a\tb\r\n x \t2\r\n")[1] == [{"a": "x", "b": 2}]
    rfc = services.enable("rfc", CSVReader, {"CSV Format": "rfc-4180"})
    assert read(rfc, b'a,b\r\n" x ","say ""hi"""\r\n')[1] == [{"a": " x ", "b": 'say "hi"'}]
    mysql = services.enable("mysql", CSVReader, {"CSV Format": "mysql"})
    assert read(mysql, b"a\tb\n\\N\tx\\\ty\n")[1] == [{"a": None, "b": "x\ty"}]
    informix = services.enable("informix", CSVReader, {"CSV Format": "informix-unload"})
    assert read(informix, b"a|b\n1|x\\|y\n")[1] == [{"a": 1, "b": "x|y"}]


def test_custom_format_properties(services):
    reader = services.enable("reader", CSVReader, {
        "Value Separator": ";", "Quote Character": "'", "Escape Character": "", "Comment Marker": "#",
        "Null String": "NULL", "Trim Fields": "false"})
    schema, rows = read(reader, b"# exported\na;b;c\n'x;y';NULL; z \n#skipped\n'it''s';2;\n")
    assert rows == [{"a": "x;y", "b": None, "c": " z "}, {"a": "it's", "b": 2, "c": ""}]
    by_attribute = services.enable("by_attribute", CSVReader, {"Value Separator": "${separator}"})
    assert read(by_attribute, b"a|b\n1|2\n", {"separator": "|"})[1] == [{"a": 1, "b": 2}]


def test_character_set(services):
    reader = services.enable("reader", CSVReader, {"Character Set": "ISO-8859-1"})
    assert read(reader, "name\nJos\xe9\n".encode("latin-1"))[1] == [{"name": "Jos\xe9"}]
    utf8 = services.enable("utf8", CSVReader, {})
    assert read(utf8, "\ufeffname\nJos\xe9\n".encode())[1] == [{"name": "Jos\xe9"}]  # the BOM is skipped


def test_date_time_and_timestamp_formats(services):
    schema_text = json.dumps({"type": "record", "name": "r", "fields": [
        {"name": "d", "type": {"type": "int", "logicalType": "date"}},
        {"name": "t", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}}]})
    formats = {"Date Format": "MM/dd/yyyy", "Time Format": "HH.mm", "Timestamp Format": "dd.MM.yyyy HH:mm:ss.SSS"}
    reader = services.enable("reader", CSVReader, {**TEXT, "Schema Text": schema_text,
                                                   "Treat First Line as Header": "true", **formats})
    schema, rows = read(reader, b"d,t,ts\n01/02/2024,13.45,02.01.2024 03:04:05.123\n")
    assert rows == [{"d": datetime.date(2024, 1, 2), "t": datetime.time(13, 45),
                     "ts": datetime.datetime(2024, 1, 2, 3, 4, 5, 123000, tzinfo=datetime.UTC)}]
    writer = services.enable("writer", CSVRecordSetWriter, formats)
    assert write(writer, schema, table(schema, rows))[0] == b"d,t,ts\n01/02/2024,13.45,02.01.2024 03:04:05.123\n"
    plain = services.enable("plain", CSVRecordSetWriter, {})
    assert write(plain, schema, table(schema, rows))[0] == b"d,t,ts\n2024-01-02,13:45:00,2024-01-02 03:04:05\n"


def test_batches_are_bounded(services):
    reader = services.enable("reader", CSVReader, {})
    data = b"n,text\n" + b"".join(b"%d,row %d\n" % (i, i) for i in range(3 * BATCH_RECORDS + 5))
    with reader.create_reader(io.BytesIO(data), {}) as records:
        sizes = [batch.num_rows for batch in records.batches()]
    assert max(sizes) <= BATCH_RECORDS and sum(sizes) == 3 * BATCH_RECORDS + 5


def test_a_reader_closed_early_reads_the_stream_no_more(services):
    class Watched(io.BytesIO):
        """Counts the reads made once the reader is closed (pyarrow reads ahead on a thread)."""
        late = 0
        closed_reader = False

        def read(self, size=-1):
            if self.closed_reader:
                Watched.late += 1
            return super().read(size)

    reader = services.enable("reader", CSVReader, {})
    stream = Watched(b"n,text\n" + b"".join(b"%d,row %d\n" % (i, i) for i in range(500_000)))
    records = reader.create_reader(stream, {})
    assert next(records.batches()).num_rows == BATCH_RECORDS
    records.close()
    stream.closed_reader = True
    time.sleep(0.3)
    assert Watched.late == 0


# -- malformed content ------------------------------------------------------------------------

def test_a_row_with_too_many_fields_names_its_line(services):
    reader = services.enable("reader", CSVReader, {})
    with pytest.raises(MalformedRecordError, match=r"^line 4: expected 2 fields, found 3: '3,c,extra'$"):
        read(reader, b"id,name\n1,a\n2,b\n3,c,extra\n")


def test_a_value_that_does_not_convert_names_record_and_field(services):
    reader = services.enable("reader", CSVReader, {**TEXT, "Treat First Line as Header": "true"})
    with pytest.raises(MalformedRecordError, match=r"^record 2, field 'score': value 'high' does not convert to "
                                                   r"double$"):
        read(reader, b"id,name,score\n1,a,2.5\n2,b,high\n", {"avro.schema": PERSON_SCHEMA})
    with pytest.raises(MalformedRecordError, match=r"record 1, field 'joined': value '01/02/2024' does not convert "
                                                   r"to date"):
        read(reader, b"id,joined\n1,01/02/2024\n", {"avro.schema": PERSON_SCHEMA})


def test_a_value_past_the_inference_sample(services):
    # inference reads whole blocks (512 KB) until it has 8,192 records: here the first four
    reader = services.enable("reader", CSVReader, {})
    data = b"n,pad\n" + (b"1," + b"p" * 200 + b"\n") * 30_000 + b"x,p\n"
    with pytest.raises(MalformedRecordError, match=r"^record 30001, field 'n': value 'x' does not convert to int$"):
        read(reader, data)


def test_other_malformed_content(services):
    reader = services.enable("reader", CSVReader, {})
    with pytest.raises(MalformedRecordError, match="the header names column 'a' more than once"):
        read(reader, b"a,b,a\n1,2,3\n")
    with pytest.raises(MalformedRecordError, match="^line 2: the content is not UTF-8 text"):
        read(reader, b"name\nJos\xe9\n")
    with pytest.raises(MalformedRecordError, match="a record is longer than 512 KB, the most a CSV record may be"):
        read(reader, b"a,b\n1,2\n" + b"x" * 3_000_000 + b",3\n")
    with pytest.raises(MalformedRecordError, match="'Schema Text' is not a valid Avro record schema"):
        read(services.enable("text", CSVReader, TEXT), PEOPLE, {"avro.schema": '{"type": "record"}'})


def test_empty_content(services):
    reader = services.enable("reader", CSVReader, {})
    assert read(reader, b"") == (RecordSchema.from_arrow(pa.schema([])), [])
    schema, rows = read(reader, b"a,b\n")
    assert schema.field_names == ["a", "b"] and rows == []


# -- writing ----------------------------------------------------------------------------------

QUOTING = RecordSchema.from_avro({"type": "record", "name": "q", "fields": [
    {"name": "text", "type": ["null", "string"]}, {"name": "n", "type": ["null", "double"]}]})
QUOTING_ROWS = [{"text": None, "n": 1.0}, {"text": "", "n": None}, {"text": "plain", "n": 2.5},
                {"text": "a,b", "n": 3.0}, {"text": 'say "hi"', "n": 4.0}, {"text": "two\nlines", "n": 5.0},
                {"text": "#tag", "n": 6.0}, {"text": "back\\slash", "n": 7.0}]


def test_quote_minimal_as_commons_csv(services):
    writer = services.enable("writer", CSVRecordSetWriter, {"Trim Fields": "false"})
    data, result = write(writer, QUOTING, table(QUOTING, QUOTING_ROWS))
    assert data == (b'text,n\n"",1.0\n"",\nplain,2.5\n"a,b",3.0\n"say \\"hi\\"",4.0\n"two\nlines",5.0\n"#tag",6.0\n'
                    b'"back\\\\slash",7.0\n')
    assert result.record_count == 8 and result.attributes == {"mime.type": "text/csv", "record.count": "8"}
    reader = services.enable("reader", CSVReader, {"Trim Fields": "false"})
    assert read(reader, data)[1][2:] == QUOTING_ROWS[2:]  # what the writer quotes, the reader reads back


def test_other_quote_modes_and_layout(services):
    rows = table(QUOTING, QUOTING_ROWS[2:4])
    every = services.enable("all", CSVRecordSetWriter, {"Quote Mode": "ALL"})
    assert write(every, QUOTING, rows)[0] == b'"text","n"\n"plain","2.5"\n"a,b","3.0"\n'
    non_numeric = services.enable("non_numeric", CSVRecordSetWriter, {"Quote Mode": "NON_NUMERIC"})
    assert write(non_numeric, QUOTING, rows)[0] == b'"text","n"\n"plain",2.5\n"a,b",3.0\n'
    escaped = services.enable("none", CSVRecordSetWriter, {"Quote Mode": "NONE"})
    assert write(escaped, QUOTING, table(QUOTING, [{"text": "a,b\nc", "n": 1.0}]))[0] == b"text,n\na\\,b\\nc,1.0\n"
    layout = services.enable("layout", CSVRecordSetWriter, {
        "Value Separator": ";", "Record Separator": "\\r\\n", "Include Trailing Delimiter": "true",
        "Null String": "NULL", "Include Header Line": "false"})
    assert write(layout, QUOTING, table(QUOTING, QUOTING_ROWS[:3]))[0] == b"NULL;1.0;\r\n;NULL;\r\nplain;2.5;\r\n"
    rfc = services.enable("rfc", CSVRecordSetWriter, {"CSV Format": "rfc-4180"})
    assert write(rfc, QUOTING, table(QUOTING, [QUOTING_ROWS[4]]))[0] == b'text,n\r\n"say ""hi""",4.0\r\n'


def test_header_without_records_and_the_avro_schema_attribute(services):
    writer = services.enable("writer", CSVRecordSetWriter, {"Schema Write Strategy": "full-schema-attribute"})
    data, result = write(writer, QUOTING)
    assert data == b"text,n\n" and result.record_count == 0
    assert json.loads(result.attributes["avro.schema"]) == QUOTING.avro
    assert result.attributes["record.count"] == "0"


def test_writer_schema_from_schema_text(services):
    writer = services.enable("writer", CSVRecordSetWriter, {**TEXT, "Schema Text": json.dumps({
        "type": "record", "name": "r", "fields": [{"name": "n", "type": "long"}, {"name": "extra", "type": ["null", "string"]}]})})
    data, _ = write(writer, QUOTING, table(QUOTING, [{"text": "x", "n": 2.0}]))
    assert data == b"n,extra\n2,\n"
    with pytest.raises(MalformedRecordError, match=r"record 1, field 'n': value 2.5 does not convert to long"):
        write(writer, QUOTING, table(QUOTING, [{"text": "x", "n": 2.5}]))


def test_writer_character_set(services):
    writer = services.enable("writer", CSVRecordSetWriter, {"Character Set": "UTF-16"})
    schema = RecordSchema.from_arrow(pa.schema([("name", pa.string())]))
    assert write(writer, schema, table(schema, [{"name": "Jos\xe9"}]))[0].decode("utf-16") == "name\nJos\xe9\n"


# -- round trip and streaming -----------------------------------------------------------------

def test_csv_json_csv_round_trip(services):
    from engine.services.record_json import JsonRecordSetWriter, JsonTreeReader
    csv_reader = services.enable("csv_reader", CSVReader, {"Date Format": "yyyy-MM-dd"})
    json_writer = services.enable("json_writer", JsonRecordSetWriter, {"Schema Write Strategy": "full-schema-attribute"})
    json_reader = services.enable("json_reader", JsonTreeReader, {**TEXT})
    csv_writer = services.enable("csv_writer", CSVRecordSetWriter, {"Date Format": "yyyy-MM-dd"})
    with csv_reader.create_reader(io.BytesIO(PEOPLE), {}) as records:
        as_json, result = write(json_writer, records.schema, *records.batches())
    with json_reader.create_reader(io.BytesIO(as_json), result.attributes) as records:
        assert records.schema == RecordSchema.from_avro(result.attributes["avro.schema"])
        back, _ = write(csv_writer, records.schema, *records.batches())
    assert back == PEOPLE.replace(b",3,false", b",3.0,false").replace(b"TRUE", b"true")


def test_content_repository_streams(services, tmp_path):
    # a session's content reader is unbuffered and its writer has only write() and close()
    reader = services.enable("reader", CSVReader, {"Date Format": "yyyy-MM-dd"})
    writer = services.enable("writer", CSVRecordSetWriter, {"Date Format": "yyyy-MM-dd"})
    data, result = copy_through_repository(tmp_path / "content", reader, writer, PEOPLE)
    assert data == PEOPLE.replace(b",3,false", b",3.0,false").replace(b"TRUE", b"true")
    assert result.attributes["record.count"] == "3"


@pytest.mark.slow
def test_a_200_mb_content_is_copied_in_bounded_memory(tmp_path):
    source, warmup = tmp_path / "big.csv", tmp_path / "small.csv"
    row = b'%d,name %d,%d.25,true,"quoted, text"\n'
    with open(source, "wb") as out:
        out.write(b"id,name,score,flag,note\n")
        n = 0
        while out.tell() < 200_000_000:
            out.write(b"".join(row % (i, i, i % 1000) for i in range(n, n + 10_000)))
            n += 10_000
    warmup.write_bytes(b"id,name,score,flag,note\n" + b"".join(row % (i, i, i) for i in range(1000)))
    outcome = copy_peak_growth("CSVReader", {}, "CSVRecordSetWriter", {}, source, warmup, tmp_path / "copy.csv")
    assert outcome["records"] == n and outcome["largest_batch"] <= BATCH_RECORDS
    assert outcome["growth"] < 100_000_000, outcome  # about 60 MB: pyarrow's read-ahead and one block's work
    assert (tmp_path / "copy.csv").stat().st_size > 190_000_000
