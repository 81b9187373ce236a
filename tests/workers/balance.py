"""Load-balanced flows on real node processes, and what each node did with them.

The flow: GetFile on the primary node only picks up the files of ``inbox``; UpdateAttribute sets
``key`` to the part of the file name before ``-``; the load-balanced connection under test carries
the FlowFiles to PutFile, which writes them into ``outbox`` (a name already there goes to a second
PutFile writing into ``duplicates``, so a FlowFile delivered twice is seen). Which node wrote a file
is read from the SEND events of PutFile in each node's provenance, once the nodes have stopped.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from engine.provenance.event import ProvenanceEventType
from engine.provenance.query import ProvenanceQuery
from engine.provenance.repository import ProvenanceRepository
from engine.testing.flows import connection, flow, processor

__all__ = ["balanced_flow", "digests", "fill_inbox", "written_by"]


def balanced_flow(inbox: Path, outbox: Path, duplicates: Path, strategy: str, attribute: str = "",
                  compression: str = "DO_NOT_COMPRESS") -> dict:
    """The flow of the module docstring with ``strategy`` on the connection to PutFile."""
    balanced = {"loadBalanceStrategy": strategy, "loadBalanceCompression": compression,
                "backPressureObjectThreshold": 1_000_000, "backPressureDataSizeThreshold": "10 GB"}
    if attribute:
        balanced["partitioningAttribute"] = attribute
    return flow(processors=[
        processor("get", "GetFile", {"Input Directory": str(inbox), "Keep Source File": "false", "Batch Size": "100"},
                  executionNode="PRIMARY", schedulingPeriod="100 millis"),
        processor("key", "UpdateAttribute", {"key": "${filename:substringBefore('-')}"}),
        processor("put", "PutFile", {"Directory": str(outbox), "Conflict Resolution Strategy": "fail"},
                  auto_terminate=["success"]),
        processor("dup", "PutFile", {"Directory": str(duplicates), "Conflict Resolution Strategy": "replace"},
                  auto_terminate=["success", "failure"]),
    ], connections=[
        connection("c-get", "get", "key"),
        connection("c-lb", "key", "put", **balanced),
        connection("c-dup", "put", "dup", ["failure"]),
    ])


def fill_inbox(inbox: Path, count: int, keys: int = 0, size: int = 64) -> dict[str, str]:
    """Write ``count`` files (named ``<key>-<n>``, ``keys`` distinct keys, else one key per file)
    into a staging folder and move them into ``inbox`` at once; returns name -> SHA-256."""
    staging = inbox.parent / (inbox.name + ".staging")
    staging.mkdir(parents=True, exist_ok=True)
    inbox.mkdir(parents=True, exist_ok=True)
    written = {}
    for n in range(count):
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


def written_by(data_dir: Path, component: str = "put") -> dict[str, dict[str, str]]:
    """filename -> attributes of every FlowFile ``component`` sent (wrote) on the node of
    ``data_dir`` (read from its provenance; the node must have stopped)."""
    found: dict[str, dict[str, str]] = {}
    with ProvenanceRepository(data_dir / "provenance_repository") as repository:
        before = None
        while True:
            result = repository.query(ProvenanceQuery(component_id=component, event_type=ProvenanceEventType.SEND,
                                                      limit=10_000, before_event_id=before))
            for event in result.events:
                found[event.attributes["filename"]] = dict(event.attributes)
            if result.next_cursor is None:
                return found
            before = result.next_cursor
