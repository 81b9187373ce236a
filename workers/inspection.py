"""What a node answers about its provenance and its queues: searches, events, content, lineage,
replay, queue listings and queued FlowFiles (the node side of ``docs/provenance.md``).

Every command that names events carries ``scope``, the component ids whose events may leave the
node; an event of any other component is answered exactly as one that does not exist. Content
travels base64-encoded, at most 1 MiB per answer. Errors are raised with messages the requester
shows as the node's error. The handlers run on the command listener's pool
(``CommandListener.register(..., concurrent=True)``), so ``status`` never waits behind them.

| kind | args | result |
|---|---|---|
| ``provenance.query`` | ``query``, ``scope``, ``limit`` | ``{node, events, more, oldest_event_time}`` |
| ``provenance.event`` | ``id``, ``scope`` | ``{node, event}`` |
| ``provenance.content`` | ``id``, ``scope``, ``direction``, ``offset``, ``length``, ``requester``?, ``uri``? | ``{node, size, offset, data}`` |
| ``provenance.lineage`` | ``uuid`` or ``event_id``, ``direction``, ``scope``, ``max_nodes`` | ``{node, events, truncated}`` |
| ``provenance.replay`` | ``id``, ``scope``, ``requester`` | ``{node, replayed, event, flowfile_uuid}`` or ``{node, replayed, reason}`` |
| ``queue.list`` | ``id``, ``max`` | ``{node, count, bytes, swapped_count, flowfiles, source_running, destination_running}`` |
| ``queue.flowfile`` | ``id``, ``uuid`` | ``{node, flowfile}`` |
| ``queue.content`` | ``id``, ``uuid``, ``offset``, ``length``, ``requester``?, ``uri``? | ``{node, size, offset, data}`` |

A queue of a tenant placed on other nodes is answered ``{id, here: false}``. A content command
that names its ``requester`` (the first of a content request does) is recorded as a DOWNLOAD
event (``engine.runtime.downloads``).
"""

from __future__ import annotations

import base64
from typing import Any, Callable

from engine.cluster.bus import Command, CommandListener
from engine.content.ranges import MAX_RANGE
from engine.provenance.event import ProvenanceEvent
from engine.provenance.event_data import event_summary
from engine.provenance.query import ProvenanceQuery
from engine.runtime.controller import FlowController
from engine.runtime.event_inspection import describe_event, event_content, event_lineage, find_event
from engine.runtime.downloads import record_event_download, record_flowfile_download
from engine.runtime.queue_inspection import find_queued, queue_listing, queued_content, queued_flowfile
from engine.runtime.replay import ReplayRefusedError, replay
from workers.arguments import component_id, number, text, text_list

__all__ = ["InspectionCommands", "MAX_LINEAGE_NODES", "MAX_LISTING", "MAX_QUERY_RESULTS"]

#: The most events one search answers (NiFi's limit).
MAX_QUERY_RESULTS = 10_000
#: The most events one lineage answers.
MAX_LINEAGE_NODES = 10_000
#: The most FlowFiles one queue listing answers.
MAX_LISTING = 10_000


