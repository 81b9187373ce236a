"""What a session does with a FlowFile whose content it finds damaged (missing, cut short, or
failing its checksum), so that one bad FlowFile never blocks its connection.

The FlowFile is taken out of the session at once, through one FlowFile-repository transaction:

- ``quarantine`` (the node's default): it moves to the reserved queue ``flowsite.damaged``
  (:data:`engine.damage.DAMAGED_QUEUE_ID`), where it keeps its attributes and content claim for
  the operator to inspect, then empty;
- ``drop`` (NiFi's behaviour): it is deleted, with a DROP provenance event naming the content.

A :class:`~engine.damage.Damage` is recorded either way, the rest of the session is rolled back
without penalty, and the processor gets a :class:`DamagedContentError`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Literal

from engine.content.reader import ContentNotFoundError
from engine.damage import DAMAGED_QUEUE_ID, Damage
from engine.flowfile import FlowFile
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType as E
from engine.queue import FlowFileQueue
from engine.repository.records import RepositoryRecord

if TYPE_CHECKING:
    from engine.session.session import ProcessSession

__all__ = ["DAMAGED_CONTENT_ACTIONS", "DamagedContentError", "DamagedContentPolicy", "take_out_damaged"]

log = logging.getLogger(__name__)

DAMAGED_CONTENT_ACTIONS = ("quarantine", "drop")


class DamagedContentError(ContentNotFoundError):
    """A FlowFile's content was found damaged: the FlowFile has left the session.

    ``flowfile`` is the FlowFile as the session had it; ``disposition`` says where it went
    (``quarantined``, ``dropped``, or ``rolled back`` when the content was the session's own
    and the FlowFile went back to its queue). The rest of the session was rolled back.
    """

    def __init__(self, message: str, *, flowfile: FlowFile, cause: ContentNotFoundError, disposition: str) -> None:
        super().__init__(message, claim=cause.claim, path=cause.path, found=cause.found)
        self.flowfile = flowfile
        self.disposition = disposition


@dataclass
class DamagedContentPolicy:
    """A node's ``runtime.damaged_content`` setting and its damaged-FlowFile queue.

    ``on_first_use`` is told of the queue when a FlowFile first goes there (the flow
    controller then lists it with its other orphaned queues).
    """

    action: Literal["quarantine", "drop"] = "drop"
    queue: FlowFileQueue | None = None
    on_first_use: Callable[[FlowFileQueue], None] | None = None

    def __post_init__(self) -> None:
        if self.action not in DAMAGED_CONTENT_ACTIONS:
            raise ValueError(f"damaged_content must be one of {', '.join(DAMAGED_CONTENT_ACTIONS)}, not {self.action!r}")
        if self.action == "quarantine" and self.queue is None:
            raise ValueError("quarantining damaged content needs the damaged-FlowFile queue")


_DROP = DamagedContentPolicy()


def take_out_damaged(session: ProcessSession, flowfile: FlowFile, error: ContentNotFoundError) -> BaseException:
    """Handle ``flowfile``, whose content ``error`` says is damaged (see the module docstring);
    return the exception the processor gets. Call holding the session's lock."""
    record = session._records.get(flowfile.id)
    if isinstance(error, DamagedContentError) or record is None:
        return error
    original = record.original
    policy = session.component.damaged_content or _DROP
    claim = error.claim or flowfile.content_claim
    offset = claim.offset if claim is not None else None
    name = original.attributes.get("filename", "") if original is not None else ""
    where = f"FlowFile {flowfile.uuid} (filename {name!r}"
    if original is None or original.content_claim != flowfile.content_claim:
        # The damaged bytes were written by this session: the FlowFile itself is as it was.
        disposition, effect = "rolled back", f"{where}): content written in the session; the session was rolled back"
    else:
        source = record.source
        where += f", connection {source.identifier})" if source is not None else ")"
        try:
            disposition, effect = _move(session, original, policy, error)
        except Exception as failure:  # the log refused: the FlowFile goes back to its queue
            log.exception("could not take FlowFile %s with damaged content out of its queue", flowfile.uuid)
            disposition, effect = "rolled back", f"{where} could not be taken out ({failure}); it stays queued"
        else:
            del session._records[flowfile.id]
            session._counts.flowfiles_in -= 1
            session._counts.bytes_in -= original.size
            if record.owned_claim is not None:
                session.storage.claims.decrement(record.owned_claim.resource_claim)
            if source is not None:
                source.acknowledge([original])
            effect = f"{where} {effect}"
    damage = session.storage.damage.record(Damage(
        "content claim", error.path or str(claim), offset, error.found or str(error), effect,
        "restore the file from a backup, or empty the damaged-FlowFile queue once inspected"
        if disposition == "quarantined" else "",
    ))
    session.damaged_content.append(damage)
    session._rollback(penalize=False)
    return DamagedContentError(f"{error}; {effect}", flowfile=flowfile, cause=error, disposition=disposition)


def _move(session: ProcessSession, original: FlowFile, policy: DamagedContentPolicy,
          error: ContentNotFoundError) -> tuple[str, str]:
    """Write the transaction that takes ``original`` out of its queue; return (disposition, effect)."""
    storage = session.storage
    if policy.action == "quarantine":
        storage.flowfiles.update([RepositoryRecord.update(original, DAMAGED_QUEUE_ID, original.content_claim)])
        if policy.on_first_use is not None:
            policy.on_first_use(policy.queue)
        policy.queue.put(original)
        return "quarantined", f"was moved to queue {DAMAGED_QUEUE_ID}"
    component = session.component
    event = ProvenanceEvent(
        E.DROP, session._now_ms(), original.uuid, component.identifier, component.component_type,
        entry_date=original.entry_date, lineage_start_date=original.lineage_start_date,
        previous_attributes=original.attributes, previous_content_claim=original.content_claim,
        content_claim=original.content_claim, details=f"Content not found: {error}",
        source_queue_id=session._records[original.id].source.identifier
        if session._records[original.id].source is not None else None,
    )
    storage.commit([RepositoryRecord.delete(original)], [event])
    return "dropped", "was dropped (DROP event)"
