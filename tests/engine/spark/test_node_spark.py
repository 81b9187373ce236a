"""Spark on a node: the node's settings and SPARK_MASTER choose it, and the node's heartbeat says
where its Spark UI is once Spark started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import redis

from engine.cluster.agent import ClusterAgent
from engine.cluster.bundle import EMPTY_FLOW
from engine.cluster.config import ClusterConfig
from engine.cluster.keys import ClusterKeys
from engine.cluster.records import ClusterView
from engine.cluster.signing import CommandSigner
from engine.cluster.state import ClusterStateProvider
from engine.node import FLOW_FILE, StandaloneNode, save_flow
from engine.runtime.connectable import NodeRole
from engine.runtime.state import LocalStateProvider
from engine.spark.runtime import SparkRuntime, node_runtime
from engine.spark.settings import SparkSettings

REPO_ROOT = Path(__file__).resolve().parents[3]


def heartbeat_ui(client: redis.Redis, keys: ClusterKeys, expected: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        view = ClusterView(client, keys).nodes.get("node-1")
        seen = view.heartbeat.spark_ui_url if view is not None and view.heartbeat is not None else None
        if seen == expected:
            return seen
        time.sleep(0.1)
    raise AssertionError(f"the heartbeat's Spark UI is {seen!r}, not {expected!r}")


def test_the_heartbeat_carries_the_spark_ui_address_once_spark_started(redis_server, tmp_path, monkeypatch):
    runtime = SparkRuntime(SparkSettings(master="local[1]", driver_memory="512m"), tmp_path / "node", "node-1")
    monkeypatch.setattr("engine.spark.runtime._node_runtime", runtime)
    keys = ClusterKeys("spark-ui")
    role = NodeRole(clustered=False, primary=True)
    state = ClusterStateProvider(LocalStateProvider(tmp_path / "node" / "state" / "local"), keys)
    (tmp_path / "node").mkdir()
    save_flow(tmp_path / "node" / FLOW_FILE, EMPTY_FLOW)
    node = StandaloneNode(tmp_path / "node", role=role, cluster_state=state, name="node-1")
    node.load_flow(None, {})
    url = f"redis://127.0.0.1:{redis_server.port}/0"
    agent = ClusterAgent(node, "node-1", url, keys, ClusterConfig(heartbeat_interval=0.5, election_max_wait=0.5),
                         role, state, CommandSigner("spark-ui-test-key"))
    client = redis.Redis.from_url(url)
    try:
        agent.connect()
        node.start()
        agent.start()
        heartbeat_ui(client, keys, "")  # no Spark before a job needs it
        assert node_runtime().run(lambda session: session.range(3).count()) == 3
        assert runtime.ui_url and runtime.ui_url.startswith("http://")
        heartbeat_ui(client, keys, runtime.ui_url)
        runtime.stop()
        heartbeat_ui(client, keys, "")
    finally:
        agent.stop()
        node.stop()
        runtime.stop()
        client.close()


def run_engine(tmp_path: Path, environment: dict[str, str], config: dict | None = None) -> subprocess.CompletedProcess:
    flow = tmp_path / "flow.json"
    flow.write_text(json.dumps(EMPTY_FLOW))
    args = [sys.executable, "-m", "engine", "run", "--data-dir", str(tmp_path / "data"), "--flow", str(flow)]
    if config is not None:
        (tmp_path / "node.json").write_text(json.dumps(config))
        args += ["--config", str(tmp_path / "node.json")]
    env = {**os.environ, **environment}
    return subprocess.run(args, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_engine_run_takes_spark_master_from_the_environment_over_its_settings(tmp_path):
    refused = run_engine(tmp_path, {"SPARK_MASTER": "yarn"}, {"spark": {"master": "local[1]"}})
    assert refused.returncode == 2
    assert "spark settings: not a Spark master: 'yarn'" in refused.stderr
    refused = run_engine(tmp_path, {"SPARK_MASTER": ""}, {"spark": {"master": "mesos://m:5050"}})
    assert refused.returncode == 2 and "spark settings" in refused.stderr and "mesos" in refused.stderr