class InspectionCommands:
    """The inspection handlers of node ``node_id``. ``controller()`` gives the running flow's
    controller (raising when there is none); ``elsewhere(id)`` is the answer for a component this
    node holds but does not run (a tenant placed on other nodes), else None."""

    def __init__(self, controller: Callable[[], FlowController], node_id: str,
                 elsewhere: Callable[[str], dict[str, Any] | None] = lambda identifier: None) -> None:
        self._controller = controller
        self.node_id = node_id
        self._elsewhere = elsewhere

    def register(self, listener: CommandListener) -> None:
        """Answer the inspection commands on ``listener``'s pool."""
        handlers = {
            "provenance.query": self.query, "provenance.event": self.event, "provenance.content": self.content,
            "provenance.lineage": self.lineage, "provenance.replay": self.replay, "queue.list": self.list_queue,
            "queue.flowfile": self.flowfile, "queue.content": self.queued_content,
        }
        for kind, handler in handlers.items():
            listener.register(kind, handler, concurrent=True)

    # -- provenance -----------------------------------------------------------------------

    def query(self, command: Command) -> dict[str, Any]:
        criteria = command.args.get("query") or {}
        limit = number(command, "limit", 100, low=1, high=MAX_QUERY_RESULTS)
        query = ProvenanceQuery.from_mapping(criteria, scope=text_list(command, "scope"), limit=limit)
        provenance = self._controller().storage.provenance
        result = provenance.query(query)
        return {"node": self.node_id, "events": [event_summary(event) for event in result.events],
                "more": result.next_cursor is not None, "oldest_event_time": provenance.stats().oldest_event_time}

    def _event(self, command: Command, name: str = "id") -> tuple[FlowController, ProvenanceEvent]:
        controller = self._controller()
        event_id = number(command, name, low=1)
        return controller, find_event(controller.storage.provenance, event_id, set(text_list(command, "scope")))

    def event(self, command: Command) -> dict[str, Any]:
        controller, event = self._event(command)
        return {"node": self.node_id, "event": describe_event(controller, event)}

    def content(self, command: Command) -> dict[str, Any]:
        controller, event = self._event(command)
        offset = number(command, "offset", 0)
        direction = text(command, "direction")
        size, data = event_content(controller, event, direction, offset, number(command, "length", MAX_RANGE))
        requester = _requester(command)
        if requester is not None:
            record_event_download(controller.storage.provenance, event, direction, *requester)
        return {"node": self.node_id, "size": size, "offset": offset, "data": base64.b64encode(data).decode()}

    def lineage(self, command: Command) -> dict[str, Any]:
        direction = text(command, "direction", "both")
        max_nodes = number(command, "max_nodes", 1000, low=1, high=MAX_LINEAGE_NODES)
        scope = set(text_list(command, "scope"))
        if command.args.get("event_id") is not None:
            controller, event = self._event(command, "event_id")
            uuid = None
        elif direction == "both":
            controller, event, uuid = self._controller(), None, text(command, "uuid")
        else:
            raise ValueError(f"command {command.kind}: expanding the {direction} of a lineage needs 'event_id'")
        events, truncated = event_lineage(controller.storage.provenance, scope, uuid=uuid, event=event,
                                          direction=direction, max_events=max_nodes)
        return {"node": self.node_id, "events": [event_summary(e) for e in events], "truncated": truncated}

    def replay(self, command: Command) -> dict[str, Any]:
        controller, event = self._event(command)
        requester = text(command, "requester", "an operator")
        if event.source_queue_id is not None and self._elsewhere(event.source_queue_id) is not None:
            return {"node": self.node_id, "replayed": False, "reason": (
                f"Cannot replay data from this event: its source connection {event.source_queue_id} now runs on "
                "other nodes (its tenant was placed elsewhere)")}
        try:
            replayed = replay(controller, event, requester)
        except ReplayRefusedError as refusal:
            return {"node": self.node_id, "replayed": False, "reason": str(refusal)}
        return {"node": self.node_id, "replayed": True, "event": describe_event(controller, replayed.event),
                "flowfile_uuid": replayed.flowfile.uuid}

    # -- queues ---------------------------------------------------------------------------

    def list_queue(self, command: Command) -> dict[str, Any]:
        identifier = component_id(command)
        away = self._elsewhere(identifier)
        if away is not None:
            return away
        listing = queue_listing(self._controller(), identifier, number(command, "max", 100, high=MAX_LISTING))
        return {"node": self.node_id, **listing}

    def flowfile(self, command: Command) -> dict[str, Any]:
        identifier = component_id(command)
        away = self._elsewhere(identifier)
        if away is not None:
            return away
        return {"node": self.node_id, "flowfile": queued_flowfile(self._controller(), identifier,
                                                                   text(command, "uuid"))}

    def queued_content(self, command: Command) -> dict[str, Any]:
        identifier = component_id(command)
        away = self._elsewhere(identifier)
        if away is not None:
            return away
        offset = number(command, "offset", 0)
        controller, uuid = self._controller(), text(command, "uuid")
        size, data = queued_content(controller, identifier, uuid, offset, number(command, "length", MAX_RANGE))
        requester = _requester(command)
        if requester is not None:
            record_flowfile_download(controller.storage.provenance, find_queued(controller, identifier, uuid),
                                     identifier, *requester)
        return {"node": self.node_id, "size": size, "offset": offset, "data": base64.b64encode(data).decode()}


def _requester(command: Command) -> tuple[str, str] | None:
    """Who asks for the content and at which address, when the command names them (the first
    chunk of a content request does: it is recorded as a DOWNLOAD event)."""
    if not command.args.get("requester"):
        return None
    uri = command.args.get("uri")
    return text(command, "requester"), uri if isinstance(uri, str) else ""
