"""Looking into a connection's queue as NiFi's queue listing does.

A listing is the first FlowFiles held in memory in the order they would leave (the queue's
prioritizers; penalized FlowFiles after the others, by the end of their penalty), with the
queue's figures: every waiting FlowFile counts, swapped ones too, but swapped FlowFiles are not
listed (as in NiFi). One FlowFile is looked up by uuid among those in memory; one that is
swapped out, or has left the queue, is said to be so. A load-balanced connection lists the
FlowFiles of this node's own partition and counts those waiting for other nodes too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.content.ranges import read_range
from engine.flowfile import FlowFile
from engine.provenance.event_data import claim_data
from engine.runtime.connectable import Connectable, ScheduledState

if TYPE_CHECKING:
    from engine.runtime.controller import FlowController

__all__ = ["QueuedFlowFileError", "SwappedOutError", "find_queued", "flowfile_summary", "queue_listing", "queued_content",
           "queued_flowfile"]


class QueuedFlowFileError(LookupError):
    """The FlowFile asked for is not in the queue (it left it, or never was in it)."""

    code = "not_found"


class SwappedOutError(QueuedFlowFileError):
    """The FlowFile asked for waits in a swap file, not in the queue's memory."""

    code = "swapped_out"


def _now_ms(controller: FlowController) -> int:
    return int(controller.clock.time() * 1000)


def _running(node: Connectable | None) -> bool:
    # NiFi's Connectable.isRunning: scheduled to run, or still running tasks.
    return node is not None and (node.state is ScheduledState.RUNNING or node.active_thread_count > 0)


def flowfile_summary(flowfile: FlowFile, now: int, position: int | None = None) -> dict[str, Any]:
    """A queued FlowFile as a listing shows it; durations in ms."""
    return {
        "uuid": flowfile.uuid,
        "filename": flowfile.attributes.get("filename"),
        "position": position,
        "size": flowfile.size,
        "queued_duration": max(0, now - flowfile.last_queue_date),
        "lineage_duration": max(0, now - flowfile.lineage_start_date),
        "penalty_expires_in": max(0, flowfile.penalty_expiration - now),
        "penalized": flowfile.penalty_expiration > now,
    }


def queue_listing(controller: FlowController, connection_id: str, max_results: int = 100) -> dict[str, Any]:
    """The first ``max_results`` FlowFiles of the queue (positions from 1) and its figures."""
    queue = controller.queue(connection_id)
    flowfiles = queue.peek(max(0, max_results))
    figures = queue.size()
    now = _now_ms(controller)
    connection = controller.connections.get(connection_id)
    return {
        "count": figures.count,
        "bytes": figures.bytes,
        "swapped_count": figures.swapped_count,
        "flowfiles": [flowfile_summary(flowfile, now, position) for position, flowfile in enumerate(flowfiles, 1)],
        "source_running": _running(connection.source if connection else None),
        "destination_running": _running(connection.destination if connection else None),
    }


def find_queued(controller: FlowController, connection_id: str, uuid: str) -> FlowFile:
    """The FlowFile ``uuid`` waiting in memory in the queue; QueuedFlowFileError when it is swapped
    out (naming the swap file) or not in the queue."""
    queue = controller.queue(connection_id)
    found = queue.find(uuid)
    if found is not None:
        return found
    location = queue.find_swapped(uuid)
    if location is not None:
        raise SwappedOutError(f"FlowFile {uuid} is swapped out of connection {connection_id} (swap file "
                                  f"{location}): it can be looked at once the queue swaps it back in")
    found = queue.find(uuid)  # swapped in while the swap files were read
    if found is None:
        raise QueuedFlowFileError(f"FlowFile {uuid} is not in connection {connection_id} on this node: it has left "
                                  "the queue, or never was in it")
    return found


def queued_flowfile(controller: FlowController, connection_id: str, uuid: str) -> dict[str, Any]:
    """One queued FlowFile: its summary, dates, attributes, content claim and whether the content
    can be read."""
    flowfile = find_queued(controller, connection_id, uuid)
    claim = flowfile.content_claim
    return {
        **flowfile_summary(flowfile, _now_ms(controller)),
        "entry_date": flowfile.entry_date,
        "lineage_start_date": flowfile.lineage_start_date,
        "last_queue_date": flowfile.last_queue_date,
        "penalty_expiration": flowfile.penalty_expiration,
        "attributes": dict(flowfile.attributes),
        "claim": claim_data(claim),
        "content_available": claim is None or controller.storage.content.exists(claim),
    }


def queued_content(controller: FlowController, connection_id: str, uuid: str, offset: int,
                   length: int) -> tuple[int, bytes]:
    """The size of a queued FlowFile's content and its bytes ``[offset, offset + length)`` (see
    ``read_range``); a FlowFile without content has 0 bytes."""
    flowfile = find_queued(controller, connection_id, uuid)
    claim = flowfile.content_claim
    if claim is None:
        if offset:
            raise ValueError(f"offset {offset} is past the end of FlowFile {uuid}'s content (0 bytes)")
        return 0, b""
    return claim.length, read_range(controller.storage.content, claim, offset, length,
                                    f"the content of FlowFile {uuid} in connection {connection_id}")

