"""Real engine nodes run inside the test process, answering their command streams.

``InProcessNode`` runs an ``engine.node.StandaloneNode`` (with the given settings) over a data
directory and a ``CommandListener`` with ``workers.commands.NodeCommands`` on a real Redis
(exporting provenance into ``analytics_dir`` when given), verifying commands with the cluster key
of the settings (as ``manage.py runnode`` does). ``register`` writes
what a node agent writes about itself (a heartbeat and a CONNECTED record); it stands in for the
agent's registration only — the tests with real node processes live on the node side.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import redis

from engine.cluster.bus import CommandListener
from engine.cluster.keys import ClusterKeys
from engine.cluster.records import Heartbeat, NodeRecord, NodeState
from engine.cluster.signing import CommandSigner
from engine.node import NodeConfig, StandaloneNode
from flowsite.cluster.redis import command_signer
from workers.commands import NodeCommands


class InProcessNode:
    """Node ``node_id`` running ``document`` over ``data_dir`` (see the module docstring)."""

    def __init__(self, node_id: str, data_dir: Path, port: int, keys: ClusterKeys,
                 signer: CommandSigner | None = None, analytics_dir: Path | None = None,
                 config: NodeConfig | None = None) -> None:
        self.node_id = node_id
        self.analytics_dir = analytics_dir
        self.signer = signer or command_signer()
        self.data_dir = Path(data_dir)
        self.port = port
        self.keys = keys
        self.node = StandaloneNode(self.data_dir, config)
        self.listener: CommandListener | None = None
        self.running = False

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port)

    def start(self, document: dict[str, Any] | None = None) -> InProcessNode:
        """Run ``document`` (or nothing, with None) and answer commands."""
        if document is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            seed = self.data_dir.parent / f"{self.node_id}-flow.json"
            seed.write_text(json.dumps(document))
            self.node.load_flow(seed)
            self.node.start()
            self.running = True
        self.listener = CommandListener(self.client(), self.keys, self.node_id, self.signer, block_ms=200)
        NodeCommands(lambda: self.node.controller, self.node_id,
                     analytics_dir=self.analytics_dir).register(self.listener)
        self.listener.start()
        return self

    def register(self, state: NodeState = NodeState.CONNECTED, fingerprint: str = "", ttl: int = 60) -> None:
        """Write the node's heartbeat (expiring after ``ttl`` s) and its record in ``nodes``."""
        client = self.client()
        controller = self.node.controller
        status = controller.status().node if controller is not None else None
        beat = Heartbeat(self.node_id, address=f"{self.node_id}:0", started_at=time.time(), sent_at=time.time(),
                         flow_fingerprint=fingerprint,
                         active_threads=status.active_threads if status else 0,
                         queued_count=status.queued_count if status else 0,
                         queued_bytes=status.queued_bytes if status else 0)
        client.set(self.keys.heartbeat(self.node_id), beat.encode(), ex=ttl)
        client.hset(self.keys.nodes, self.node_id, NodeRecord(self.node_id, state, "test registration").encode())
        client.close()

    def stop(self) -> None:
        if self.listener is not None:
            self.listener.stop()
            self.listener = None
        if self.running:
            self.node.stop()
            self.running = False
