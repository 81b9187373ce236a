"""The runtime on the other masters: a standalone cluster and a Spark Connect server, both started
by the tests from pyspark's own distribution."""

from __future__ import annotations

import json
import urllib.request
from dataclasses import replace

import pyarrow as pa
import pytest

from engine.spark.runtime import SparkQueryError, SparkRuntime, SparkUnavailableError
from engine.spark.settings import SparkSettings
from tests.engine.spark.cluster import connect_server
from tests.engine.spark.fixtures import TEST_SETTINGS


def numbers(count: int) -> pa.Table:
    return pa.table({"n": pa.array(range(count), pa.int64()), "word": [f"w{i % 10}" for i in range(count)]})


def grouped(runtime: SparkRuntime, table: pa.Table, size_hint: int | None = None):
    """Run a grouping job over ``table`` (staged or not, as ``runtime``'s arrow limit says)."""
    def job(session):
        with runtime.frame(session, table) as frame:
            result = frame.groupBy("word").agg({"n": "sum"}).withColumnRenamed("sum(n)", "total").orderBy("word")
            return runtime.collect(result, size_hint=size_hint), session
    return runtime.run(job)


def expected_totals(table: pa.Table) -> list[dict]:
    totals: dict[str, int] = {}
    for row in table.to_pylist():
        totals[row["word"]] = totals.get(row["word"], 0) + row["n"]
    return [{"word": word, "total": totals[word]} for word in sorted(totals)]


def test_jobs_run_on_a_standalone_cluster_whose_executors_read_the_staged_parquet(spark_cluster, tmp_path):
    table = numbers(5000)
    runtime = SparkRuntime(SparkSettings(master=spark_cluster.url, ui_enabled=False, driver_memory="512m",
                                         arrow_limit="1 KB", conf={"spark.executor.memory": "512m",
                                                                   "spark.cores.max": "1"}),
                           tmp_path / "node", "flowsite-cluster-test")
    try:
        result, session = grouped(runtime, table, size_hint=1 << 40)
        assert result.to_pylist() == expected_totals(table)
        assert session.sparkContext.master == spark_cluster.url
        assert session.conf.get("spark.driver.host") == "127.0.0.1", "the driver advertises its route to the master"
        with urllib.request.urlopen(spark_cluster.ui_url + "/json/", timeout=10) as answer:
            master = json.load(answer)
        assert [app["name"] for app in master["activeapps"]] == ["flowsite-cluster-test"]
        small, _ = grouped(runtime, numbers(10))  # under the limit: through Arrow
        assert small.to_pylist() == expected_totals(numbers(10))
        with pytest.raises(SparkQueryError, match="UNRESOLVED_COLUMN"):
            runtime.run(lambda session: session.sql("SELECT missing FROM range(2)").collect())
        assert list((tmp_path / "node" / "spark-staging").rglob("*.parquet")) == []
    finally:
        runtime.stop()


def test_jobs_run_through_spark_connect_and_a_lost_server_is_unavailable_until_it_is_back(tmp_path):
    table = numbers(3000)
    with connect_server(tmp_path / "connect") as server:
        port = server.port
        settings = replace(TEST_SETTINGS, master=server.url, arrow_limit="1 KB")
        runtime = SparkRuntime(settings, tmp_path / "node", "flowsite-connect-test")
        try:
            result, session = grouped(runtime, table, size_hint=1 << 40)  # staged in and out
            assert result.to_pylist() == expected_totals(table)
            assert type(session).__module__.startswith("pyspark.sql.connect")
            assert runtime.ui_url is None, "under Spark Connect the UI is the server's"
            small, _ = grouped(runtime, numbers(10))  # under the limit: through Arrow
            assert small.to_pylist() == expected_totals(numbers(10))
            assert runtime.run(lambda session: session.sql("SELECT current_timezone() AS zone").collect()[0].zone) \
                == "UTC"
            with pytest.raises(SparkQueryError) as raised:
                runtime.run(lambda session: session.sql("SELEC 1").collect())
            assert raised.value.error_class == "PARSE_SYNTAX_ERROR" and "JVM stacktrace" not in str(raised.value)
            server.kill()
            with pytest.raises(SparkUnavailableError, match="UNAVAILABLE"):
                runtime.run(lambda session: session.range(3).count())
            assert not runtime.started
            with pytest.raises(SparkUnavailableError):
                runtime.run(lambda session: session.range(3).count())
        except BaseException:
            runtime.stop()
            raise
    with connect_server(tmp_path / "connect-again", port=port):
        try:
            assert runtime.run(lambda session: session.range(4).count()) == 4
        finally:
            runtime.stop()

