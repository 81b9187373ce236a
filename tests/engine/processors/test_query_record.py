import json

import pytest

import engine.processors._records as records_module
from engine.processors.query_record import QueryRecord
from engine.spark.runtime import node_runtime
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


@pytest.mark.parametrize("small_content", [1 << 20, 64], ids=["read-together", "larger-ones-read-alone"])
def test_each_flowfile_gets_its_own_answer_to_each_query(tmp_path, spark_runtime, json_services, monkeypatch,
                                                         small_content):
    # with 64 B, the first two FlowFiles are read through a reader of their own, the third with the others
    monkeypatch.setattr(records_module, "SMALL_CONTENT", small_content)
    queries = {"adults": 'SELECT "name" FROM FLOWFILE WHERE "age" >= 18',
               "per_city": "SELECT city, COUNT(*) AS n, MAX(age) AS oldest FROM FLOWFILE GROUP BY city ORDER BY city",
               "total": "SELECT COUNT(*) AS n FROM FLOWFILE"}
    with runner_for(tmp_path, json_services, **queries) as runner:
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


def answers(runner, relationship):
    return [records_of(runner, flowfile) for flowfile in runner.output(relationship)]


def test_limit_offset_windows_and_distinct_apply_per_flowfile(tmp_path, spark_runtime, json_services):
    queries = {"youngest": "SELECT name FROM FLOWFILE ORDER BY age LIMIT 1",
               "first_two": "SELECT name FROM FLOWFILE LIMIT 2",
               "second": "SELECT name, age FROM FLOWFILE ORDER BY 2 DESC LIMIT 1 OFFSET 1",
               "ranked": "SELECT name, ROW_NUMBER() OVER (ORDER BY age DESC) AS rank, "
                         "SUM(age) OVER (PARTITION BY city) AS city_ages FROM FLOWFILE ORDER BY rank",
               "cities": "SELECT DISTINCT city FROM FLOWFILE ORDER BY city",
               "busiest": "SELECT city, COUNT(*) AS n FROM FLOWFILE GROUP BY city ORDER BY n DESC, city LIMIT 1"}
    with runner_for(tmp_path, json_services, **queries) as runner:
        for people in PEOPLE:
            runner.enqueue(lines(people))
        runner.run()
        assert answers(runner, "youngest") == [[{"name": "bob"}], [{"name": "dan"}], [{"name": "fay"}]]
        assert answers(runner, "first_two") == [[{"name": "ann"}, {"name": "bob"}],
                                                [{"name": "dan"}, {"name": "eve"}], [{"name": "fay"}]]
        assert answers(runner, "second") == [[{"name": "ann", "age": 31}], [{"name": "dan", "age": 12}], []]
        assert answers(runner, "ranked") == [
            [{"name": "cid", "rank": 1, "city_ages": 45}, {"name": "ann", "rank": 2, "city_ages": 48},
             {"name": "bob", "rank": 3, "city_ages": 48}],
            [{"name": "eve", "rank": 1, "city_ages": 72}, {"name": "dan", "rank": 2, "city_ages": 72}],
            [{"name": "fay", "rank": 1, "city_ages": 20}]]
        assert answers(runner, "cities") == [[{"city": "oslo"}, {"city": "rome"}], [{"city": "rome"}], [{"city": "lima"}]]
        assert answers(runner, "busiest") == [[{"city": "oslo", "n": 2}], [{"city": "rome", "n": 2}],
                                              [{"city": "lima", "n": 1}]]


