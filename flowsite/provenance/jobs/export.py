"""The provenance export job: the events of a search, newest first across the nodes, up to the
request's ``max_events`` (at most ``FLOWSITE_PROVENANCE_EXPORT_MAX_EVENTS``), written as CSV or
JSON into the request store in chunks that expire with the request.

Each node is paged through with its cursor (``provenance.query`` with ``before_event_id``,
``PAGE`` events at a time) and the pages are merged as they are read: only the page of each node
at hand is held, never the whole export. A node that stops answering ends its part of the export,
which is then partial and says so.
"""

from __future__ import annotations

import csv
import heapq
import io
import json
from collections import deque
from typing import Any

from flowsite.provenance import store
from flowsite.provenance.events import Presenter
from flowsite.provenance.jobs.common import Gone, ask, finish, step, target_nodes
from flowsite.provenance.jobs.query import NO_NODE
from flowsite.provenance.scope import accesses_of

__all__ = ["COLUMNS", "run"]

#: Events asked of a node at a time.
PAGE = 1000
#: Bytes written to the store at a time.
CHUNK_BYTES = 256 * 1024
#: The columns of a CSV export: the fields of a described event (``Presenter.described``).
COLUMNS = ("id", "eventId", "clusterNodeId", "eventTime", "eventTimestamp", "eventType", "flowFileUuid",
           "fileSize", "fileSizeBytes", "componentId", "componentType", "componentName", "groupId", "eventDuration",
           "lineageDuration", "relationship", "details", "transitUri", "alternateIdentifierUri",
           "sourceSystemFlowFileId", "parentUuids", "childUuids")


class _Writer:
    """The export's file, in the chosen format, handed to the store a chunk at a time."""

    def __init__(self, request_id: str, form: str) -> None:
        self.request_id, self.form = request_id, form
        self.buffer = io.StringIO()
        self.size = 0
        self.count = 0
        if form == "CSV":
            self.csv = csv.writer(self.buffer, lineterminator="\n")
            self.csv.writerow(COLUMNS)
        else:
            self.buffer.write("[")

    def write(self, event: dict[str, Any]) -> None:
        if self.form == "CSV":
            self.csv.writerow([" ".join(value) if isinstance(value, list) else ("" if value is None else value)
                               for value in (event.get(column) for column in COLUMNS)])
        else:
            self.buffer.write(("," if self.count else "") + "\n" + json.dumps(event, separators=(",", ":")))
        self.count += 1
        if self.buffer.tell() >= CHUNK_BYTES:
            self._flush()

    def close(self) -> None:
        if self.form == "JSON":
            self.buffer.write("\n]\n")
        self._flush()

    def _flush(self) -> None:
        data = self.buffer.getvalue().encode()
        self.buffer.seek(0)
        self.buffer.truncate()
        if data:
            if not store.append_content(self.request_id, data):
                raise Gone()
            self.size += len(data)


class _Node:
    """One node's part: the page at hand and where the next one starts (None: no more)."""

    def __init__(self) -> None:
        self.events: deque[dict[str, Any]] = deque()
        self.cursor: int | None = None

    def take(self, answer: dict[str, Any], presenter: Presenter) -> _Node:
        """Hold the page ``answer`` (the design's rows of its components read at once)."""
        self.events.extend(answer.get("events") or ())
        self.cursor = answer.get("next_cursor") if answer.get("more") else None
        presenter.load(event.get("component_id") or "" for event in self.events)
        return self


def run(record: dict[str, Any]) -> None:
    """Write the export's file and record how many events it holds."""
    request, search, limit = record["request"], record["search"], record["max_events"]
    presenter = Presenter(accesses_of(record["user"], record["tenants"]))
    writer = _Writer(record["id"], record["format"])
    nodes = target_nodes(record, request.get("clusterNodeId"))
    order = {node: rank for rank, node in enumerate(sorted(nodes))}

    def page(cursor: int | None = None) -> dict[str, Any]:
        query = {**search["query"], **({"before_event_id": cursor} if cursor is not None else {})}
        return {"query": query, "scope": search["scope"], "limit": min(PAGE, limit)}

    first = ask(record, nodes, "provenance.query", page(), progress=(5, 10)) if search["scope"] else {}
    parts = {node: _Node().take(answer, presenter) for node, answer in first.items()}
    heap: list[tuple] = []

    def push(node: str) -> None:
        part = parts[node]
        if not part.events and part.cursor is not None:
            answer = ask(record, [node], "provenance.query", page(part.cursor), progress=(percent(), percent()))
            part.take(answer.get(node) or {"more": False}, presenter)
        if part.events:
            event = part.events.popleft()
            heapq.heappush(heap, (-(event.get("event_time") or 0), -order[node], -(event.get("event_id") or 0),
                                  node, event))

    def percent() -> int:
        return 10 + 85 * writer.count // limit

    for node in parts:
        push(node)
    while heap and writer.count < limit:
        *_, node, event = heapq.heappop(heap)
        writer.write(presenter.described(node, event))
        push(node)
        if writer.count % PAGE == 0:
            step(record, percent=percent(), result={"events": writer.count, "bytes": writer.size})
    writer.close()
    truncated = bool(heap) or any(part.events or part.cursor is not None for part in parts.values())
    warnings = [] if record["nodes"]["asked"] else [NO_NODE]
    finish(record, "done", result={"events": writer.count, "bytes": writer.size, "truncated": truncated,
                                   "warnings": warnings})
