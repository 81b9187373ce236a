"""A cluster of real node processes (``manage.py runnode``) over a private redis-server."""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path
from typing import Any

import redis

from engine.cluster.keys import ClusterKeys
from engine.cluster.records import ClusterView, read_holder
from tests.processes import OutputProcess, wait_until

__all__ = ["INTERVAL", "Cluster", "Node", "wait_until"]

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Heartbeat interval of the test clusters, in seconds: roles move within two of them.
INTERVAL = 1.0


class Node(OutputProcess):
    """One ``manage.py runnode`` process."""

    def __init__(self, node_id: str, data_dir: Path, env: dict[str, str], config: Path, flow: Path | None,
                 options: tuple[str, ...] = ()) -> None:
        self.node_id = node_id
        self.data_dir = data_dir
        args = [sys.executable, "manage.py", "runnode", "--node-id", node_id, "--data-dir", str(data_dir),
                "--config", str(config), *options]
        if flow is not None:
            args += ["--flow", str(flow)]
        super().__init__(args, REPO_ROOT, env)

    def stop(self) -> int:
        """SIGTERM and wait for the clean exit."""
        return self.terminate()

    def saved_flow(self) -> dict:
        return json.loads(gzip.decompress((self.data_dir / "flow.json.gz").read_bytes()))


class Cluster:
    """Nodes of one cluster, started and stopped by the test."""

    def __init__(self, root: Path, redis_port: int, name: str = "test", **cluster_settings: Any) -> None:
        self.root = root
        self.keys = ClusterKeys(name)
        self.redis_port = redis_port
        self.client = redis.Redis(host="127.0.0.1", port=redis_port, socket_timeout=2)
        self.env = {**os.environ, "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0", "FLOWSITE_CLUSTER": name}
        settings = {"heartbeat-interval": INTERVAL, "missed-heartbeats": 4, "election-max-wait": "30 sec",
                    **cluster_settings}
        self.config = root / "node-settings.json"
        root.mkdir(parents=True, exist_ok=True)
        runtime = {"graceful-shutdown-period": "2 sec", "status-log-interval": "1 sec"}
        self.config.write_text(json.dumps({"cluster": settings, "runtime": runtime}))
        self.nodes: dict[str, Node] = {}

    def start(self, node_id: str, flow: dict | None = None, data_dir: Path | None = None, *options: str,
              env: dict[str, str] | None = None) -> Node:
        """Start node ``node_id`` with ``flow`` (else the one in its data directory, or none),
        further runnode ``options`` and ``env`` added to the cluster's environment."""
        flow_file = None
        if flow is not None:
            flow_file = self.root / f"{node_id}-flow.json"
            flow_file.write_text(json.dumps(flow))
        node = Node(node_id, data_dir or self.root / node_id, {**self.env, **(env or {})}, self.config, flow_file,
                    options)
        self.nodes[node_id] = node
        return node

    def view(self) -> ClusterView:
        return ClusterView(self.client, self.keys)

    def states(self) -> dict[str, str]:
        return {node: view.state for node, view in self.view().nodes.items()}

    def wait_connected(self, *node_ids: str, timeout: float = 60) -> None:
        def connected() -> bool:
            for node_id in node_ids:
                if not self.nodes[node_id].alive:
                    raise AssertionError(f"node {node_id} exited:\n{self.nodes[node_id].output}")
            return all(self.states().get(n) == "CONNECTED" for n in node_ids)
        wait_until(connected, timeout, f"nodes {', '.join(node_ids)} connected")

    def holder(self, role: str) -> str | None:
        held = read_holder(self.client, self.keys, role)
        return held[0] if held else None

    def stop_all(self) -> None:
        for node in self.nodes.values():
            if node.alive:
                node.stop()
        self.client.close()