def test_queries_that_cannot_be_rewritten_run_once_per_flowfile(tmp_path, spark_runtime, json_services):
    queries = {"both": "SELECT name FROM FLOWFILE WHERE age < 18 UNION ALL SELECT city FROM FLOWFILE WHERE age > 40",
               "pairs": "SELECT a.name AS older, b.name AS younger FROM FLOWFILE a JOIN FLOWFILE b "
                        "ON a.city = b.city AND a.age > b.age ORDER BY older, younger",
               "above_average": "SELECT name FROM FLOWFILE WHERE age > (SELECT AVG(age) FROM FLOWFILE)"}
    with runner_for(tmp_path, json_services, **queries) as runner:
        for people in PEOPLE:
            runner.enqueue(lines(people))
        runner.run()
        assert answers(runner, "both") == [[{"name": "bob"}, {"name": "rome"}], [{"name": "dan"}, {"name": "rome"}], []]
        assert answers(runner, "pairs") == [[{"older": "ann", "younger": "bob"}], [{"older": "eve", "younger": "dan"}], []]
        assert answers(runner, "above_average") == [[{"name": "cid"}], [{"name": "eve"}], []]


def test_an_aggregate_answers_for_a_flowfile_without_records(tmp_path, spark_runtime, json_services):
    schema = json.dumps({"type": "record", "name": "person", "fields": [
        {"name": "name", "type": "string"}, {"name": "age", "type": "int"}]})
    services = dict(json_services, reader=("JsonTreeReader", {"Schema Access Strategy": "schema-text-property", "Schema Text": schema}))
    queries = {"count": "SELECT COUNT(*) AS n, MAX(age) AS oldest FROM FLOWFILE",
               "names": "SELECT name FROM FLOWFILE"}
    with runner_for(tmp_path, services, **queries) as runner:
        runner.enqueue(lines([{"name": "ann", "age": 31}]))
        runner.enqueue(b"")
        runner.run()
        assert answers(runner, "count") == [[{"n": 1, "oldest": 31}], [{"n": 0, "oldest": None}]]
        assert answers(runner, "names") == [[{"name": "ann"}], []]
        assert [f.attributes["record.count"] for f in runner.output("names")] == ["1", "0"]


def test_zero_record_answers_are_dropped_when_asked(tmp_path, spark_runtime, json_services):
    properties = {"Record Reader": "reader", "Record Writer": "writer", "Include Zero Record FlowFiles": "false",
                  "old": "SELECT * FROM FLOWFILE WHERE age > 50"}
    with ProcessorTestRunner(QueryRecord, tmp_path, properties, services=json_services) as runner:
        for people in PEOPLE:
            runner.enqueue(lines(people))
        runner.run()
        assert answers(runner, "old") == [[{"name": "eve", "age": 60, "city": "rome"}]]
        assert len(runner.output("original")) == 3


def test_query_text_may_depend_on_attributes(tmp_path, spark_runtime, json_services):
    with runner_for(tmp_path, json_services, chosen="SELECT name FROM FLOWFILE WHERE city = '${wanted}'") as runner:
        runner.enqueue(lines(PEOPLE[0]), wanted="oslo")
        runner.enqueue(lines(PEOPLE[1]), wanted="rome")
        runner.enqueue(lines(PEOPLE[0]), wanted="rome")
        runner.run()
        assert answers(runner, "chosen") == [[{"name": "ann"}, {"name": "bob"}], [{"name": "dan"}, {"name": "eve"}],
                                             [{"name": "cid"}]]


def test_an_unreadable_flowfile_fails_alone(tmp_path, spark_runtime, json_services):
    with runner_for(tmp_path, json_services, adults="SELECT name FROM FLOWFILE WHERE age >= 18") as runner:
        runner.enqueue(lines(PEOPLE[0]))
        broken = runner.enqueue(b'{"name": "x", "age": 3}\n{not json\n')
        runner.enqueue(lines(PEOPLE[2]))
        runner.run()
        (failed,) = runner.output("failure")
        assert failed.uuid == broken.uuid
        assert failed.attributes["QueryRecord.Route"] == "failure"
        assert failed.attributes["record.error.message"].startswith("cannot read its records")
        assert runner.content(failed) == b'{"name": "x", "age": 3}\n{not json\n'
        assert answers(runner, "adults") == [[{"name": "ann"}, {"name": "cid"}], [{"name": "fay"}]]
        assert len(runner.output("original")) == 2


