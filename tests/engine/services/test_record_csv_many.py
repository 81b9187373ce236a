"""Many small CSV contents read and written together (``read_contents``, ``write_contents``, what
micro-batches use) give exactly what one reader or writer per content gives."""

from __future__ import annotations

import io
import json
import random

import numpy as np
import pyarrow as pa
import pytest

from engine.record.csv_batch import read_csv_contents
from engine.record.csv_format import CsvDialect
from engine.record.schema import RecordSchema
from engine.record.values import TemporalFormats, infer_text_type, infer_text_types
from engine.services.apis import RecordReaderFactory, RecordSetWriterFactory
from engine.services.record_csv import CSVReader, CSVRecordSetWriter

CELLS = ["1", "-7", "+3", "3000000000", "99999999999999999999", "2.5", ".5", "-0.25", "true", "FALSE", "x",
         "2024-01-02", "2024-01-02 03:04:05", "03:04:05", "", " 12 ", "a b", '"q, r"', '"line\nbreak"',
         '"say ""hi"""', "NULL"]
SCHEMA = json.dumps({"type": "record", "name": "r", "fields": [
    {"name": "a", "type": ["null", "long"]}, {"name": "b", "type": ["null", "string"]},
    {"name": "c", "type": ["null", "double"]}]})
HEADER_AND_SCHEMA = {"Schema Access Strategy": "schema-text-property", "Schema Text": SCHEMA,
                     "Treat First Line as Header": "true"}


def one_by_one(reader, contents, attributes):
    """What a reader per content gives: (schema, rows) or the error's message."""
    answers = []
    for content, attrs in zip(contents, attributes):
        try:
            with reader.create_reader(io.BytesIO(content), attrs) as records:
                answers.append((records.schema, records.read_all().to_pylist()))
        except Exception as error:
            answers.append(str(error))
    return answers


def together(reader, contents, attributes):
    """What ``read_contents`` gives, in the same form."""
    return [(answer[0], answer[1].to_pylist()) if isinstance(answer, tuple) else str(answer)
            for answer in reader.read_contents(contents, attributes)]


def random_contents(rnd: random.Random, count: int, kinds: list[list[str]]) -> list[bytes]:
    """``count`` contents with the header ``a,b,c``; each column's cells drawn from its own
    small pool per content, so that contents infer different types."""
    contents = []
    for _ in range(count):
        pools = [rnd.sample(kind, k=min(len(kind), rnd.randint(1, 3))) for kind in kinds]
        rows = [",".join(rnd.choice(pool) for pool in pools) for _ in range(rnd.randint(0, 6))]
        content = "a,b,c\n" + "".join(row + "\n" for row in rows)
        if rows and rnd.random() < 0.2:
            content = content[:-1]  # no line break after the last record
        contents.append(content.encode())
    return contents


@pytest.mark.parametrize("properties, readable", [
    pytest.param({}, True, id="inferred"),
    pytest.param({"Date Format": "yyyy-MM-dd", "Timestamp Format": "yyyy-MM-dd HH:mm:ss", "Time Format": "HH:mm:ss"},
                 True, id="temporal-formats"),
    pytest.param({"Schema Access Strategy": "csv-header-derived"}, True, id="header-derived"),
    pytest.param({"Null String": "NULL", "Trim Fields": "false"}, True, id="null-string"),
    pytest.param(HEADER_AND_SCHEMA, True, id="schema-text"),
    pytest.param({**HEADER_AND_SCHEMA, "Ignore CSV Header Column Names": "true"}, True, id="by-position"),
    # without a header line the schema's first field gets the header's "a": every content fails
    pytest.param({"Schema Access Strategy": "schema-text-property", "Schema Text": SCHEMA}, False, id="no-header"),
])
def test_many_contents_read_as_each_alone(services, properties, readable):
    reader = services.enable("reader", CSVReader, properties)
    rnd = random.Random(11)
    kinds = [CELLS[:8] + [""], CELLS, CELLS[5:12] + ["", "NULL"]]
    contents = random_contents(rnd, 300, kinds)
    attributes = [{"n": str(n)} for n in range(len(contents))]
    expected = one_by_one(reader, contents, attributes)
    assert together(reader, contents, attributes) == expected
    read = sum(isinstance(answer, tuple) for answer in expected)
    assert read >= 20 if readable else read == 0


def test_contents_the_batch_cannot_take_are_read_alone_with_their_errors(services):
    reader = services.enable("reader", CSVReader, {})
    contents = [
        b"a,b\n1,2\n",
        b'a,b\n1,"open\n',            # a quote left open swallows the boundary after it
        b"a,b\n3,4\n",
        b"a,b\n1,2,3\n",              # a record with a field too many
        b"a,a\n1,2\n",                # a column named twice
        b"",                          # no content at all
        b"a,b\n",                     # a header alone
        "\ufeffa,b\n5,6\n".encode(),  # a byte order mark
        b"x;y\n1;2\n",                # another header: read in its own group
        b'"a",b\n7,8\n',              # a quoted header
        b"a,b\r\n9,10\r\n",
        b"a,b\n1,x\\",                # ends with the escape character
        b"a,b\n\xff,1\n",             # not UTF-8
    ]
    attributes = [{}] * len(contents)
    expected = one_by_one(reader, contents, attributes)
    assert together(reader, contents, attributes) == expected
    assert isinstance(expected[3], str) and isinstance(expected[4], str)
    assert expected[2] == expected[0][:1] + ([{"a": 3, "b": 4}],)


