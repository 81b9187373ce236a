"""Which node's partition a FlowFile of a load-balanced connection goes to.

A partitioner looks at a FlowFile and the cluster topology (the sorted node list, this node, the
reachable peers) and names a node. The strategies are NiFi's:

- ``DO_NOT_LOAD_BALANCE``: this node.
- ``ROUND_ROBIN``: the next reachable node (this node counts as reachable); when a node cannot
  be reached its queued data goes to the others (rebalance on failure), and a resize moves only
  the data of removed nodes.
- ``SINGLE_NODE``: the first node of the sorted list, so every such connection of every node
  picks the same one, and the persisted list keeps it across restarts; data waits for it.
- ``PARTITION_BY_ATTRIBUTE``: Java's ``String.hashCode`` of the attribute's value (a missing
  attribute hashes to 0, so it is a value like any other), then jump consistent hashing
  (Lamping and Veach, as Guava's ``Hashing.consistentHash`` and NiFi) over the sorted list.
  Jump hashing needs no ring or virtual nodes and, when a node is added at the end of the
  list, moves only the keys that now belong to it (about 1/N of them). Data waits for a node
  that is away rather than failing over, so a key never lands on two nodes.
- ``OFFLOAD``: round robin over the other nodes, reachable ones first (used while this node
  offloads; never this node while there is another).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Protocol

from engine.flowfile import FlowFile

if TYPE_CHECKING:
    from engine.balance.topology import ClusterTopology

__all__ = [
    "DO_NOT_LOAD_BALANCE", "OFFLOAD", "PARTITION_BY_ATTRIBUTE", "ROUND_ROBIN", "SINGLE_NODE", "STRATEGIES",
    "AttributePartitioner", "FirstNodePartitioner", "LocalPartitioner", "OffloadPartitioner", "Partitioner",
    "RoundRobinPartitioner", "java_string_hash", "jump_consistent_hash", "make_partitioner",
]

DO_NOT_LOAD_BALANCE = "DO_NOT_LOAD_BALANCE"
ROUND_ROBIN = "ROUND_ROBIN"
SINGLE_NODE = "SINGLE_NODE"
PARTITION_BY_ATTRIBUTE = "PARTITION_BY_ATTRIBUTE"
OFFLOAD = "OFFLOAD"
#: The strategies a connection can be configured with (OFFLOAD is the node's, not a connection's).
STRATEGIES = (DO_NOT_LOAD_BALANCE, ROUND_ROBIN, SINGLE_NODE, PARTITION_BY_ATTRIBUTE)

_MASK64 = (1 << 64) - 1
_LCG = 2862933555777941757


def java_string_hash(value: str) -> int:
    """Java's ``String.hashCode``: 31-polynomial over the UTF-16 code units, as a signed 32-bit int."""
    units = value.encode("utf-16-be", "surrogatepass")
    h = 0
    for index in range(0, len(units), 2):
        h = (31 * h + (units[index] << 8 | units[index + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def jump_consistent_hash(key: int, buckets: int) -> int:
    """The bucket in ``[0, buckets)`` of a 64-bit ``key`` (Lamping and Veach; Guava's consistentHash).

    A negative key is taken as its two's complement, as Java widens an int to a long.
    """
    if buckets < 1:
        raise ValueError("jump consistent hashing needs at least one bucket")
    key &= _MASK64
    bucket, candidate = -1, 0
    while candidate < buckets:
        bucket = candidate
        key = (key * _LCG + 1) & _MASK64
        candidate = int((bucket + 1) * ((1 << 31) / ((key >> 33) + 1)))
    return bucket


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
    """PARTITION_BY_ATTRIBUTE: jump consistent hash of the attribute value's Java hash code."""

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
        key = java_string_hash(value) if value is not None else 0
        return topology.nodes[jump_consistent_hash(key, len(topology.nodes))]


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