def test_a_query_spark_refuses_fails_the_flowfiles_it_ran_for(tmp_path, spark_runtime, json_services):
    with runner_for(tmp_path, json_services, rich="SELECT name FROM FLOWFILE WHERE salary > 10") as runner:
        with_salary = runner.enqueue(lines([{"name": "gus", "salary": 50}, {"name": "hal", "salary": 5}]))
        without = [runner.enqueue(lines(people)) for people in PEOPLE[:2]]
        runner.run()
        assert answers(runner, "rich") == [[{"name": "gus"}]]
        assert [f.uuid for f in runner.output("original")] == [with_salary.uuid]
        failed = runner.output("failure")
        assert [f.uuid for f in failed] == [f.uuid for f in without]
        assert all("salary" in f.attributes["record.error.message"] for f in failed)


def test_queries_are_validated(tmp_path, json_services):
    for query, problem in [("SELECT * FROM other", "the only table is FLOWFILE"),
                           ("SELECT * FROM parquet.`/etc`", "the only table is FLOWFILE"),
                           ("SELECT reflect('java.lang.System', 'exit', 0) FROM FLOWFILE", "reflect is not allowed"),
                           ("DROP TABLE x", "only SELECT queries are allowed"),
                           ("SELECT FROM WHERE", "not valid SQL")]:
        with runner_for(tmp_path, json_services, q=query) as runner:
            problems = runner.validate()
            assert any(problem in text for text in problems), (query, problems)
    with ProcessorTestRunner(QueryRecord, tmp_path, {"Record Reader": "reader", "Record Writer": "writer"},
                             services=json_services) as runner:
        assert any("at least one user-added property" in text for text in runner.validate())


def test_every_output_is_a_child_of_its_flowfile(tmp_path, spark_runtime, json_services):
    queries = {"adults": "SELECT * FROM FLOWFILE WHERE age >= 18", "count": "SELECT COUNT(*) AS n FROM FLOWFILE"}
    with runner_for(tmp_path, json_services, **queries) as runner:
        inputs = [runner.enqueue(lines(people)) for people in PEOPLE]
        runner.run()
        forks = runner.events(event_type=E.FORK)
        assert sorted(event.parent_uuids for event in forks) == sorted((f.uuid,) for f in inputs)
        for event in forks:
            (parent,) = event.parent_uuids
            number = [f.uuid for f in inputs].index(parent)
            children = {runner.output("adults")[number].uuid, runner.output("count")[number].uuid}
            assert set(event.child_uuids) == children
        routes = runner.events(event_type=E.ROUTE)
        assert sorted(event.relationship for event in routes) == ["adults"] * 3 + ["count"] * 3


SLOW = "SELECT name, aggregate(sequence(1, 5000000), 0L, (total, x) -> total + x) AS busy FROM FLOWFILE"


def jvm_pid(runtime):
    """The pid of the JVM the runtime's local Spark runs in (started by this process)."""
    from pyspark import SparkContext

    runtime.session()
    return SparkContext._gateway.proc.pid


def kill_when_a_job_runs(runtime):
    """Kill the runtime's JVM as soon as it runs a job (in a thread); returns the thread."""
    import os
    import signal
    import threading
    import time

    pid = jvm_pid(runtime)
    tracker = runtime.session().sparkContext.statusTracker()

    def kill():
        deadline = time.monotonic() + 120
        while not tracker.getActiveJobsIds() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(pid, signal.SIGKILL)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def test_spark_killed_mid_batch_loses_nothing(tmp_path, spark_runtime, json_services):
    with runner_for(tmp_path, json_services, busy=SLOW) as runner:
        inputs = [runner.enqueue(lines(people)) for people in PEOPLE]
        killer = kill_when_a_job_runs(node_runtime())
        runner.run(stop=False)
        killer.join()
        assert runner.output("busy") == [] and runner.output("failure") == [] and runner.output("original") == []
        waiting = runner.input_flowfiles()
        assert sorted(f.uuid for f in waiting) == sorted(f.uuid for f in inputs)
        assert all(f.penalty_expiration > runner.clock.time() * 1000 for f in waiting)
        assert runner.events(event_type=E.FORK) == []

        runner.clock.advance(60)
        runner.run()
        assert [[record["name"] for record in answer] for answer in answers(runner, "busy")] == [
            ["ann", "bob", "cid"], ["dan", "eve"], ["fay"]]
        assert [f.uuid for f in runner.output("original")] == [f.uuid for f in inputs]


