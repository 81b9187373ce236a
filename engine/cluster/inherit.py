"""A node taking the cluster's flow (seed 000): check, back up, replace — or refuse.

A node whose bundle differs from the cluster's backs up each file that differs
(``flow.json.gz``, ``authorizations.json.gz``) under the same name with a
``.YYYY-MM-DD-HH-MM-SS`` suffix, writes the cluster's and runs it. It refuses, changing nothing,
when a connection of its running flow that holds FlowFiles is missing from the cluster's flow —
or belongs to a tenant no longer placed on this node (``engine.cluster.placement``): those
FlowFiles would have nowhere to go.
"""

from __future__ import annotations

import gzip
import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any

from engine.cluster.bundle import FlowBundle
from engine.cluster.cluster_flow import DeployReport
from engine.flow import FlowDefinitionError
from engine.fileops import write_atomically
from engine.node import StandaloneNode
from engine.runtime.connectable import ComponentStateError

__all__ = ["AUTHORIZATIONS_FILE", "inherit", "local_bundle"]

log = logging.getLogger(__name__)

AUTHORIZATIONS_FILE = "authorizations.json.gz"


def _read_authorizations(data_dir: Path) -> dict[str, Any]:
    try:
        return json.loads(gzip.decompress((data_dir / AUTHORIZATIONS_FILE).read_bytes()))
    except FileNotFoundError:
        return {}


def local_bundle(node: StandaloneNode) -> FlowBundle:
    """The bundle this node would offer: the flow it runs and its authorizations snapshot."""
    return FlowBundle(node.stored_document(), _read_authorizations(node.data_dir))


def _backup(path: Path, stamp: str) -> Path | None:
    if not path.exists():
        return None
    backup = path.with_name(f"{path.name}.{stamp}")
    shutil.copy2(path, backup)
    return backup


def _missing_connections(node: StandaloneNode, flow_connections: set[str]) -> dict[str, int]:
    return {identifier: count for identifier, count in node.queued_flowfiles().items()
            if count and identifier not in flow_connections}


def inherit(node: StandaloneNode, node_id: str, bundle: FlowBundle) -> DeployReport:
    """Make ``node`` run ``bundle`` (see the module docstring); the report says what happened."""
    fingerprint = bundle.fingerprint
    current = local_bundle(node)
    if current.fingerprint == fingerprint:
        return DeployReport(node_id, "unchanged", "this node already runs the cluster's flow", fingerprint)
    try:
        flow, problems = node.prepare(bundle.flow)
    except FlowDefinitionError as error:
        return DeployReport(node_id, "failed", "the cluster's flow cannot run here",
                            fingerprint, [str(p) for p in error.problems])
    except ValueError as error:
        return DeployReport(node_id, "failed", f"the cluster's flow cannot be opened here: {error}", fingerprint)
    connections = {config.identifier for group in flow.groups() for config in group.connections}
    missing = _missing_connections(node, connections)
    if missing:
        names = node.controller.connections
        listed = ", ".join(f"{names[c].name or c} ({c}): {n} FlowFile(s)" for c, n in sorted(missing.items()))
        message = (f"refused the cluster's flow: {len(missing)} connection(s) holding FlowFiles are missing from it "
                   f"— {listed}; this node keeps its flow and data and stays out of the cluster")
        moved = sorted({slug for c, slug in node.placement.components_elsewhere(bundle.flow).items() if c in missing}
                       ) if node.placement is not None else []
        if moved:
            message += (f" (tenant(s) {', '.join(moved)} now run on other nodes than this one, of "
                        f"{node.placement.describe()}: empty their queues here first, or place them back)")
        log.error("node %s: %s", node_id, message)
        return DeployReport(node_id, "refused", message, fingerprint)
    stamp = time.strftime("%Y-%m-%d-%H-%M-%S")
    backups = []
    if FlowBundle(current.flow).fingerprint != FlowBundle(bundle.flow).fingerprint:
        backups.append(_backup(node.flow_path, stamp))
    try:
        problems, failures = node.replace_flow(bundle.flow)
    except ComponentStateError as error:
        for backup in backups:
            if backup is not None:
                backup.unlink()
        log.error("node %s: refused the cluster's flow: %s", node_id, error)
        return DeployReport(node_id, "refused", f"refused the cluster's flow: {error}", fingerprint)
    authorizations = node.data_dir / AUTHORIZATIONS_FILE
    if current.authorizations != bundle.authorizations:
        backups.append(_backup(authorizations, stamp))
        write_atomically(authorizations, gzip.compress(json.dumps(bundle.authorizations).encode(), mtime=0))
    saved = [path.name for path in backups if path is not None]
    log.info("node %s: inherited the cluster's flow %s%s", node_id, fingerprint[:12],
             f" (backed up {', '.join(saved)})" if saved else "")
    return DeployReport(node_id, "applied", "backed up " + ", ".join(saved) if saved else "", fingerprint,
                        [str(p) for p in problems] + [f"not started: {failure}" for failure in failures])
