"""A node's part in the cluster: heartbeats, roles, the flow election and the cluster's flow.

The agent runs one thread that wakes every half heartbeat interval and, while Redis answers:

1. writes the node's heartbeat (every interval);
2. follows the node's record: acknowledges an operator's disconnection; while connecting or
   connected, offers its bundle in the election when the cluster has no flow yet, or takes the
   cluster's flow when it runs another (``engine.cluster.inherit``);
3. holds or seeks the coordinator lease (any node that is not disconnected) and the primary
   lease (connected nodes only), stepping down from a role it can no longer renew;
4. as coordinator, ends the election when its time has come and reviews the nodes' states.

A second thread (``CommandListener``) answers commands that carry a valid MAC under the cluster
key (``engine.cluster.signing``): ``deploy`` here, the rest registered by the caller; a refused
command becomes a bulletin of the node. The node takes only a cluster flow and counts only
ballots signed with the same key. A node that cannot reach Redis when it starts runs
standalone, as the primary node, and joins once Redis answers; a node that loses Redis keeps
processing but gives up its roles (so primary-node-only processors pause) until Redis is back.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable

import redis

from engine.cluster.bus import Command, CommandListener
from engine.cluster.cluster_flow import (DeployReport, UnsignedFlow, read_fingerprint, read_flow, verify_flow,
                                         write_report)
from engine.cluster.config import ClusterConfig
from engine.cluster.coordinator import Coordinator
from engine.cluster.election import ElectionSettings, cast_ballot, run_election
from engine.cluster.inherit import inherit, local_bundle
from engine.cluster.keys import ClusterKeys
from engine.cluster.lease import Lease
from engine.cluster.records import OPERATOR_OUT, Heartbeat, NodeRecord, NodeState
from engine.cluster.signing import CommandSigner
from engine.cluster.state import ClusterStateProvider
from engine.node import StandaloneNode
from engine.runtime.connectable import NodeRole
from engine.spark.runtime import node_runtime

__all__ = ["ClusterAgent", "ClusterOptions"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClusterOptions:
    """How a node joins a cluster: its id, the Redis, the cluster's name, how many candidates end
    the flow election (overriding the node settings), how sealed values are opened, which
    further commands it answers, the signer that authenticates commands (required), its
    labels (the pools of tenants it runs, ``engine.cluster.placement``) and what signs and checks
    its load-balanced transfers (by default a MAC under the command signer's cluster key)."""

    node_id: str
    redis_url: str
    cluster: str = "default"
    election_max_candidates: int | None = None
    unseal: Callable[[dict], dict] | None = None
    register_commands: Callable[[CommandListener, StandaloneNode], None] | None = None
    signer: CommandSigner | None = None
    labels: tuple[str, ...] = ()
    #: Signs and checks load-balanced batches (``engine.balance.trust``): ``(signer, verifier)``.
    transfer_trust: tuple[object, object] | None = None


class ClusterAgent:
    """Keeps ``node`` in the cluster ``keys`` names, through the Redis at ``redis_url``.

    ``role`` and ``state`` must be the objects the node's flow controller was given.
    ``register_commands`` adds command handlers to the listener (status, processor and queue
    commands). See the module docstring for what the agent does.
    """

    def __init__(self, node: StandaloneNode, node_id: str, redis_url: str, keys: ClusterKeys, config: ClusterConfig,
                 role: NodeRole, state: ClusterStateProvider, signer: CommandSigner,
                 register_commands: Callable[[CommandListener, StandaloneNode], None] | None = None) -> None:
        self.node = node
        self.node_id = node_id
        self.keys = keys
        self.config = config
        self.role = role
        self.state = state
        timeout = max(0.2, min(1.0, config.heartbeat_interval / 4))
        self.client = redis.Redis.from_url(redis_url, socket_timeout=timeout, socket_connect_timeout=timeout)
        self.listener = CommandListener(redis.Redis.from_url(redis_url, socket_timeout=5, socket_connect_timeout=timeout),
                                        keys, node_id, signer, on_refused=self._command_refused)
        self.signer = signer
        self.listener.register("deploy", self._deploy_command)
        if register_commands is not None:
            register_commands(self.listener, node)
        self.coordinator_lease = Lease(self.client, keys, "coordinator", node_id, config.lease_ttl)
        self.primary_lease = Lease(self.client, keys, "primary", node_id, config.lease_ttl)
        self.coordinator = Coordinator(self.client, keys, config.heartbeat_ttl)
        self.election = ElectionSettings(config.election_max_wait, config.election_max_candidates or None)
        state.fence = lambda: self.primary_lease.value if self.primary_lease.token else ""
        self.joined = False
        self.record: NodeRecord | None = None
        self.refused = ""
        self._refused_fingerprint = ""
        self._fingerprint: tuple[object, str] | None = None
        self._unreported: DeployReport | None = None  # a flow the loop took before its deploy command came
        self._started_at = time.time()
        self._last_beat = 0.0
        self._flow_lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- life ---------------------------------------------------------------------------

    def connect(self) -> bool:
        """Join the cluster if Redis answers — before the node starts its flow, so that it never
        runs primary-node-only processors as a standalone node while a cluster exists."""
        try:
            self._join()
        except redis.RedisError as error:
            log.warning("node %s: Redis does not answer (%s); running standalone as the primary node until it does",
                        self.node_id, error)
        return self.joined

    def start(self) -> None:
        """Answer commands and do the cluster duties, from now until ``stop``."""
        self.listener.start()
        self._tick()
        self._thread = threading.Thread(target=self._run, name=f"cluster-{self.node_id}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Leave: stop the threads, give up the roles and withdraw the heartbeat."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.listener.stop()
        self._step_down_primary()
        self.primary_lease.release()
        self.coordinator_lease.release()
        try:
            self.client.delete(self.keys.heartbeat(self.node_id))
        except redis.RedisError:
            pass

    def _run(self) -> None:
        while not self._stop.wait(self.config.heartbeat_interval / 2):
            self._tick()

    def _command_refused(self, message: str) -> None:
        """A refused command (or cluster flow) is a bulletin of the node (not of any tenant's component)."""
        controller = self.node.controller
        if controller is not None:
            controller.bulletins.post("WARN", f"node:{self.node_id}:commands", self.node_id, "Node", "", message)

    def _tick(self) -> None:
        try:
            if not self.joined:
                self._join()
            self._heartbeat()
            self._follow()
            self._hold_roles()
        except redis.RedisError as error:
            self._lost(error)
        except Exception:
            log.exception("node %s: cluster duties failed", self.node_id)

    # -- membership ---------------------------------------------------------------------

    def _join(self) -> None:
        self.client.ping()
        self.state.use(self.client)
        self._step_down_primary()
        self.role.is_primary = False
        self.role.is_clustered = True
        self.joined = True
        log.info("node %s: joined cluster %s", self.node_id, self.keys.cluster)

    def _lost(self, error: Exception) -> None:
        if self.joined and (self.primary_lease.token or self.coordinator_lease.token):
            log.warning("node %s: Redis unreachable (%s); giving up the cluster roles until it is back",
                        self.node_id, error)
        self._step_down_primary()
        self.primary_lease.token = 0
        self.coordinator_lease.token = 0

    def _heartbeat(self, force: bool = False) -> None:
        now = time.time()
        if not force and now - self._last_beat < self.config.heartbeat_interval * 0.95:
            return
        controller = self.node.controller
        queued = sum(self.node.queued_flowfiles().values())
        queued_bytes = sum(c.queue.size().bytes for c in controller.connections.values()) if controller else 0
        active = sum(n.active_thread_count for n in controller.connectables()) if controller else 0
        record = self.record
        beat = Heartbeat(
            self.node_id, socket.gethostname(), self._started_at, now, self.fingerprint(),
            flow_version=self._flow_version(), active_threads=active, queued_count=queued, queued_bytes=queued_bytes,
            disconnected=record is not None and record.state in OPERATOR_OUT and record.by_operator,
            refused=self.refused, labels=list(self.node.placement.labels) if self.node.placement else [],
            spark_ui_url=node_runtime().ui_url or "")
        self.client.set(self.keys.heartbeat(self.node_id), beat.encode(), px=int(self.config.heartbeat_ttl * 1000))
        self._last_beat = now

    def fingerprint(self) -> str:
        """The fingerprint of the bundle this node runs (computed again only when its flow changes)."""
        with self._flow_lock:  # not halfway through taking a flow (flow and authorizations change apart)
            document = self.node.document
            if self._fingerprint is None or self._fingerprint[0] is not document:
                self._fingerprint = (document, local_bundle(self.node).fingerprint)
            return self._fingerprint[1]

    def _flow_version(self) -> str:
        if read_fingerprint(self.client, self.keys) != self.fingerprint():
            return ""
        return (self.client.hget(self.keys.flow, "version") or b"").decode()

    def _follow(self) -> None:
        raw = self.client.hget(self.keys.nodes, self.node_id)
        previous, self.record = self.record, NodeRecord.decode(raw) if raw else None
        record = self.record
        if record is not None and record.by_operator and record.state in OPERATOR_OUT:
            if previous is None or previous.state != record.state:
                log.info("node %s: %s by an operator; keeps processing its data, takes no role", self.node_id,
                         record.state.value.lower())
            self._heartbeat(force=record.state is NodeState.DISCONNECTING)
            return
        cluster_fingerprint = read_fingerprint(self.client, self.keys)
        if cluster_fingerprint is None:
            ballot = self.client.hget(self.keys.ballots, self.node_id)
            if ballot is None or ballot.decode() != self.fingerprint():
                bundle = local_bundle(self.node)
                cast_ballot(self.client, self.keys, self.node_id, bundle, self.signer)
                log.info("node %s: offered its flow %s in the flow election", self.node_id, bundle.fingerprint[:12])
        elif cluster_fingerprint not in (self.fingerprint(), self._refused_fingerprint):
            with self._flow_lock:
                report = self._take()
                if report.status == "applied":
                    self._unreported = report

    def _take(self) -> DeployReport:
        """Take the cluster's flow now (see ``engine.cluster.inherit``)."""
        with self._flow_lock:
            flow = read_flow(self.client, self.keys)
            if flow is None:
                return DeployReport(self.node_id, "failed", "the cluster has no flow to deploy")
            try:
                verify_flow(flow, self.keys, self.signer)
            except UnsignedFlow as refusal:
                self._refused_fingerprint = flow.fingerprint
                self._command_refused(f"the cluster's flow {flow.fingerprint[:12]} was not taken: {refusal}")
                log.warning("node %s: the cluster's flow %s was not taken: %s", self.node_id, flow.fingerprint[:12],
                            refusal)
                return DeployReport(self.node_id, "refused", str(refusal), flow.fingerprint)
            report = inherit(self.node, self.node_id, flow.bundle)
            self._fingerprint = None
            if report.status == "refused":
                self.refused, self._refused_fingerprint = report.message, flow.fingerprint
            elif report.ok:
                self.refused, self._refused_fingerprint = "", ""
            if report.status != "unchanged":
                self._heartbeat(force=True)
            return report

    # -- roles --------------------------------------------------------------------------

    def _hold_roles(self) -> None:
        record = self.record
        out = bool(self.refused) or (record is not None and record.by_operator and record.state in OPERATOR_OUT)
        if out:
            self._step_down_primary()
            self.primary_lease.release()
            self.coordinator_lease.release()
            return
        if self.coordinator_lease.hold():
            elected = run_election(self.client, self.keys, self.election, signer=self.signer)
            self.coordinator.review(self.coordinator_lease.value, elected)
        connected = record is not None and record.state is NodeState.CONNECTED
        if connected and self.primary_lease.hold():
            self.role.primary_until = self.primary_lease.valid_until
            if not self.role.appointed:
                log.info("node %s: primary node (token %d)", self.node_id, self.primary_lease.token)
                self._set_primary(True)
        else:
            if not connected:
                self.primary_lease.release()
            self._step_down_primary()

    def _set_primary(self, is_primary: bool) -> None:
        controller = self.node.controller
        if controller is not None:
            controller.set_primary(is_primary)
        else:
            self.role.is_primary = is_primary

    def _step_down_primary(self) -> None:
        """Stop being the primary node: no new task of a primary-node-only processor starts, and
        those running are waited for (within the lease's time), before anyone can take over."""
        if not self.role.appointed:
            return
        self._set_primary(False)
        controller = self.node.controller
        deadline = time.monotonic() + self.config.lease_ttl / 2
        while controller is not None and time.monotonic() < deadline and any(
                p.active_thread_count for p in controller.processors.values() if p.primary_only):
            time.sleep(0.01)
        log.info("node %s: no longer the primary node", self.node_id)

    # -- commands -----------------------------------------------------------------------

    def _deploy_command(self, command: Command) -> dict:
        deploy_id = str(command.args.get("deploy_id") or command.id)
        record = self.record
        if record is not None and record.by_operator and record.state in OPERATOR_OUT:
            report = DeployReport(self.node_id, "refused", "this node is disconnected from the cluster")
        else:
            with self._flow_lock:
                report = self._take()
                unreported, self._unreported = self._unreported, None
            if report.status == "unchanged" and unreported is not None and unreported.fingerprint == report.fingerprint:
                report = unreported  # the loop applied the deployed flow just before this command came
        write_report(self.client, self.keys, deploy_id, report)
        return report.as_dict()
