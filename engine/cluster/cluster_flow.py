"""The cluster's flow in Redis (the ``flow`` hash) and the nodes' reports on deployments.

The ``flow`` hash holds the bundle every connected node runs (``bundle``, see
``engine.cluster.bundle``), its ``fingerprint``, a ``version`` label (what the control plane
deployed, e.g. ``acme:v3,globex:v1``), the ``deploy_id`` of the deployment that published it
(empty when an election did), ``updated_at`` and ``mac``: an HMAC under the cluster key over
all of them (``engine.cluster.signing``), so that a node takes only a flow the control plane or
a node of the cluster published (``verify_flow``), never one written by whoever else reaches
Redis. A node reports on a deployment in the hash
``deploy:<deploy id>`` (node id → ``DeployReport`` as JSON), which expires after a day.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import redis

from engine.cluster.bundle import FlowBundle
from engine.cluster.keys import ClusterKeys
from engine.cluster.signing import CommandSigner

__all__ = ["ClusterFlow", "DeployReport", "UnsignedFlow", "publish_flow", "read_fingerprint", "read_flow",
           "read_reports", "verify_flow", "write_report"]

#: How long a deployment's reports are kept, in seconds.
REPORT_TTL = 24 * 3600


@dataclass(frozen=True)
class ClusterFlow:
    """The flow the cluster runs."""

    bundle: FlowBundle
    fingerprint: str
    version: str
    deploy_id: str
    updated_at: float
    mac: str = ""


class UnsignedFlow(ValueError):
    """A cluster flow that was not published with the cluster key, or was changed since."""


def _signed_content(keys: ClusterKeys, fingerprint: str, version: str, deploy_id: str,
                    updated_at: float) -> dict[str, Any]:
    return {"cluster": keys.cluster, "fingerprint": fingerprint, "version": version, "deploy_id": deploy_id,
            "updated_at": repr(updated_at)}


def publish_flow(client: redis.Redis, keys: ClusterKeys, bundle: FlowBundle, version: str = "",
                 deploy_id: str = "", *, signer: CommandSigner) -> ClusterFlow:
    """Make ``bundle`` the cluster's flow, signed with ``signer``. (Clients of these functions
    answer bytes: the default ``decode_responses=False``.)"""
    fingerprint, updated_at = bundle.fingerprint, time.time()
    mac = signer.mac("flow", _signed_content(keys, fingerprint, version, deploy_id, updated_at))
    client.hset(keys.flow, mapping={"bundle": bundle.encode(), "fingerprint": fingerprint, "version": version,
                                    "deploy_id": deploy_id, "updated_at": repr(updated_at), "mac": mac})
    return ClusterFlow(bundle, fingerprint, version, deploy_id, updated_at, mac)


def verify_flow(flow: ClusterFlow, keys: ClusterKeys, signer: CommandSigner) -> None:
    """Raise UnsignedFlow unless ``flow`` is what ``publish_flow`` published with the cluster key."""
    if flow.bundle.fingerprint != flow.fingerprint:
        raise UnsignedFlow("the cluster's flow does not match its fingerprint: it was changed in Redis")
    content = _signed_content(keys, flow.fingerprint, flow.version, flow.deploy_id, flow.updated_at)
    if not signer.valid("flow", content, flow.mac):
        raise UnsignedFlow("the cluster's flow is not signed with the cluster key: it was not published by the "
                           "control plane or a node of this cluster")


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else value


def read_fingerprint(client: redis.Redis, keys: ClusterKeys) -> str | None:
    """The fingerprint of the cluster's flow (without reading the bundle), or None when there is none."""
    fingerprint = client.hget(keys.flow, "fingerprint")
    return _text(fingerprint) or None


def read_flow(client: redis.Redis, keys: ClusterKeys) -> ClusterFlow | None:
    """The cluster's flow, or None when there is none yet (no election has ended, nothing deployed)."""
    fields = {_text(k): v for k, v in client.hgetall(keys.flow).items()}
    if "bundle" not in fields:
        return None
    bundle = FlowBundle.decode(fields["bundle"])
    return ClusterFlow(bundle, _text(fields.get("fingerprint")) or bundle.fingerprint, _text(fields.get("version")),
                       _text(fields.get("deploy_id")), float(_text(fields.get("updated_at")) or 0),
                       _text(fields.get("mac")))


@dataclass
class DeployReport:
    """A node's result of applying the cluster's flow: ``status`` is ``applied``, ``unchanged``,
    ``refused`` (it would lose queued FlowFiles, or the node is disconnected) or ``failed``."""

    node: str
    status: str
    message: str = ""
    fingerprint: str = ""
    problems: list[str] = field(default_factory=list)
    at: float = field(default_factory=time.time)

    @property
    def ok(self) -> bool:
        return self.status in ("applied", "unchanged")

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def write_report(client: redis.Redis, keys: ClusterKeys, deploy_id: str, report: DeployReport) -> None:
    """Record a node's report on deployment ``deploy_id``."""
    key = keys.deploy(deploy_id)
    pipe = client.pipeline()
    pipe.hset(key, report.node, json.dumps(asdict(report)))
    pipe.expire(key, REPORT_TTL)
    pipe.execute()


def read_reports(client: redis.Redis, keys: ClusterKeys, deploy_id: str) -> dict[str, DeployReport]:
    """Every node's report on deployment ``deploy_id`` so far."""
    reports = {}
    for node, raw in client.hgetall(keys.deploy(deploy_id)).items():
        data = json.loads(raw)
        reports[_text(node)] = DeployReport(**{k: v for k, v in data.items() if k in DeployReport.__dataclass_fields__})
    return reports
