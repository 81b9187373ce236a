"""The cluster's node list as load balancing sees it, kept on disk across restarts.

A :class:`ClusterTopology` is a value: the sorted node ids, this node's id and the peers that
can be reached now. A :class:`TopologyStore` holds the current one for a node: a node joins the
list when it becomes CONNECTED and leaves it when it is OFFLOADING, OFFLOADED or removed from the
cluster; a plain DISCONNECTED node keeps its place (its partitions wait for it) and is only
unreachable. The list (not reachability) is saved in ``state/cluster-topology.json`` through the
atomic-file helper, so a restarted cluster partitions data as before instead of reshuffling it.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from engine import fileops
from engine.damage import Damage

__all__ = ["ClusterTopology", "TopologyError", "TopologyStore", "TOPOLOGY_FILE"]

log = logging.getLogger(__name__)

#: Where a node keeps its topology, relative to its data directory.
TOPOLOGY_FILE = Path("state") / "cluster-topology.json"
_VERSION = 1
#: Node states that keep a node in the list, reachable or not.
_REACHABLE_STATES = frozenset({"CONNECTED"})
_LEAVING_STATES = frozenset({"OFFLOADING", "OFFLOADED", "REMOVED"})


class TopologyError(Exception):
    """The topology could not be saved (the message names the file and what to do)."""


@dataclass(frozen=True)
class ClusterTopology:
    """The sorted node ids, this node's id and the reachable peers (this node is always reachable)."""

    local_node: str
    nodes: tuple[str, ...] = ()
    reachable: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(sorted(set(self.nodes))))
        object.__setattr__(self, "reachable", frozenset(self.reachable) & frozenset(self.nodes))

    @classmethod
    def alone(cls, local_node: str) -> ClusterTopology:
        """A topology holding only this node."""
        return cls(local_node, (local_node,))

    @property
    def peers(self) -> tuple[str, ...]:
        """The other nodes of the list."""
        return tuple(node for node in self.nodes if node != self.local_node)

    def is_reachable(self, node: str) -> bool:
        """True for this node and for the connected peers."""
        return node == self.local_node or node in self.reachable

    def with_node(self, node: str, *, reachable: bool) -> ClusterTopology:
        """This topology with ``node`` in the list, reachable or not."""
        reach = self.reachable | {node} if reachable else self.reachable - {node}
        return ClusterTopology(self.local_node, (*self.nodes, node), reach)

    def without_node(self, node: str) -> ClusterTopology:
        """This topology without ``node``."""
        return ClusterTopology(self.local_node, tuple(n for n in self.nodes if n != node), self.reachable - {node})

    def with_reachable(self, node: str, reachable: bool) -> ClusterTopology:
        """This topology with ``node`` (if listed) reachable or not."""
        if node not in self.nodes:
            return self
        return self.with_node(node, reachable=reachable)

    def as_json(self) -> dict[str, Any]:
        """What is saved: the node list and this node's id (reachability is not kept)."""
        return {"version": _VERSION, "local_node": self.local_node, "nodes": list(self.nodes)}


Listener = Callable[[ClusterTopology], None]


class TopologyStore:
    """This node's current topology: saved on every change of the list, listeners told of every change.

    A file that cannot be read at start-up does not stop the node: it starts from a list
    holding only itself, logs a warning naming the file and what to do, and keeps the
    problem in ``damage`` (for a bulletin).
    """

    def __init__(self, data_dir: str | Path, local_node: str) -> None:
        self.path = Path(data_dir) / TOPOLOGY_FILE
        self.damage: Damage | None = None
        # Re-entrant: listeners are told under it, so they hear changes in order, and may ask again.
        self._lock = threading.RLock()
        self._listeners: list[Listener] = []
        self._current = self._load(local_node)

    @property
    def current(self) -> ClusterTopology:
        """The topology now."""
        return self._current

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(topology)`` after each change (in the changing thread, in order)."""
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop telling ``listener``."""
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def node_state_changed(self, node: str, state: str) -> ClusterTopology:
        """Apply a node's new connection state (a ``NodeState`` value, ``OFFLOADING``,
        ``OFFLOADED`` or ``REMOVED``); returns the topology after it.

        Raises :class:`TopologyError` when the new list cannot be saved: then nothing changed.
        """
        with self._lock:
            current = self._current
            if state in _LEAVING_STATES:
                updated = current.without_node(node)
            elif state in _REACHABLE_STATES:
                updated = current.with_node(node, reachable=True)
            else:
                updated = current.with_reachable(node, False)
            if updated == current:
                return current
            if updated.nodes != current.nodes:
                self._save(updated)
            self._current = updated
            for listener in list(self._listeners):
                try:
                    listener(updated)
                except Exception:
                    log.exception("a cluster topology listener failed")
        return updated

    def node_removed(self, node: str) -> ClusterTopology:
        """A node was removed from the cluster: its partitions go."""
        return self.node_state_changed(node, "REMOVED")

    def connected_nodes(self, nodes: Iterable[str]) -> ClusterTopology:
        """Apply a whole view: ``nodes`` are CONNECTED, every other listed peer unreachable."""
        connected = set(nodes)
        with self._lock:
            for node in connected:
                self.node_state_changed(node, "CONNECTED")
            for node in self._current.peers:
                if node not in connected:
                    self.node_state_changed(node, "DISCONNECTED")
            return self._current

    # -- disk -----------------------------------------------------------------------------

    def _save(self, topology: ClusterTopology) -> None:
        data = json.dumps(topology.as_json(), indent=1).encode()
        try:
            fileops.make_directory(self.path.parent)
            fileops.write_atomically(self.path, data)
        except OSError as error:
            raise TopologyError(
                f"could not save the cluster topology to {self.path} ({error}); the file still holds the previous "
                "node list and the change was not applied. Free space or fix the disk; the change is applied "
                "again with the next cluster state") from error

    def _load(self, local_node: str) -> ClusterTopology:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return ClusterTopology.alone(local_node)
        offset, found = None, ""
        try:
            document = json.loads(data)
            if not isinstance(document, dict) or document.get("version") != _VERSION:
                found = f"not a version {_VERSION} topology document"
            elif not isinstance(document.get("nodes"), list) or not all(
                    isinstance(node, str) and node for node in document["nodes"]):
                found = "its node list is not a list of node ids"
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            offset = getattr(error, "pos", None) if isinstance(error, json.JSONDecodeError) else error.start
            found = f"not valid JSON ({error})"
        if found:
            self.damage = Damage(
                "cluster topology", str(self.path), offset, found,
                "the node starts with only itself in the list and adds the others as they connect, so data "
                "partitioned by attribute or sent to a single node may move once",
                "Restore the file from a backup before the cluster's nodes connect, or delete it to accept "
                "the new list.")
            log.warning("%s", self.damage)
            return ClusterTopology.alone(local_node)
        if document.get("local_node") not in (None, local_node):
            log.warning("cluster topology %s was saved by node %s; this node is %s: it takes that node's place",
                        self.path, document.get("local_node"), local_node)
            document["nodes"] = [node for node in document["nodes"] if node != document["local_node"]]
        return ClusterTopology(local_node, (*document["nodes"], local_node))
