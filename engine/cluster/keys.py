"""The Redis keys of one cluster, in one place so that nodes and the control plane agree.

Every key starts with ``flowsite:<cluster>:``:

| key | type | holds |
|---|---|---|
| ``heartbeat:<node>`` | string, expiring | the node's last heartbeat (JSON); its expiry is the node's presence |
| ``nodes`` | hash | node id → the node's record (JSON): state, reason, operator requests |
| ``lock:<role>`` | string, expiring | ``<node> <token>``: who holds the role (coordinator, primary) |
| ``fence:<role>`` | counter | the last fencing token handed out for the role |
| ``election`` | hash | the flow election: state, start time, elected fingerprint |
| ``election:ballots`` | hash | node id → the fingerprint of the bundle it offered |
| ``election:bundles`` | hash | fingerprint → bundle (compressed JSON) |
| ``election:macs`` | hash | node id → the MAC of its ballot (``engine.cluster.signing``) |
| ``flow`` | hash | the cluster's flow: fingerprint, bundle, version, deploy id |
| ``commands:<node>`` | stream | commands to one node |
| ``reply:<request>`` | list, expiring | the nodes' replies to one request |
| ``deploy:<deploy id>`` | hash, expiring | node id → the node's report on a deployment |
| ``state:<component>`` | hash | cluster-scoped state of a component (values, and ``__version``) |
| ``lb:<node>`` | stream | batches of load-balanced FlowFiles sent to one node (``engine.balance.wire``) |
| ``lback:<node>`` | stream | the acknowledgements of the batches one node sent |
| ``removed`` | hash | node id → when an operator removed it (load balancing drops its partitions) |
"""

from __future__ import annotations

ROLES = ("coordinator", "primary")


class ClusterKeys:
    """Key names of the cluster called ``cluster``."""

    def __init__(self, cluster: str = "default") -> None:
        if not cluster or any(ch in cluster for ch in ": \t\n"):
            raise ValueError(f"cluster name {cluster!r} must be non-empty, without ':' or spaces")
        self.cluster = cluster
        self.prefix = f"flowsite:{cluster}:"

    def heartbeat(self, node_id: str) -> str:
        return f"{self.prefix}heartbeat:{node_id}"

    @property
    def heartbeat_pattern(self) -> str:
        return f"{self.prefix}heartbeat:*"

    @property
    def nodes(self) -> str:
        return f"{self.prefix}nodes"

    def lock(self, role: str) -> str:
        return f"{self.prefix}lock:{role}"

    def fence(self, role: str) -> str:
        return f"{self.prefix}fence:{role}"

    @property
    def election(self) -> str:
        return f"{self.prefix}election"

    @property
    def ballots(self) -> str:
        return f"{self.prefix}election:ballots"

    @property
    def bundles(self) -> str:
        return f"{self.prefix}election:bundles"

    @property
    def ballot_macs(self) -> str:
        return f"{self.prefix}election:macs"

    @property
    def flow(self) -> str:
        return f"{self.prefix}flow"

    def commands(self, node_id: str) -> str:
        return f"{self.prefix}commands:{node_id}"

    def reply(self, request_id: str) -> str:
        return f"{self.prefix}reply:{request_id}"

    def deploy(self, deploy_id: str) -> str:
        return f"{self.prefix}deploy:{deploy_id}"

    def state(self, component_id: str) -> str:
        return f"{self.prefix}state:{component_id}"

    def load_balance(self, node_id: str) -> str:
        return f"{self.prefix}lb:{node_id}"

    def load_balance_acks(self, node_id: str) -> str:
        return f"{self.prefix}lback:{node_id}"

    @property
    def removed(self) -> str:
        return f"{self.prefix}removed"
