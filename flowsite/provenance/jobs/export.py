"""The provenance export job: the events of a search, newest first across the nodes, up to the
request's ``max_events`` (at most ``FLOWSITE_PROVENANCE_EXPORT_MAX_EVENTS``), written as CSV or
JSON into the request store in chunks that expire with the request.

Each node is read a window of time at a time (``provenance.query`` with ``start_time`` and
``end_time``, at most ``PAGE`` events): a window whose events do not all fit in one answer is
halved, the newer half read first, until they do (a single millisecond is asked for up to
``MOST``, a node's limit); so every event is read once, newest first, whatever order the node
keeps them in. The nodes' events are merged as they are read: only the
window of each node at hand is held, never the whole export. A node that stops answering ends its
part of the export, which is then partial and says so.
"""

from __future__ import annotations

import csv
import heapq
import io
import json
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from flowsite.provenance import store
from flowsite.provenance.events import Presenter
from flowsite.provenance.jobs.common import Gone, ask, finish, step, target_nodes
from flowsite.provenance.jobs.query import NO_NODE
from flowsite.provenance.scope import accesses_of

__all__ = ["COLUMNS", "run"]

#: The events asked of a node at a time, and the most a node answers at once (for the events of
#: one millisecond: a session that splits a FlowFile records all its events at one time).
PAGE = 2000
MOST = 10_000
#: How far past the job's clock a node's clock may run (its newest events are not left out).
CLOCK_SLACK_MS = 60_000
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
    """One node's events of the search, newest first, read a window at a time (see the module
    docstring); ``fetch(low, high, limit)`` gives the node's answer for a window, None once the
    node is missing."""

    def __init__(self, fetch: Callable[[int, int, int], dict[str, Any] | None]) -> None:
        self.fetch = fetch
        self.windows: list[tuple[int, int, int]] = []
        self.events: deque[dict[str, Any]] = deque()
        self.truncated = False

    def take(self, answer: dict[str, Any] | None, low: int, high: int, limit: int) -> None:
        """Hold ``answer``, the node's events of the window [low, high] (at most ``limit``), or
        halve the window; a single millisecond with more events is asked again for ``MOST``."""
        if answer is None:
            self.windows.clear()
        elif answer.get("more") and low < high:
            oldest = answer.get("oldest_event_time")
            low = max(low, oldest) if oldest is not None and oldest <= high else low
            middle = (low + high) // 2
            halves = ((low, middle), (middle + 1, high))
            self.windows += [(first, last, PAGE) for first, last in halves if first <= last]
        elif answer.get("more") and limit < MOST:
            self.windows.append((low, high, MOST))
        else:
            self.truncated = self.truncated or bool(answer.get("more"))
            self.events.extend(sorted(answer.get("events") or (), key=lambda e: (e.get("time") or 0, e.get("id") or 0),
                                      reverse=True))

    def next(self) -> dict[str, Any] | None:
        """The node's next event, newest first; None when it has no more."""
        while not self.events and self.windows:
            low, high, limit = self.windows.pop()
            self.take(self.fetch(low, high, limit), low, high, limit)
        return self.events.popleft() if self.events else None

    @property
    def more(self) -> bool:
        return bool(self.events or self.windows or self.truncated)


def run(record: dict[str, Any]) -> None:
    """Write the export's file and record how many events it holds."""
    request, search, limit = record["request"], record["search"], record["max_events"]
    presenter = Presenter(accesses_of(record["user"], record["tenants"]))
    writer = _Writer(record["id"], record["format"])
    nodes = target_nodes(record, request.get("clusterNodeId")) if search["scope"] else []
    order = {node: rank for rank, node in enumerate(sorted(nodes))}
    low = search["query"].get("start_time") or 0
    high = search["query"].get("end_time") or int(time.time() * 1000) + CLOCK_SLACK_MS

    def args(window_low: int, window_high: int, most: int) -> dict[str, Any]:
        return {"query": {**search["query"], "start_time": window_low, "end_time": window_high},
                "scope": search["scope"], "limit": most}

    def fetcher(node: str) -> Callable[[int, int, int], dict[str, Any] | None]:
        def fetch(window_low: int, window_high: int, most: int) -> dict[str, Any] | None:
            percent = 10 + 85 * writer.count // limit
            return ask(record, [node], "provenance.query", args(window_low, window_high, most),
                       progress=(percent, percent)).get(node)
        return fetch

    parts = {node: _Node(fetcher(node)) for node in nodes}
    first = ask(record, nodes, "provenance.query", args(low, high, PAGE), progress=(5, 10))
    for node, part in parts.items():
        part.take(first.get(node), low, high, PAGE)
    heap: list[tuple] = []

    def push(node: str) -> None:
        event = parts[node].next()
        if event is not None:
            heapq.heappush(heap, (-(event.get("time") or 0), -order[node], -(event.get("id") or 0), node, event))

    for node in parts:
        push(node)
    while heap and writer.count < limit:
        *_, node, event = heapq.heappop(heap)
        presenter.load([event.get("component_id") or ""])
        writer.write(presenter.described(node, event))
        push(node)
        if writer.count % PAGE == 0:
            step(record, percent=10 + 85 * writer.count // limit,
                 result={"events": writer.count, "bytes": writer.size})
    writer.close()
    truncated = bool(heap) or any(part.more for part in parts.values())
    warnings = [] if record["nodes"]["asked"] or not search["scope"] else [NO_NODE]
    finish(record, "done", result={"events": writer.count, "bytes": writer.size, "truncated": truncated,
                                   "warnings": warnings})
