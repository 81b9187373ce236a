"""Which node's partition a FlowFile of a load-balanced connection goes to.

A partitioner looks at a FlowFile and the cluster topology (the sorted node list, this node, the
reachable peers) and names a node. The strategies are NiFi's:

- ``DO_NOT_LOAD_BALANCE``: this node.
- ``ROUND_ROBIN``: the next reachable node (this node counts as reachable); when a node cannot
  be reached its queued data goes to the others (rebalance on failure), and a resize moves only
  the data of removed nodes.
- ``SINGLE_NODE``: the first node of the sorted list, so every such connection of every node
  picks the same one, and the persisted list keeps it across restarts; data waits for it.
- ``PARTITION_BY_ATTRIBUTE``: rendezvous (highest random weight) hashing of the attribute's
  value over the node list: each node scores the value (a 64-bit hash of the value mixed with
  one of the node's id) and the highest score wins. A missing attribute is a value of its own, so all such FlowFiles meet on
  one node. Unlike NiFi's jump consistent hashing over the sorted node list — which moves only
  1/N of the keys when a node sorts last and many more when it sorts between existing ones, or
  when any but the last node leaves — rendezvous hashing moves exactly the keys the change must
  move whatever the node ids: the keys a new node now wins, or the keys of a node that left. It
  costs one hash per node and value; values seen recently are remembered. Data waits for a node
  that is away rather than failing over, so a key never lands on two nodes.
- ``OFFLOAD``: round robin over the other nodes, reachable ones first (used while this node
  offloads; never this node while there is another).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from typing import TYPE_CHECKING, Protocol

from engine.flowfile import FlowFile

if TYPE_CHECKING:
    from engine.balance.topology import ClusterTopology

__all__ = [
    "DO_NOT_LOAD_BALANCE", "OFFLOAD", "PARTITION_BY_ATTRIBUTE", "ROUND_ROBIN", "SINGLE_NODE", "STRATEGIES",
    "AttributePartitioner", "FirstNodePartitioner", "LocalPartitioner", "OffloadPartitioner", "Partitioner",
    "RoundRobinPartitioner", "make_partitioner", "rendezvous_node",
]

DO_NOT_LOAD_BALANCE = "DO_NOT_LOAD_BALANCE"
ROUND_ROBIN = "ROUND_ROBIN"
SINGLE_NODE = "SINGLE_NODE"
PARTITION_BY_ATTRIBUTE = "PARTITION_BY_ATTRIBUTE"
OFFLOAD = "OFFLOAD"
#: The strategies a connection can be configured with (OFFLOAD is the node's, not a connection's).
STRATEGIES = (DO_NOT_LOAD_BALANCE, ROUND_ROBIN, SINGLE_NODE, PARTITION_BY_ATTRIBUTE)

_MISSING = b"\x00missing"
_SCORE_CACHE = 65_536


_MASK64 = (1 << 64) - 1


@functools.lru_cache(maxsize=64)
def _node_seeds(nodes: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    return tuple((node, int.from_bytes(hashlib.blake2b(node.encode(), digest_size=8).digest(), "big"))
                 for node in nodes)


@functools.lru_cache(maxsize=_SCORE_CACHE)
def rendezvous_node(value: str | None, nodes: tuple[str, ...]) -> str:
    """The node of ``nodes`` (non-empty) that scores ``value`` highest (None: a missing attribute).

    A node's score is the SplitMix64 finaliser of the value's 64-bit BLAKE2b hash XOR the node's
    own hash: one strong hash per value, a cheap independent-looking mix per node.
    """
    data = _MISSING if value is None else b"\x01" + value.encode("utf-8", "surrogatepass")
    hashed = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")
    best, best_score = nodes[0], -1
    for node, seed in _node_seeds(nodes):
        x = hashed ^ seed
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
        x ^= x >> 31
        if x > best_score:
            best, best_score = node, x
    return best


class Partitioner(Protocol):
    """Chooses a FlowFile's node; says what a topology change or an unreachable node means."""

    strategy: str
    #: A change of the node list re-runs the partitioner over every queued FlowFile.
    rebalance_on_resize: bool
    #: An unreachable node's queued FlowFiles go to the other nodes.
    rebalance_on_failure: bool
    #: The choice depends on the FlowFile (else a whole swap file can move as one).
    reads_flowfile: bool

    def partition(self, flowfile: FlowFile | None, topology: ClusterTopology) -> str:
        """The node id for ``flowfile`` (None only when ``reads_flowfile`` is False)."""
        ...


