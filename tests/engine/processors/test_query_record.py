import json

import pytest

from engine.processors.query_record import QueryRecord
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner


def lines(records):
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def records_of(runner, flowfile):
    return [json.loads(line) for line in runner.content(flowfile).splitlines() if line.strip()]


def runner_for(tmp_path, services, **queries):
    properties = {"Record Reader": "reader", "Record Writer": "writer", **queries}
    return ProcessorTestRunner(QueryRecord, tmp_path, properties, services=services)


PEOPLE = [
    [{"name": "ann", "age": 31, "city": "oslo"}, {"name": "bob", "age": 17, "city": "oslo"},
     {"name": "cid", "age": 45, "city": "rome"}],
    [{"name": "dan", "age": 12, "city": "rome"}, {"name": "eve", "age": 60, "city": "rome"}],
    [{"name": "fay", "age": 20, "city": "lima"}],
]


def test_each_flowfile_gets_its_own_answer_to_each_query(tmp_path, spark_runtime, json_lines_services):
    queries = {"adults": 'SELECT "name" FROM FLOWFILE WHERE "age" >= 18',
               "per_city": "SELECT city, COUNT(*) AS n, MAX(age) AS oldest FROM FLOWFILE GROUP BY city ORDER BY city",
               "total": "SELECT COUNT(*) AS n FROM FLOWFILE"}
    with runner_for(tmp_path, json_lines_services, **queries) as runner:
        inputs = [runner.enqueue(lines(people), filename=f"people-{number}.json") for number, people in enumerate(PEOPLE)]
        runner.run()
        adults = runner.output("adults")
        assert [records_of(runner, flowfile) for flowfile in adults] == [
            [{"name": "ann"}, {"name": "cid"}], [{"name": "eve"}], [{"name": "fay"}]]
        assert [records_of(runner, flowfile) for flowfile in runner.output("per_city")] == [
            [{"city": "oslo", "n": 2, "oldest": 31}, {"city": "rome", "n": 1, "oldest": 45}],
            [{"city": "rome", "n": 2, "oldest": 60}], [{"city": "lima", "n": 1, "oldest": 20}]]
        assert [records_of(runner, flowfile) for flowfile in runner.output("total")] == [[{"n": 3}], [{"n": 2}], [{"n": 1}]]
        assert [f.attributes["record.count"] for f in adults] == ["2", "1", "1"]
        assert {f.attributes["mime.type"] for f in adults} == {"application/json"}
        assert {f.attributes["QueryRecord.Route"] for f in adults} == {"adults"}
        assert [f.attributes["filename"] for f in adults] == ["people-0.json", "people-1.json", "people-2.json"]
        originals = runner.output("original")
        assert [f.uuid for f in originals] == [f.uuid for f in inputs]
        assert {f.attributes["QueryRecord.Route"] for f in originals} == {"original"}
        assert runner.output("failure") == []
