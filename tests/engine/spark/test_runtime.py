"""The node's Spark runtime against a real local Spark: started lazily, reused, replaced after its
JVM is killed; errors mapped; data handed over through Arrow or staged Parquet."""

from __future__ import annotations

import datetime
import decimal
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest

from engine.spark.runtime import STAGING_DIR_NAME, SparkQueryError, SparkRuntime, SparkUnavailableError
from tests.engine.spark.fixtures import TEST_SETTINGS

REPO_ROOT = Path(__file__).resolve().parents[3]


def jvm_pid() -> int:
    """The pid of this process's Spark JVM."""
    from pyspark import SparkContext

    return SparkContext._gateway.proc.pid


LAZY_PROBE = """
import json, sys, urllib.request
from pathlib import Path
import psutil
from engine.spark.runtime import SparkRuntime
from engine.spark.settings import SparkSettings

def javas():
    return [p.pid for p in psutil.Process().children(recursive=True) if "java" in p.name()]

runtime = SparkRuntime(SparkSettings(master="local[1]", driver_memory="512m"), Path(sys.argv[1]), "lazy probe")
before = {"pyspark": "pyspark" in sys.modules, "javas": javas(), "started": runtime.started, "ui": runtime.ui_url}
first = runtime.session()
count = runtime.run(lambda session: session.range(7).count())
with urllib.request.urlopen(runtime.ui_url, timeout=10) as page:
    ui_status = page.status
after = {"javas": javas(), "same": runtime.session() is first, "count": count, "ui": runtime.ui_url,
         "ui_status": ui_status, "staging": str(runtime.staging_root),
         "timezone": first.conf.get("spark.sql.session.timeZone"), "driver_memory": first.conf.get("spark.driver.memory"),
         "arrow": first.conf.get("spark.sql.execution.arrow.pyspark.enabled"),
         "partitions": first.conf.get("spark.sql.shuffle.partitions")}
runtime.stop()
print(json.dumps({"before": before, "after": after, "staging_left": sorted(p.name for p in Path(after["staging"]).iterdir())}))
"""