class LocalPartitioner:
    """DO_NOT_LOAD_BALANCE: everything stays on this node."""

    strategy = DO_NOT_LOAD_BALANCE
    rebalance_on_resize = False
    rebalance_on_failure = False
    reads_flowfile = False

    def partition(self, flowfile: FlowFile | None, topology: ClusterTopology) -> str:
        return topology.local_node


class RoundRobinPartitioner:
    """ROUND_ROBIN: a counter modulo the reachable nodes of the sorted list."""

    strategy = ROUND_ROBIN
    rebalance_on_resize = False
    rebalance_on_failure = True
    reads_flowfile = False

    def __init__(self) -> None:
        self._counter = itertools.count()  # next() is atomic under the GIL

    def partition(self, flowfile: FlowFile | None, topology: ClusterTopology) -> str:
        nodes = [node for node in topology.nodes if topology.is_reachable(node)]
        if not nodes:
            return topology.local_node
        return nodes[next(self._counter) % len(nodes)]


class FirstNodePartitioner:
    """SINGLE_NODE: the first node of the sorted list, reachable or not."""

    strategy = SINGLE_NODE
    rebalance_on_resize = True
    rebalance_on_failure = False
    reads_flowfile = False

    def partition(self, flowfile: FlowFile | None, topology: ClusterTopology) -> str:
        return topology.nodes[0] if topology.nodes else topology.local_node


class AttributePartitioner:
    """PARTITION_BY_ATTRIBUTE: rendezvous hashing of the attribute's value (see the module docstring)."""

    strategy = PARTITION_BY_ATTRIBUTE
    rebalance_on_resize = True
    rebalance_on_failure = False
    reads_flowfile = True

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def partition(self, flowfile: FlowFile | None, topology: ClusterTopology) -> str:
        if not topology.nodes:
            return topology.local_node
        value = flowfile.attributes.get(self.attribute) if flowfile is not None else None
        return rendezvous_node(value, topology.nodes)


class OffloadPartitioner:
    """OFFLOAD: round robin over the other reachable nodes (all other nodes when none is
    reachable: the data waits for them); this node only when it is alone."""

    strategy = OFFLOAD
    rebalance_on_resize = True
    rebalance_on_failure = True
    reads_flowfile = False

    def __init__(self) -> None:
        self._counter = itertools.count()

    def partition(self, flowfile: FlowFile | None, topology: ClusterTopology) -> str:
        others = [node for node in topology.nodes if node != topology.local_node]
        reachable = [node for node in others if topology.is_reachable(node)]
        candidates = reachable or others
        if not candidates:
            return topology.local_node
        return candidates[next(self._counter) % len(candidates)]


def make_partitioner(strategy: str, attribute: str = "") -> Partitioner:
    """The partitioner of a strategy name (one of ``STRATEGIES`` or ``OFFLOAD``)."""
    if strategy == DO_NOT_LOAD_BALANCE:
        return LocalPartitioner()
    if strategy == ROUND_ROBIN:
        return RoundRobinPartitioner()
    if strategy == SINGLE_NODE:
        return FirstNodePartitioner()
    if strategy == PARTITION_BY_ATTRIBUTE:
        return AttributePartitioner(attribute)
    if strategy == OFFLOAD:
        return OffloadPartitioner()
    raise ValueError(f"unknown load balance strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