def test_the_batch_reads_in_one_parse_and_gives_up_on_a_swallowed_boundary():
    dialect = CsvDialect()
    good = [b"a,b\n1,x\n", b"a,b\n2,y\n3,z\n"]
    answers = read_csv_contents(good, [dialect] * 2, [None] * 2, header=True, ignore_header_names=False,
                                strings=False, formats=TemporalFormats())
    assert [table.to_pylist() for _, table in answers] == [[{"a": 1, "b": "x"}], [{"a": 2, "b": "y"},
                                                                                 {"a": 3, "b": "z"}]]
    broken = [b'a,b\n1,"x\n', b"a,b\n2,y\n"]
    assert read_csv_contents(broken, [dialect] * 2, [None] * 2, header=True, ignore_header_names=False,
                             strings=False, formats=TemporalFormats()) == [None, None]


def test_a_value_that_does_not_convert_fails_only_its_content(services):
    reader = services.enable("reader", CSVReader, HEADER_AND_SCHEMA)
    contents = [b"a,b,c\n1,x,2.5\n", b"a,b,c\nnot-a-number,y,1\n", b"a,b,c\n3,z,\n"]
    answers = reader.read_contents(contents, [{}] * 3)
    assert answers[0][1].to_pylist() == [{"a": 1, "b": "x", "c": 2.5}]
    assert "not-a-number" in str(answers[1])
    assert answers[2][1].to_pylist() == [{"a": 3, "b": "z", "c": None}]


def test_segmented_inference_agrees_with_inferring_each_part():
    rnd = random.Random(5)
    formats = TemporalFormats(date="yyyy-MM-dd", time="HH:mm:ss", timestamp="yyyy-MM-dd HH:mm:ss")
    pool = [cell for cell in CELLS if not cell.startswith('"')] + [None, "2147483648", "-2147483648"]
    for _ in range(40):
        sizes = [rnd.randint(0, 5) for _ in range(rnd.randint(1, 30))]
        parts = [[rnd.choice(pool[:rnd.randint(1, len(pool))]) for _ in range(size)] for size in sizes]
        values = pa.array([value for part in parts for value in part], pa.string())
        segments = np.repeat(np.arange(len(parts), dtype=np.int32), sizes)
        for chosen in (TemporalFormats(), formats):
            assert infer_text_types(values, segments, len(parts), chosen) == \
                [infer_text_type(pa.array(part, pa.string()), chosen) for part in parts]
    # the shortcuts for columns of one kind
    whole = pa.array(["1", "2", "3", "4"])
    assert infer_text_types(whole, np.array([0, 0, 1, 1], np.int32), 2) == [pa.int32()] * 2
    assert infer_text_types(whole, np.array([0, 0, 0, 0], np.int32), 2) == [pa.int32(), pa.string()]
    assert infer_text_types(pa.array(["1", "5000000000"]), np.array([0, 1], np.int32), 2) == [pa.int32(), pa.int64()]
    assert infer_text_types(pa.array(["1.5", "2"]), np.array([0, 1], np.int32), 2) == [pa.float64(), pa.int32()]


def records(rows: list[dict], schema: RecordSchema) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema.arrow)


@pytest.mark.parametrize("properties", [
    {}, {"Include Header Line": "false"}, {"Quote Mode": "ALL", "Value Separator": "${separator}"},
    {"Character Set": "UTF-16"}, {"Schema Write Strategy": "full-schema-attribute", "Null String": "\\N"},
])
def test_many_outputs_written_as_each_alone(services, properties):
    writer = services.enable("writer", CSVRecordSetWriter, properties)
    schema = RecordSchema.from_avro(SCHEMA)
    rnd = random.Random(2)
    whole = records([{"a": rnd.choice([None, 1, -5, 10**12]), "b": rnd.choice([None, "", "x,y", ' q"', "é", "a\nb"]),
                      "c": rnd.choice([None, 0.5, 2.0, -1e-7])} for _ in range(400)], schema)
    cuts = sorted(rnd.sample(range(1, 400), 60))
    tables = [whole.slice(start, end - start) for start, end in zip([0] + cuts, cuts + [400])] + [whole.slice(0, 0)]
    attributes = [{"separator": rnd.choice([",", ";"])} for _ in tables]
    expected = []
    for table, attrs in zip(tables, attributes):
        out = io.BytesIO()
        alone = writer.create_writer(out, writer.get_schema(attrs, schema), attrs)
        alone.write_batch(table)
        result = alone.finish()
        expected.append((out.getvalue(), result.record_count, result.attributes))
    answers = writer.write_contents(tables, schema, attributes)
    assert [(bytes(content), result.record_count, result.attributes) for content, result in answers] == expected


def test_the_default_read_and_write_of_many_is_one_by_one(services):
    class Plain(CSVReader):
        read_contents = RecordReaderFactory.read_contents

    class PlainWriter(CSVRecordSetWriter):
        write_contents = RecordSetWriterFactory.write_contents

    reader = services.enable("reader", Plain, {})
    contents = [b"a\n1\n", b"a,a\n1,2\n"]
    answers = reader.read_contents(contents, [{}, {}])
    assert answers[0][1].to_pylist() == [{"a": 1}] and "more than once" in str(answers[1])
    writer = services.enable("writer", PlainWriter, {})
    schema = RecordSchema.from_arrow(pa.schema([("a", pa.int32())]))
    [(content, result)] = writer.write_contents([answers[0][1]], schema, [{}])
    assert content == b"a\n1\n" and result.record_count == 1
