"""One node of the control plane: the engine's node, run under a node id, in a cluster.

The node joins the cluster named by ``FLOWSITE_CLUSTER`` through the Redis at ``REDIS_URL``
(``engine.cluster.agent``); with no Redis reachable it runs standalone, as the primary node,
and joins when Redis answers. ``--standalone`` keeps it out of any cluster. A new data directory
without ``--flow`` starts with an empty flow instead of refusing to start, so a freshly deployed
node comes up idle and takes the cluster's flow.
"""

from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path

from engine.cluster.agent import ClusterOptions
from engine.cluster.bundle import EMPTY_FLOW
from engine.node import FLOW_FILE, save_flow
from engine.run import run_node

__all__ = ["node_id", "run"]

log = logging.getLogger(__name__)

_NODE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def node_id(text: str) -> str:
    """Check a node id (the argparse type of ``--node-id``): 1 to 63 letters, digits, '.', '_' or
    '-', starting with a letter or digit, so it can serve as a host name and a key."""
    if not _NODE_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a node id (1-63 letters, digits, '.', '_' or '-', starting with a letter or digit)")
    return text


def run(node: str, data_dir: Path, flow: Path | None = None, *, cluster: ClusterOptions | None = None,
        **options) -> None:
    """Run node ``node`` over ``data_dir`` until SIGTERM or SIGINT, in ``cluster`` if given;
    ``options`` are those of ``engine.run.run_node``, which raises RunError when the node cannot
    start."""
    log.info("node %s: data directory %s", node, data_dir)
    if flow is None and not (data_dir / FLOW_FILE).exists():
        log.info("node %s: no flow yet, starting with an empty one", node)
        data_dir.mkdir(parents=True, exist_ok=True)
        save_flow(data_dir / FLOW_FILE, EMPTY_FLOW)
    run_node(data_dir, flow, name=node, cluster=cluster, **options)
