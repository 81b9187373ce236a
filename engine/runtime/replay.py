"""Replaying a provenance event: its FlowFile, as it was then, queued again where it came from.

NiFi's ``FlowController.replayFlowFile``. An event cannot be replayed when it is a JOIN (it has
several parents), when it names no source connection (events of sources that make or receive
data), when the running flow no longer has that connection, or when its content can no longer be
read. Otherwise a new FlowFile — new uuid and id, entry date now, the event's lineage start, the
event's input content and the attributes it had then (its output content and attributes when
it had no input), plus ``flowfile.replay=true`` and ``flowfile.replay.timestamp``, less
``discard.reason`` and ``alternate.identifier`` — is queued on the source connection.

Order, as a session commit's: the content's claimant is counted (its file is brought back from
the archive if it was archived, see ``ContentRepository.reclaim``); one durable FlowFile
repository transaction creates the FlowFile, with the REPLAY event as its outbox entry
(``NodeStorage.commit``), and the event is registered (the original uuid as parent, the new one
as child, the event's component and source connection, as NiFi records it; its content is the
new FlowFile's); the FlowFile is queued. A transaction the disk refuses gives the claimant back
and leaves nothing behind; a crash after it leaves the FlowFile queued, and its REPLAY event
registered, at the next start.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from engine.content.ranges import describe_claim
from engine.content.reader import ContentNotFoundError
from engine.flowfile import ContentClaim, FlowFile
from engine.uuids import new_uuid
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType as E
from engine.repository.records import RepositoryRecord

if TYPE_CHECKING:
    from engine.runtime.controller import FlowController

__all__ = ["REPLAY_ATTRIBUTE", "REPLAY_TIMESTAMP_ATTRIBUTE", "ReplayFailedError", "ReplayRefusedError", "Replayed",
           "replay", "replay_refusal"]

REPLAY_ATTRIBUTE = "flowfile.replay"
REPLAY_TIMESTAMP_ATTRIBUTE = "flowfile.replay.timestamp"
_NOT_REPLAYED = ("discard.reason", "alternate.identifier")


class ReplayRefusedError(Exception):
    """The event cannot be replayed; the message says why."""


class ReplayFailedError(RuntimeError):
    """The replay was allowed but could not be made durable (a full or failing disk); nothing of
    it remains."""


@dataclass(frozen=True)
class Replayed:
    """A replay done: the REPLAY event (with its id) and the FlowFile queued."""

    event: ProvenanceEvent
    flowfile: FlowFile


def replayed_content(event: ProvenanceEvent) -> tuple[ContentClaim | None, Mapping[str, str]]:
    """The content and attributes a replay of ``event`` starts from: its input, else its output."""
    if event.previous_content_claim is not None:
        return event.previous_content_claim, event.previous_attributes
    if event.content_claim is not None:
        return event.content_claim, event.attributes
    return None, event.previous_attributes


def replay_refusal(controller: FlowController, event: ProvenanceEvent) -> str | None:
    """Why ``event`` cannot be replayed on this node, or None when it can."""
    if event.event_type is E.JOIN:
        return ("Cannot replay events that are created from multiple parents (a JOIN): replay the event of one "
                "of its parents instead")
    claim, _ = replayed_content(event)
    if claim is not None and not controller.storage.content.exists(claim):
        return (f"Cannot replay data from this event: its content is no longer available ({describe_claim(claim)} "
                "was aged off or deleted)")
    if event.source_queue_id is None:
        return ("Cannot replay data from this event: it does not name the connection its FlowFile came from "
                "(events of components that make or receive data have none)")
    if event.source_queue_id not in controller.connections:
        return (f"Cannot replay data from this event: its source connection {event.source_queue_id} no longer "
                "exists in the flow")
    return None


def replay(controller: FlowController, event: ProvenanceEvent, requester: str) -> Replayed:
    """Replay ``event`` (see the module docstring) for ``requester`` (named in the event's details).

    Raises ReplayRefusedError with the reason when it cannot be replayed, ReplayFailedError when
    the FlowFile repository refuses the new FlowFile.
    """
    reason = replay_refusal(controller, event)
    if reason is not None:
        raise ReplayRefusedError(reason)
    storage = controller.storage
    connection = controller.connections[event.source_queue_id]
    claim, attributes = replayed_content(event)
    now = int(controller.clock.time() * 1000)
    replay_uuid = new_uuid()
    attributes = {name: value for name, value in attributes.items() if name not in _NOT_REPLAYED}
    attributes.update({REPLAY_ATTRIBUTE: "true", REPLAY_TIMESTAMP_ATTRIBUTE: _java_date(now), "uuid": replay_uuid})
    flowfile = FlowFile(storage.flowfiles.next_id(), replay_uuid, attributes, claim, now, event.lineage_start_date, 0,
                        last_queue_date=now)
    if claim is not None:
        try:
            storage.content.reclaim(claim)
        except ContentNotFoundError as error:
            raise ReplayRefusedError(f"Cannot replay data from this event: its content is no longer available "
                                     f"({describe_claim(claim)}: {error.found or error})") from error
    replay_event = ProvenanceEvent(
        E.REPLAY, now, event.flowfile_uuid, event.component_id, event.component_type,
        entry_date=now, lineage_start_date=event.lineage_start_date,
        parent_uuids=(event.flowfile_uuid,), child_uuids=(replay_uuid,),
        updated_attributes=dict(attributes), content_claim=claim,
        details=f"Replay requested by {requester}", source_queue_id=event.source_queue_id,
    )
    try:
        # The replay stands without its event, as a committed session does (NodeStorage.commit).
        event_id = storage.commit([RepositoryRecord.create(flowfile, connection.identifier)], [replay_event],
                                  force_sync=True)
    except BaseException as error:
        if claim is not None:
            storage.claims.decrement(claim.resource_claim)
        if isinstance(error, OSError):
            raise ReplayFailedError(f"the replay of provenance event {event.event_id} failed: the FlowFile repository "
                                    f"could not record the new FlowFile ({error}); nothing was replayed") from error
        raise
    if event_id is not None:
        replay_event = replay_event._replace(event_id=event_id)
    connection.queue.put(flowfile)
    return Replayed(replay_event, flowfile)


def _java_date(millis: int) -> str:
    """``Tue Jan 02 15:04:05 UTC 2024``: what NiFi writes (``java.util.Date#toString``), in UTC."""
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(millis / 1000))