def test_a_micro_batch_takes_at_most_its_size_in_flowfiles_or_bytes(tmp_path, spark_runtime, json_services,
                                                                     monkeypatch):
    """Each Spark job serves one micro-batch; a trigger takes up to four of them (their jobs run
    while the next is read), so that one trigger here answers every FlowFile."""
    served = []
    job = QueryRecord.job

    def counting(self, runtime, spark, table, group):
        served.append(len(group))
        return job(self, runtime, spark, table, group)

    monkeypatch.setattr(QueryRecord, "job", counting)
    properties = {"Record Reader": "reader", "Record Writer": "writer", "Micro-Batch Size": "2",
                  "all": "SELECT * FROM FLOWFILE"}
    with ProcessorTestRunner(QueryRecord, tmp_path, properties, services=json_services) as runner:
        for people in PEOPLE:
            runner.enqueue(lines(people))
        runner.run(stop=False)
        assert served == [2, 1] and len(runner.output("original")) == 3 and not runner.input_flowfiles()
    served.clear()
    properties.update({"Micro-Batch Size": "1000", "Micro-Batch Data Size": "10 B"})
    with ProcessorTestRunner(QueryRecord, tmp_path, properties, services=json_services) as runner:
        for people in PEOPLE * 2:
            runner.enqueue(lines(people))
        runner.run(stop=False)
        # each FlowFile is larger than the data size: a micro-batch of its own, streamed alone
        assert served == [] and len(runner.output("original")) == 4 and len(runner.input_flowfiles()) == 2


def test_times_and_unsigned_integers_reach_spark(tmp_path, spark_runtime):
    import datetime
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.engine.processors.records import PARQUET

    records = pa.table({"at": pa.array([datetime.time(1, 2, 3), datetime.time(4, 5, 6)], pa.time32("ms")),
                        "n": pa.array([1, 2], pa.uint32()),
                        "inner": pa.array([{"t": datetime.time(7, 8, 9)}, None], pa.struct([("t", pa.time32("s"))]))})
    out = io.BytesIO()
    pq.write_table(records, out)
    properties = {"Record Reader": "reader", "Record Writer": "writer", "late": "SELECT at, n FROM FLOWFILE WHERE n > 1"}
    with ProcessorTestRunner(QueryRecord, tmp_path, properties, services=PARQUET.services()) as runner:
        runner.enqueue(out.getvalue())
        runner.run()
        assert runner.output("failure") == []
        (late,) = runner.output("late")
        assert PARQUET.decode(runner.content(late)) == [{"at": datetime.time(4, 5, 6), "n": 2}]


def test_nested_fields_arrays_and_generators_per_flowfile(tmp_path, spark_runtime, json_services):
    queries = {"cities": "SELECT name, home.city AS city, tags[0] AS first_tag FROM FLOWFILE",
               "tags": "SELECT name, explode(tags) AS tag FROM FLOWFILE",
               "distinct": "SELECT DISTINCT * FROM FLOWFILE"}
    first = [{"name": "ann", "home": {"city": "oslo"}, "tags": ["a", "b"]}] * 2
    second = [{"name": "bob", "home": {"city": "rome"}, "tags": ["c"]}]
    with runner_for(tmp_path, json_services, **queries) as runner:
        runner.enqueue(lines(first))
        runner.enqueue(lines(second))
        runner.run()
        assert answers(runner, "cities") == [[{"name": "ann", "city": "oslo", "first_tag": "a"}] * 2,
                                             [{"name": "bob", "city": "rome", "first_tag": "c"}]]
        assert answers(runner, "tags") == [[{"name": "ann", "tag": tag} for tag in "abab"],
                                           [{"name": "bob", "tag": "c"}]]
        assert answers(runner, "distinct") == [first[:1], second]


