"""Provenance analytics on a real local Spark: the ready questions give known answers over events
exported by two nodes; the scope keeps out every other component's events; results are capped;
a wrong query, SQL on files, a query past its time limit and a query given up fail as such; a
Spark whose JVM dies fails the query as unavailable, and the next query starts a new one."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from engine.provenance import ProvenanceConfig, ProvenanceEvent, ProvenanceEventType as E, ProvenanceRepository
from engine.provenance.export import ProvenanceExporter
from engine.spark.provenance_query import QueryInterrupted, run_query
from engine.spark.runtime import SparkQueryError
from engine.spark.provenance_sql import QUESTIONS, check_read_only
from tests.engine.provenance.conftest import claim

REPO_ROOT = Path(__file__).resolve().parents[3]
HOUR = 3600_000
#: Half past the hour three hours and one hour ago: each event lies well inside its hour.
NOW = int(time.time() * 1000) // HOUR * HOUR
T1 = NOW - 3 * HOUR + HOUR // 2
T2 = NOW - HOUR + HOUR // 2
OLD = NOW - 100 * HOUR
MINE = frozenset({"gen", "route", "log", "conn"})


def hour(millis: int) -> str:
    moment = datetime.fromtimestamp(millis // HOUR * 3600, timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def event(kind: E, millis: int, uuid: str, component: str, component_type: str, *, size: int = 0,
          duration: int = -1, details: str | None = None) -> ProvenanceEvent:
    return ProvenanceEvent(kind, millis, uuid, component, component_type, millis, millis - 500,
                           previous_attributes={"uuid": uuid, "filename": f"{uuid}.txt"},
                           content_claim=claim(uuid, length=size) if size else None, details=details,
                           duration=duration)


NODE_1 = [
    event(E.CREATE, T1, "ff-1", "gen", "GenerateFlowFile", size=10, duration=1),
    event(E.CREATE, T1 + 1, "ff-2", "gen", "GenerateFlowFile", size=20, duration=1),
    event(E.CREATE, T1 + 2, "ff-3", "gen", "GenerateFlowFile", size=30, duration=1),
    event(E.ROUTE, T1 + 10, "ff-1", "route", "RouteOnAttribute", size=10, duration=100),
    event(E.ATTRIBUTES_MODIFIED, T1 + 11, "ff-1", "route", "RouteOnAttribute", size=10, duration=200),
    event(E.ROUTE, T1 + 12, "ff-2", "route", "RouteOnAttribute", size=20, duration=300),
    event(E.DROP, T1 + 20, "ff-1", "log", "LogAttribute", size=10, duration=5,
          details="Auto-Terminated by success Relationship"),
    event(E.DROP, T1 + 21, "ff-2", "log", "LogAttribute", size=20, duration=5,
          details="Auto-Terminated by success Relationship"),
    event(E.DROP, T1 + 22, "ff-3", "conn", "Connection", size=30, details="FlowFile Queue emptied by alice"),
    event(E.CREATE, T1 + 30, "ff-9", "other", "GenerateFlowFile", size=999, duration=50),
    event(E.CREATE, OLD, "ff-old", "gen", "GenerateFlowFile", size=7, duration=1),
]
NODE_2 = [
    event(E.CREATE, T2, "ff-4", "gen", "GenerateFlowFile", size=40, duration=1),
    event(E.EXPIRE, T2 + 5, "ff-4", "conn", "Connection", size=40, details="Expiration Threshold = 1 min"),
]


@pytest.fixture
def runtime(spark_runtime):
    """The test session's Spark (``tests.engine.spark.fixtures``)."""
    return spark_runtime


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[str]:
    root = tmp_path_factory.mktemp("analytics")
    found = []
    for node, events in (("n1", NODE_1), ("n2", NODE_2)):
        with ProvenanceRepository(root / node / "prov", ProvenanceConfig(journal_count=1)) as repo:
            repo.register_events(events)
            names = {"gen": ("Generate", "root"), "route": ("Route", "root"), "log": ("Log", "root")}
            report = ProvenanceExporter(repo, root / "export" / node, node, lambda: names).export()
            found += [str(root / "export" / node / exported.name) for exported in report.files]
    return found


def ask(runtime, files, question: str, components=None, **params):
    """The answer to a ready question, its SQL run as the job runs it (as sqlglot writes it back)."""
    return run_query(runtime, files, check_read_only(QUESTIONS[question].sql(params)), components=components,
                     max_rows=1000, timeout=300)


def test_flowfiles_and_bytes_per_component_per_hour(runtime, files):
    result = ask(runtime, files, "throughput")
    assert [c["name"] for c in result.columns] == ["hour", "component_id", "component_name", "component_type",
                                                   "flowfiles", "bytes"]
    assert result.rows == [
        [hour(T2), "conn", None, "Connection", 1, 40],
        [hour(T2), "gen", "Generate", "GenerateFlowFile", 1, 40],
        [hour(T1), "gen", "Generate", "GenerateFlowFile", 3, 60],
        [hour(T1), "log", "Log", "LogAttribute", 2, 30],
        [hour(T1), "route", "Route", "RouteOnAttribute", 2, 30],
        [hour(T1), "conn", None, "Connection", 1, 30],
        [hour(T1), "other", None, "GenerateFlowFile", 1, 999],
    ]
    assert not result.truncated
    assert [hour(OLD), "gen"] in [row[:2] for row in ask(runtime, files, "throughput", hours=200).rows]


