"""Load-balanced flows on real node processes, and what each node did with them.

The flow: GetFile on the primary node only picks up the files of ``inbox``; UpdateAttribute sets
``key`` to the part of the file name before ``-``; the load-balanced connection under test carries
the FlowFiles to PutFile, which writes them into ``outbox`` (a name already there goes to a second
PutFile writing into ``duplicates``, so a FlowFile delivered twice is seen). Which node wrote a file
is read from the SEND events of PutFile in each node's provenance, once the nodes have stopped;
``transfers`` pairs each FlowFile a node received over a load-balanced connection with the
SEND and DROP events of its sender.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any, Collection, Mapping

import redis

from engine.balance.receiver import COMPONENT_TYPE
from engine.balance.sender import SEND_DETAILS
from engine.balance.topology import TOPOLOGY_FILE
from engine.cluster.bus import CommandBus
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType
from engine.provenance.query import ProvenanceQuery
from engine.provenance.repository import ProvenanceRepository
from engine.testing.flows import connection, flow, processor
from flowsite.cluster.redis import command_signer
from tests.workers.cluster import Cluster, wait_until

__all__ = ["balanced_flow", "digests", "events", "fill_inbox", "node_command", "topology_nodes", "transfers",
           "wait_topology", "written_by"]


def balanced_flow(inbox: Path, outbox: Path, duplicates: Path, strategy: str, attribute: str = "",
                  compression: str = "DO_NOT_COMPRESS", put_state: str = "RUNNING") -> dict:
    """The flow of the module docstring with ``strategy`` on the connection to PutFile (whose
    scheduled state is ``put_state``: ENABLED (stopped) holds what arrives in the connection's queue)."""
    balanced = {"loadBalanceStrategy": strategy, "loadBalanceCompression": compression,
                "backPressureObjectThreshold": 1_000_000, "backPressureDataSizeThreshold": "10 GB"}
    if attribute:
        balanced["partitioningAttribute"] = attribute
    return flow(processors=[
        processor("get", "GetFile", {"Input Directory": str(inbox), "Keep Source File": "false", "Batch Size": "100"},
                  executionNode="PRIMARY", schedulingPeriod="100 millis"),
        processor("key", "UpdateAttribute", {"key": "${filename:substringBefore('-')}"}),
        processor("put", "PutFile", {"Directory": str(outbox), "Conflict Resolution Strategy": "fail"},
                  auto_terminate=["success"], state=put_state),
        processor("dup", "PutFile", {"Directory": str(duplicates), "Conflict Resolution Strategy": "replace"},
                  auto_terminate=["success", "failure"]),
    ], connections=[
        connection("c-get", "get", "key"),
        connection("c-lb", "key", "put", **balanced),
        connection("c-dup", "put", "dup", ["failure"]),
    ])


def fill_inbox(inbox: Path, count: int, keys: int = 0, size: int = 64, first: int = 0) -> dict[str, str]:
    """Write ``count`` files (named ``<key>-<n>``, n from ``first``, ``keys`` distinct keys, else
    one key per file) into a staging folder and move them into ``inbox`` at once; returns
    name -> SHA-256."""
    staging = inbox.parent / (inbox.name + ".staging")
    staging.mkdir(parents=True, exist_ok=True)
    inbox.mkdir(parents=True, exist_ok=True)
    written = {}
    for n in range(first, first + count):
        key = f"k{n % keys}" if keys else f"k{n}"
        name = f"{key}-{n:06d}"
        body = (f"{name}:" * (size // (len(name) + 1) + 1)).encode()[:size]
        (staging / name).write_bytes(body)
        written[name] = hashlib.sha256(body).hexdigest()
    for path in staging.iterdir():
        path.rename(inbox / path.name)
    return written


def digests(directory: Path) -> dict[str, str]:
    """File name -> SHA-256 of every file in ``directory`` (PutFile's dot-named files in the
    making left out)."""
    found = {}
    for path in directory.iterdir() if directory.exists() else ():
        if not path.name.startswith("."):
            try:
                found[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
            except FileNotFoundError:  # renamed meanwhile
                pass
    return found


def events(data_dir: Path, event_type: ProvenanceEventType, component: str | None = None) -> list[ProvenanceEvent]:
    """The ``event_type`` events (of ``component``, else of any) in the provenance of the node of
    ``data_dir`` (the node must have stopped)."""
    found: list[ProvenanceEvent] = []
    with ProvenanceRepository(data_dir / "provenance_repository") as repository:
        before = None
        while True:
            result = repository.query(ProvenanceQuery(component_id=component, event_type=event_type,
                                                      limit=10_000, before_event_id=before))
            found.extend(result.events)
            if result.next_cursor is None:
                return found
            before = result.next_cursor


def written_by(data_dir: Path, component: str = "put") -> dict[str, dict[str, str]]:
    """filename -> attributes of every FlowFile ``component`` sent (wrote) on the node of
    ``data_dir`` (read from its provenance; the node must have stopped)."""
    return {event.attributes["filename"]: dict(event.attributes)
            for event in events(data_dir, ProvenanceEventType.SEND, component)}


def transfers(data_dirs: Mapping[str, Path], connection_id: str,
              foreign: Collection[str] = ()) -> dict[tuple[str, str], tuple[str, str]]:
    """(sender node, sender's FlowFile uuid) -> (receiver node, filename) of every FlowFile that
    crossed ``connection_id`` between the (stopped) nodes of ``data_dirs``, once each was checked
    to be linked on both ends: the receiver's one RECEIVE event names the sender's uuid as its
    source-system FlowFile id, and the sender recorded one SEND to that receiver and a DROP of it.
    Batches from the ``foreign`` senders (no node of ``data_dirs``) are checked on the receiving
    end only."""
    received: Counter = Counter()
    pairs: dict[tuple[str, str], tuple[str, str]] = {}
    sent: dict[tuple[str, str], tuple[str, str]] = {}
    for node, data_dir in data_dirs.items():
        for event in events(data_dir, ProvenanceEventType.RECEIVE, connection_id):
            assert event.component_type == COMPONENT_TYPE, event
            sender = event.transit_uri.removeprefix("flowsite://").split("/", 1)[0]
            assert event.transit_uri == f"flowsite://{sender}/loadbalance/{connection_id}", event.transit_uri
            key = (sender, event.source_system_flowfile_id)
            received[key] += 1
            pairs[key] = (node, event.attributes["filename"])
        sends = events(data_dir, ProvenanceEventType.SEND, connection_id)
        assert len({e.flowfile_uuid for e in sends}) == len(sends), f"node {node} sent a FlowFile twice"
        dropped = {e.flowfile_uuid for e in events(data_dir, ProvenanceEventType.DROP, connection_id)}
        for event in sends:
            assert event.details == SEND_DETAILS, event
            assert event.flowfile_uuid in dropped, f"node {node} sent {event.flowfile_uuid} but did not drop it"
            receiver = event.transit_uri.removeprefix("flowsite://").split("/", 1)[0]
            sent[(node, event.flowfile_uuid)] = (receiver, event.attributes["filename"])
    twice = {key: count for key, count in received.items() if count > 1}
    assert not twice, f"FlowFiles received more than once: {twice}"
    linked = {key: value for key, value in pairs.items() if key[0] not in foreign}
    assert linked == sent, (f"received but not sent: {sorted(linked.keys() - sent.keys())[:5]}; "
                             f"sent but not received: {sorted(sent.keys() - linked.keys())[:5]}")
    return pairs


def node_command(cluster: Cluster, node: str, kind: str, timeout: float = 10, **args: Any) -> Any:
    """Ask ``node`` of ``cluster`` the command ``kind`` with ``args`` through the command bus;
    returns the result (fails on an error or no answer)."""
    client = redis.Redis(host="127.0.0.1", port=cluster.redis_port, socket_timeout=timeout + 5)
    try:
        reply = CommandBus(client, cluster.keys, command_signer()).request([node], kind, args, timeout)[node]
    finally:
        client.close()
    assert reply.ok, f"node {node} answered {kind}: {reply.error or 'nothing (timed out)'}"
    return reply.result


def topology_nodes(data_dir: Path) -> list[str] | None:
    """The node list a node saved (``state/cluster-topology.json``), or None."""
    try:
        return json.loads((data_dir / TOPOLOGY_FILE).read_text())["nodes"]
    except (FileNotFoundError, ValueError):
        return None


def wait_topology(cluster, nodes, expected, timeout: float = 30) -> None:
    """Wait until each of ``nodes`` has saved the node list ``expected``."""
    wait_until(lambda: all(topology_nodes(cluster.nodes[n].data_dir) == sorted(expected) for n in nodes), timeout,
               f"nodes {nodes} list {sorted(expected)} in their topology "
               f"({ {n: topology_nodes(cluster.nodes[n].data_dir) for n in nodes} })")