STREAMED = {"Micro-Batch Data Size": "1 B"}


def test_a_flowfile_larger_than_a_micro_batch_is_streamed_alone(tmp_path, spark_runtime, json_services, monkeypatch):
    streamed = []
    original_stream = QueryRecord.stream

    def spy(self, context, session, runtime, spark, flowfile, *rest):
        streamed.append(flowfile.uuid)
        return original_stream(self, context, session, runtime, spark, flowfile, *rest)

    monkeypatch.setattr(QueryRecord, "stream", spy)
    queries = {"adults": "SELECT name FROM FLOWFILE WHERE age >= 18 ORDER BY age DESC",
               "count": "SELECT COUNT(*) AS n FROM FLOWFILE", "none": "SELECT * FROM FLOWFILE WHERE age > 100",
               "rich": "SELECT name FROM FLOWFILE WHERE salary > 10"}
    properties = {"Record Reader": "reader", "Record Writer": "writer", "Include Zero Record FlowFiles": "false",
                  **STREAMED, **queries}
    with ProcessorTestRunner(QueryRecord, tmp_path, properties, services=json_services) as runner:
        good = runner.enqueue(lines([dict(person, salary=20) for person in PEOPLE[0]]))
        missing = runner.enqueue(lines(PEOPLE[1]))
        broken = runner.enqueue(b'{"name": "x"}\n{oops\n')
        runner.run(3)
        assert streamed == [good.uuid, missing.uuid], "the broken one fails before its records are staged"
        assert answers(runner, "adults") == [[{"name": "cid"}, {"name": "ann"}]]
        assert answers(runner, "count") == [[{"n": 3}]]
        assert runner.output("none") == []
        assert answers(runner, "rich") == [[{"name": "ann"}, {"name": "bob"}, {"name": "cid"}]]
        assert [f.uuid for f in runner.output("original")] == [good.uuid]
        failed = {f.uuid: f.attributes["record.error.message"] for f in runner.output("failure")}
        assert set(failed) == {missing.uuid, broken.uuid}
        assert "salary" in failed[missing.uuid]
        (fork,) = runner.events(event_type=E.FORK)
        assert fork.parent_uuids == (good.uuid,) and len(fork.child_uuids) == 3


@pytest.mark.slow
def test_a_280_mb_flowfile_is_queried_in_bounded_memory(tmp_path, spark_runtime):
    import threading

    import psutil

    from tests.engine.processors.records import CSV

    rows = 8_000_000
    content = ("id,name,amount\n" + "".join(f"{n},name-{n % 997}-of-the-records,{n % 1000}\n"
                                             for n in range(rows))).encode()
    assert len(content) > 280_000_000
    properties = {"Record Reader": "reader", "Record Writer": "writer",
                  "big": "SELECT id, name FROM FLOWFILE WHERE amount >= 500"}
    with ProcessorTestRunner(QueryRecord, tmp_path, properties, services=CSV.services(),
                             auto_terminate=("original",)) as runner:
        runner.enqueue(content)
        size = len(content)
        del content
        process = psutil.Process()
        base = peak = process.memory_info().rss
        done = threading.Event()

        def watch():
            nonlocal peak
            while not done.is_set():
                peak = max(peak, process.memory_info().rss)
                done.wait(0.02)

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            runner.run()
        finally:
            done.set()
            watcher.join()
        (answer,) = runner.output("big")
        assert answer.attributes["record.count"] == str(rows // 2)
        assert peak - base < size / 2, f"memory grew by {(peak - base) >> 20} MiB for {size >> 20} MiB of content"