def test_slowest_components(runtime, files):
    result = ask(runtime, files, "slowest", components=MINE)
    assert [row[:5] for row in result.rows] == [
        ["route", "Route", "RouteOnAttribute", 3, 200.0],
        ["log", "Log", "LogAttribute", 2, 5.0],
        ["gen", "Generate", "GenerateFlowFile", 4, 1.0],
    ]
    named = dict(zip([c["name"] for c in result.columns], result.rows[0]))
    assert (named["p95_processing_ms"], named["max_processing_ms"], named["avg_lineage_ms"]) == (300, 300, 500.0)
    assert [row[0] for row in ask(runtime, files, "slowest", limit=1).rows] == ["route"]


def test_where_flowfiles_were_dropped(runtime, files):
    result = ask(runtime, files, "drops")
    assert [row[:7] for row in result.rows] == [
        ["log", "Log", "LogAttribute", "DROP", "Auto-Terminated by success Relationship", 2, 30],
        ["conn", None, "Connection", "DROP", "FlowFile Queue emptied by alice", 1, 30],
        ["conn", None, "Connection", "EXPIRE", "Expiration Threshold = 1 min", 1, 40],
    ]
    first_time, last_time = result.rows[0][7:]
    assert first_time.endswith("Z") and first_time < last_time


def test_the_scope_keeps_every_other_component_out(runtime, files):
    everything = "SELECT component_id, count(*) AS events, sum(file_size) AS bytes FROM provenance GROUP BY component_id"
    seen = run_query(runtime, files, everything, components=MINE, max_rows=100, timeout=300)
    assert sorted(row[0] for row in seen.rows) == sorted(MINE)
    assert all(row[0] != "other" for question in QUESTIONS for row in ask(runtime, files, question, MINE).rows)
    nothing = run_query(runtime, files, "SELECT * FROM provenance", components=frozenset(), max_rows=100, timeout=300)
    assert nothing.rows == [] and len(nothing.columns) == 25


def test_values_are_json_ready_and_rows_capped(runtime, files):
    result = run_query(runtime, files, "SELECT event_id, event_time, attributes, parent_uuids FROM provenance "
                                       "WHERE flowfile_uuid = 'ff-1' ORDER BY event_id", components=None, max_rows=2,
                       timeout=300)
    assert result.truncated and result.max_rows == 2 and len(result.rows) == 2
    event_id, event_time, attributes, parents = result.rows[0]
    assert event_id == 1 and event_time == datetime.fromtimestamp(T1 / 1000, timezone.utc).isoformat().replace(
        "+00:00", "Z")
    assert attributes == {"uuid": "ff-1", "filename": "ff-1.txt"} and parents == []
    assert result.as_dict()["row_count"] == 2


def test_no_files_is_an_empty_view(runtime):
    result = run_query(runtime, [], "SELECT count(*) AS events FROM provenance", components=None, max_rows=10,
                       timeout=300)
    assert result.rows == [[0]]


def test_a_wrong_query_fails_with_spark_s_message_without_a_stack_trace(runtime, files):
    with pytest.raises(SparkQueryError) as failed:
        run_query(runtime, files, "SELECT no_such_column FROM provenance", components=None, max_rows=10, timeout=300)
    assert "no_such_column" in str(failed.value) and "\tat " not in str(failed.value)
    assert failed.value.error_class == "UNRESOLVED_COLUMN.WITH_SUGGESTION"


def test_sql_on_files_is_switched_off(runtime, files):
    with pytest.raises(SparkQueryError) as failed:
        run_query(runtime, files, f"SELECT * FROM parquet.`{files[0]}`", components=MINE, max_rows=10, timeout=300)
    assert failed.value.error_class == "TABLE_OR_VIEW_NOT_FOUND"


SLOW = "SELECT count(*) FROM range(0, 4000000000) a WHERE hash(a.id) % 7 = 3"


def test_a_query_past_its_time_limit_is_interrupted(runtime, files):
    started = time.monotonic()
    with pytest.raises(QueryInterrupted) as stopped:
        run_query(runtime, files, SLOW, components=None, max_rows=10, timeout=2)
    assert "longer than its limit of 2 s" in str(stopped.value)
    assert time.monotonic() - started < 60


def test_a_query_given_up_is_interrupted(runtime, files):
    given_up_at = time.monotonic() + 1
    with pytest.raises(QueryInterrupted) as stopped:
        run_query(runtime, files, SLOW, components=None, max_rows=10, timeout=300,
                  cancelled=lambda: time.monotonic() > given_up_at)
    assert "given up" in str(stopped.value)
    assert run_query(runtime, files, "SELECT count(*) FROM provenance", components=None, max_rows=10,
                     timeout=300).rows == [[13]], "the session still serves queries"


DIES = """
import sys
from engine.spark.provenance_query import jobs_runtime, run_query
from engine.spark.runtime import SparkUnavailableError
from engine.spark.settings import SparkSettings
runtime = jobs_runtime(SparkSettings(master="local[1]", ui_enabled=False, driver_memory="512m"))
def ask(sql):
    return run_query(runtime, [], sql, components=None, max_rows=5, timeout=120).rows
print("before", ask("SELECT 1 AS one"), flush=True)
jvm = runtime.session().sparkContext._gateway.proc
jvm.kill()
jvm.wait()
try:
    ask("SELECT 2 AS two")
except SparkUnavailableError as error:
    print("unavailable:", error, flush=True)
print("after", ask("SELECT 3 AS three"), flush=True)
"""


def test_a_spark_that_dies_fails_the_query_as_unavailable_and_the_next_one_gets_a_new_spark():
    """In a process of its own (killing the JVM must not disturb the other tests' Spark), with the
    jobs process's runtime: the query fails as unavailable, the next one starts a new Spark."""
    result = subprocess.run([sys.executable, "-c", DIES], cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line for line in result.stdout.splitlines() if line.split(" ")[0] in ("before", "unavailable:", "after")]
    assert lines[0] == "before [[1]]"
    assert lines[1].startswith("unavailable: Spark's JVM is gone")
    assert lines[2] == "after [[3]]"
