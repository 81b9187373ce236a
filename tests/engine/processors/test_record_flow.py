"""A record flow run by a node, its Spark on ``local[2]`` and on a standalone master and worker
started from pyspark's own distribution: CSV files are queried, updated, partitioned by city,
merged per city and written out as JSON."""

from __future__ import annotations

import json
import time

import pytest

from engine.node import StandaloneNode
from engine.spark.runtime import SparkRuntime
from engine.spark.settings import SparkSettings
from engine.testing.flows import connection, flow, processor, service
from tests.engine.spark.cluster import spark_cluster  # noqa: F401

FILES = {
    "a.csv": "name,age,city\nann,31,oslo\nbob,17,oslo\ncid,45,rome\n",
    "b.csv": "name,age,city\ndan,12,rome\neve,60,rome\nfay,22,lima\n",
}
EXPECTED = {
    "oslo.json": [{"name": "ANN", "age": 31, "city": "oslo"}],
    "rome.json": [{"name": "CID", "age": 45, "city": "rome"}, {"name": "EVE", "age": 60, "city": "rome"}],
    "lima.json": [{"name": "FAY", "age": 22, "city": "lima"}],
}


def record_flow(inbox, outbox) -> dict:
    csv_in, json_in, json_out = "csv-in", "json-in", "json-out"
    records = {"Record Reader": json_in, "Record Writer": json_out}
    return flow(services=[
        service(csv_in, "CSVReader"), service(json_in, "JsonTreeReader"),
        service(json_out, "JsonRecordSetWriter", {"Output Grouping": "output-oneline"}),
    ], processors=[
        processor("get", "GetFile", {"Input Directory": str(inbox)}, schedulingPeriod="100 millis"),
        processor("query", "QueryRecord", {"Record Reader": csv_in, "Record Writer": json_out,
                                           "adults": "SELECT name, age, city FROM FLOWFILE WHERE age >= 18"},
                  auto_terminate=["original", "failure"]),
        processor("update", "UpdateRecord", {**records, "Replacement Value Strategy": "record-path-value",
                                             "/name": "toUpperCase(/name)"}, auto_terminate=["failure"]),
        processor("partition", "PartitionRecord", {**records, "city": "/city"},
                  auto_terminate=["original", "failure"]),
        processor("merge", "MergeRecord", {**records, "Correlation Attribute Name": "city",
                                           "Minimum Number of Records": "100", "Max Bin Age": "2 sec"},
                  auto_terminate=["original", "failure"]),
        processor("name", "UpdateAttribute", {"filename": "${city}.json"}),
        processor("put", "PutFile", {"Directory": str(outbox)}, auto_terminate=["success", "failure"]),
    ], connections=[
        connection("c1", "get", "query"), connection("c2", "query", "update", ["adults"]),
        connection("c3", "update", "partition"), connection("c4", "partition", "merge"),
        connection("c5", "merge", "name", ["merged"]), connection("c6", "name", "put"),
    ])


def run_flow(tmp_path) -> dict[str, list[dict]]:
    inbox, outbox = tmp_path / "in", tmp_path / "out"
    inbox.mkdir()
    outbox.mkdir()
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(record_flow(inbox, outbox)))
    node = StandaloneNode(tmp_path / "node")
    node.load_flow(path, None)
    node.start()
    try:
        for name, text in FILES.items():
            (inbox / f".{name}").write_text(text)
            (inbox / f".{name}").rename(inbox / name)
        deadline = time.monotonic() + 300
        while len(list(outbox.iterdir())) < len(EXPECTED) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        node.stop()
    return {file.name: [json.loads(line) for line in file.read_text().splitlines()] for file in outbox.iterdir()}


def test_a_record_flow_on_local_spark(tmp_path, spark_runtime):
    assert run_flow(tmp_path) == EXPECTED


def test_a_record_flow_on_a_standalone_master_and_worker(tmp_path, spark_cluster, monkeypatch):  # noqa: F811
    runtime = SparkRuntime(SparkSettings(master=spark_cluster.url, ui_enabled=False, driver_memory="512m",
                                         arrow_limit="1 KB", conf={"spark.executor.memory": "512m",
                                                                   "spark.cores.max": "1"}),
                           tmp_path / "node", "flowsite-record-flow")
    monkeypatch.setattr("engine.spark.runtime._node_runtime", runtime)
    try:
        assert run_flow(tmp_path) == EXPECTED
        assert runtime.session().sparkContext.master == spark_cluster.url
        assert list((tmp_path / "node" / "spark-staging").rglob("*.parquet")) == [], "staged files are removed"
    finally:
        runtime.stop()