def test_nothing_starts_before_the_first_job_then_one_session_serves_every_job(tmp_path):
    result = subprocess.run([sys.executable, "-c", LAZY_PROBE, str(tmp_path / "node")], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["before"] == {"pyspark": False, "javas": [], "started": False, "ui": None}
    after = report["after"]
    assert len(after["javas"]) == 1 and after["same"] and after["count"] == 7
    assert after["ui"].startswith("http://") and after["ui_status"] == 200
    assert after["staging"] == str(tmp_path / "node" / STAGING_DIR_NAME)
    assert (after["timezone"], after["driver_memory"], after["arrow"], after["partitions"]) == ("UTC", "512m", "true",
                                                                                                 "2")
    assert report["staging_left"] == [], "stop removes the process's staging directory"


def test_the_session_is_reused(spark_runtime):
    first = spark_runtime.run(lambda session: session)
    assert spark_runtime.run(lambda session: session) is first
    assert spark_runtime.session() is first and spark_runtime.started
    assert spark_runtime.ui_url is None, "the tests' Spark has no UI"


@pytest.mark.parametrize("sql, condition", [
    ("SELEC 1", "PARSE_SYNTAX_ERROR"),
    ("SELECT nope FROM range(3)", "UNRESOLVED_COLUMN.WITH_SUGGESTION"),
    ("SELECT CAST('twelve' AS INT)", "CAST_INVALID_INPUT"),
    ("SELECT CAST(id AS STRING) || 'x' FROM range(2) WHERE CAST(CAST(id AS STRING) || 'x' AS INT) > 0",
     "CAST_INVALID_INPUT"),
])
def test_a_wrong_job_is_a_query_error_with_sparks_message_and_the_session_stays(spark_runtime, sql, condition):
    session = spark_runtime.session()
    with pytest.raises(SparkQueryError) as raised:
        spark_runtime.run(lambda session: session.sql(sql).collect())
    assert raised.value.error_class == condition
    assert str(raised.value).startswith(f"[{condition}]")
    assert "\tat org.apache" not in str(raised.value), "no JVM stack trace in the message"
    assert spark_runtime.session() is session


def test_an_error_of_the_jobs_own_python_passes_through(spark_runtime):
    session = spark_runtime.session()

    def job(session):
        raise KeyError("mine")
    with pytest.raises(KeyError, match="mine"):
        spark_runtime.run(job)
    assert spark_runtime.session() is session


def test_a_jvm_killed_mid_job_makes_the_job_unavailable_and_the_next_job_starts_a_new_one(spark_runtime):
    spark_runtime.run(lambda session: session.range(1).count())
    killed = jvm_pid()
    started = threading.Event()

    def long_job(session):
        started.set()
        return session.range(0, 10 ** 11).selectExpr("sum(id % 7)").collect()

    def kill_when_running():
        started.wait(60)
        time.sleep(1.5)
        os.kill(killed, signal.SIGKILL)
    killer = threading.Thread(target=kill_when_running)
    killer.start()
    begun = time.monotonic()
    with pytest.raises(SparkUnavailableError, match="JVM"):
        spark_runtime.run(long_job)
    killer.join()
    assert time.monotonic() - begun < 60
    assert not spark_runtime.started, "the broken session is discarded"
    assert spark_runtime.run(lambda session: session.range(5).count()) == 5
    assert jvm_pid() != killed


def test_a_session_whose_jvm_died_between_jobs_is_replaced_too(spark_runtime):
    spark_runtime.run(lambda session: session.range(1).count())
    killed = jvm_pid()
    os.kill(killed, signal.SIGKILL)
    time.sleep(0.5)
    with pytest.raises(SparkUnavailableError):
        spark_runtime.run(lambda session: session.range(3).count())
    assert spark_runtime.run(lambda session: session.range(3).count()) == 3
    assert jvm_pid() != killed


def all_types() -> pa.Table:
    """Records of every kind the readers produce."""
    rows = 50
    return pa.table({
        "id": pa.array(range(rows), pa.int64()),
        "small": pa.array([i % 100 for i in range(rows)], pa.int32()),
        "name": pa.array([f"name {i}" if i % 7 else None for i in range(rows)], pa.string()),
        "price": pa.array([decimal.Decimal(i) / 4 for i in range(rows)], pa.decimal128(10, 2)),
        "ratio": pa.array([i / 3 for i in range(rows)], pa.float64()),
        "flag": pa.array([i % 2 == 0 for i in range(rows)], pa.bool_()),
        "day": pa.array([datetime.date(2026, 1, 1) + datetime.timedelta(days=i) for i in range(rows)], pa.date32()),
        "at": pa.array([1_700_000_000_000_000 + i for i in range(rows)], pa.timestamp("us", "UTC")),
        "blob": pa.array([bytes([i % 256]) * 3 for i in range(rows)], pa.binary()),
        "tags": pa.array([[f"t{i}", "x"] for i in range(rows)], pa.list_(pa.string())),
        "point": pa.array([{"x": i, "y": -i} for i in range(rows)], pa.struct([("x", pa.int64()), ("y", pa.int64())])),
        "attributes": pa.array([[("k", str(i))] for i in range(rows)], pa.map_(pa.string(), pa.string())),
    })


def staged_files(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*.parquet"))


def test_small_tables_go_through_arrow_and_large_ones_are_staged_as_parquet_then_removed(spark_runtime, tmp_path):
    table = all_types()
    staging = tmp_path / "staging"
    staged_runtime = SparkRuntime(replace(TEST_SETTINGS, arrow_limit=f"{table.nbytes - 1} B",
                                          staging_dir=str(staging)), None, "staged")
    session = spark_runtime.session()

    def job(session):
        with spark_runtime.frame(session, table) as in_memory:
            arrow = (in_memory.inputFiles(), spark_runtime.collect(in_memory.orderBy("id")))
        with staged_runtime.frame(session, table) as from_parquet:
            files = staged_files(staging)
            staged = (from_parquet.inputFiles(), files, spark_runtime.collect(from_parquet.orderBy("id")))
        return arrow, staged, staged_files(staging)

    (arrow_inputs, through_arrow), (parquet_inputs, files, through_parquet), left = spark_runtime.run(job)
    assert arrow_inputs == [], "an Arrow hand-over reads no file"
    assert files and {Path(name.removeprefix("file:")) for name in parquet_inputs} == set(files)
    assert all(staging in file.parents for file in files)
    assert left == [], "the staged files are removed when the frame is left"
    assert through_arrow.equals(through_parquet)
    assert through_arrow.to_pylist() == table.to_pylist()
    assert spark_runtime.session() is session
    staged_runtime.stop()
    assert list(staging.iterdir()) == []


def test_large_results_are_collected_through_staged_parquet_with_the_same_schema(spark_runtime, tmp_path):
    table = all_types()

    def job(session):
        with spark_runtime.frame(session, table) as frame:
            ordered = frame.orderBy("id")
            empty = frame.filter("id < 0")
            return (spark_runtime.collect(ordered), spark_runtime.collect(ordered, size_hint=1 << 40),
                    spark_runtime.collect(empty, size_hint=1 << 40), spark_runtime.collect(empty))

    direct, staged, staged_empty, direct_empty = spark_runtime.run(job)
    assert staged.schema == direct.schema
    assert staged.equals(direct)
    assert staged_empty.num_rows == 0 and staged_empty.schema == direct_empty.schema
    assert staged_files(spark_runtime.staging_root) == []


def test_a_table_spark_cannot_take_is_a_query_error(spark_runtime):
    table = pa.table({"n": pa.array([1, 2], pa.uint64())})

    def job(session):
        with spark_runtime.frame(session, table) as frame:
            return frame.count()
    with pytest.raises(SparkQueryError):
        spark_runtime.run(job)


CRASHING_OWNER = """
import os, signal, sys
from pathlib import Path
from engine.spark.staging import StagingArea
area = StagingArea(Path(sys.argv[1]), sys.argv[2])
path = area.new_path("in")
path.mkdir()
(path / "part-00000.parquet").write_bytes(b"half written")
print(area.path.name, flush=True)
if sys.argv[2] == "crashing":
    os.kill(os.getpid(), signal.SIGKILL)
sys.stdin.read()  # a live owner: until the test closes its stdin
"""


def test_what_a_crashed_process_staged_is_removed_at_start_and_a_live_ones_is_kept(spark_runtime, tmp_path):
    root = tmp_path / "shared-staging"
    live = subprocess.Popen([sys.executable, "-c", CRASHING_OWNER, str(root), "live"], cwd=REPO_ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        live_dir = live.stdout.readline().strip()
        crashed = subprocess.run([sys.executable, "-c", CRASHING_OWNER, str(root), "crashing"], cwd=REPO_ROOT,
                                 capture_output=True, text=True, timeout=60)
        assert crashed.returncode == -signal.SIGKILL
        crashed_dir = crashed.stdout.strip()
        (root / "stray").mkdir()  # a directory without a lock: its owner is gone
        assert {crashed_dir, live_dir, "stray"} <= {path.name for path in root.iterdir()}
        runtime = SparkRuntime(replace(TEST_SETTINGS, staging_dir=str(root), arrow_limit="1 B"), None, "sweeper")
        table = pa.table({"n": [1, 2, 3]})
        with runtime.frame(spark_runtime.session(), table) as frame:
            assert sorted(row.n for row in frame.collect()) == [1, 2, 3]
        names = {path.name for path in root.iterdir()}
        assert crashed_dir not in names and crashed_dir + ".lock" not in names and "stray" not in names
        assert {live_dir, live_dir + ".lock"} <= names
        assert list((root / live_dir).rglob("*.parquet")), "the live process's files are untouched"
        runtime.stop()
        assert {path.name for path in root.iterdir()} == {live_dir, live_dir + ".lock"}
    finally:
        live.stdin.close()
        live.wait(timeout=30)
