"""Every record processor on CSV, JSON, Avro and Parquet content, with known answers: the
FlowFiles are written and the outputs read back with the formats' own libraries."""

import pytest

from engine.processors.convert_record import ConvertRecord
from engine.processors.merge_record import MergeRecord
from engine.processors.partition_record import PartitionRecord
from engine.processors.query_record import QueryRecord
from engine.processors.update_record import UpdateRecord
from engine.testing import ProcessorTestRunner
from tests.engine.processors.records import FORMATS, JSON, PARQUET

PEOPLE = [
    [{"name": "ann", "age": 31, "city": "oslo", "score": 1.5}, {"name": "bob", "age": 17, "city": "oslo", "score": 2.0},
     {"name": "cid", "age": 45, "city": "rome", "score": 0.25}],
    [{"name": "dan", "age": 12, "city": "rome", "score": 3.0}, {"name": "eve", "age": 60, "city": "rome", "score": 4.5}],
]


def run(processor, tmp_path, record_format, properties, inputs=PEOPLE, iterations=1, writer_format=None):
    """Run ``processor`` on ``inputs`` (lists of records) written in ``record_format``; returns the
    runner (still open: the caller closes it) and the inputs as FlowFiles."""
    services = dict(record_format.services(), writer=(writer_format or record_format).writer)
    runner = ProcessorTestRunner(processor, tmp_path, {"Record Reader": "reader", "Record Writer": "writer",
                                                       **properties}, services=services)
    flowfiles = [runner.enqueue(record_format.encode(records), filename=f"in-{n}") for n, records in enumerate(inputs)]
    runner.run(iterations, stop=False)
    return runner, flowfiles


def decoded(runner, relationship, record_format):
    return [record_format.decode(runner.content(flowfile)) for flowfile in runner.output(relationship)]


@pytest.mark.parametrize("record_format", FORMATS, ids=str)
def test_query_record(tmp_path, spark_runtime, record_format):
    queries = {"adults": "SELECT name, age FROM FLOWFILE WHERE age >= 18 ORDER BY age",
               "cities": "SELECT city, COUNT(*) AS n, SUM(score) AS total FROM FLOWFILE GROUP BY city ORDER BY city"}
    runner, inputs = run(QueryRecord, tmp_path, record_format, queries)
    with runner:
        assert decoded(runner, "adults", record_format) == [
            [{"name": "ann", "age": 31}, {"name": "cid", "age": 45}], [{"name": "eve", "age": 60}]]
        assert decoded(runner, "cities", record_format) == [
            [{"city": "oslo", "n": 2, "total": 3.5}, {"city": "rome", "n": 1, "total": 0.25}],
            [{"city": "rome", "n": 2, "total": 7.5}]]
        assert [f.attributes["record.count"] for f in runner.output("adults")] == ["2", "1"]
        assert len(runner.output("original")) == 2 and runner.output("failure") == []


@pytest.mark.parametrize("record_format", FORMATS, ids=str)
def test_convert_record(tmp_path, record_format):
    runner, inputs = run(ConvertRecord, tmp_path, record_format, {})
    with runner:
        assert decoded(runner, "success", record_format) == PEOPLE
        assert [f.uuid for f in runner.output("success")] == [f.uuid for f in inputs]
    runner, _ = run(ConvertRecord, tmp_path, record_format, {}, writer_format=JSON)
    with runner:
        assert decoded(runner, "success", JSON) == PEOPLE
        assert {f.attributes["mime.type"] for f in runner.output("success")} == {"application/json"}


def test_convert_record_csv_to_parquet(tmp_path):
    from tests.engine.processors.records import CSV

    runner, _ = run(ConvertRecord, tmp_path, CSV, {}, writer_format=PARQUET)
    with runner:
        assert decoded(runner, "success", PARQUET) == PEOPLE
        assert [f.attributes["record.count"] for f in runner.output("success")] == ["3", "2"]


@pytest.mark.parametrize("record_format", FORMATS, ids=str)
def test_partition_record(tmp_path, spark_runtime, record_format):
    runner, _ = run(PartitionRecord, tmp_path, record_format, {"city": "/city"})
    with runner:
        assert decoded(runner, "success", record_format) == [
            [PEOPLE[0][0], PEOPLE[0][1]], [PEOPLE[0][2]], PEOPLE[1]]
        assert [f.attributes["city"] for f in runner.output("success")] == ["oslo", "rome", "rome"]


@pytest.mark.parametrize("record_format", FORMATS, ids=str)
def test_update_record(tmp_path, spark_runtime, record_format):
    runner, _ = run(UpdateRecord, tmp_path, record_format, {"/city": "paris"}, inputs=PEOPLE[:1])
    with runner:
        assert decoded(runner, "success", record_format) == [
            [dict(person, city="paris") for person in PEOPLE[0]]]
    properties = {"Replacement Value Strategy": "record-path-value", "/name": "toUpperCase(/name)"}
    runner, _ = run(UpdateRecord, tmp_path, record_format, properties)
    with runner:
        assert decoded(runner, "success", record_format) == [
            [dict(person, name=person["name"].upper()) for person in people] for people in PEOPLE]


@pytest.mark.parametrize("record_format", FORMATS, ids=str)
def test_merge_record(tmp_path, record_format):
    runner, inputs = run(MergeRecord, tmp_path, record_format, {}, inputs=PEOPLE + [PEOPLE[0][:1]], iterations=2)
    with runner:
        assert decoded(runner, "merged", record_format) == [PEOPLE[0] + PEOPLE[1] + PEOPLE[0][:1]]
        (merged,) = runner.output("merged")
        assert merged.attributes["record.count"] == "6" and merged.attributes["merge.count"] == "3"
