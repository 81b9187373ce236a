"""The provenance events a session commit records, worked out from what the session did."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from engine.flowfile import FlowFile
from engine.provenance.event import CREATION_TYPES, ProvenanceEvent, ProvenanceEventType as E
from engine.session.changes import NO_ATTRIBUTES, updated_attributes

if TYPE_CHECKING:
    from engine.session.session import _CommitPlan, _Record

__all__ = ["ALTERNATE_IDENTIFIER", "SessionEvents"]

ALTERNATE_IDENTIFIER = "alternate.identifier"
_new = tuple.__new__


class SessionEvents:
    """Event-building methods of :class:`~engine.session.ProcessSession` (a mixin: it uses the
    session's records, held events and component)."""

    def _plan_events(self, plan: _CommitPlan, duration: int) -> list[ProvenanceEvent]:
        by_uuid = {record.current.uuid: record for record in self._records.values()}
        for clone in plan.clones:
            by_uuid[clone.current.uuid] = clone
        events: list[ProvenanceEvent] = []
        created: set[str] = set()
        reported: set[str] = set()
        forks: dict[str, list[str]] = defaultdict(list)
        fork_parents: dict[str, FlowFile] = {}
        for record in self._records.values():
            if record.original is None and record.parents and not record.removed:
                if not record.join:
                    parent = record.parents[0]
                    forks[parent.uuid].append(record.current.uuid)
                    fork_parents[parent.uuid] = parent
                else:
                    events.append(self._event_for(E.JOIN, record, duration,
                                                  parent_uuids=tuple(p.uuid for p in record.parents),
                                                  child_uuids=(record.current.uuid,)))
                created.add(record.current.uuid)
        for parent_uuid, children in forks.items():
            parent_record = by_uuid.get(parent_uuid)
            event = self._generated(E.FORK, fork_parents[parent_uuid], parent_uuids=(parent_uuid,),
                                    child_uuids=tuple(children))
            events.append(self._complete(event, parent_record, duration) if parent_record else event)
            reported.add(parent_uuid)
        for held in self._held:
            event = held.event
            record = by_uuid.get(event.flowfile_uuid)
            if event.event_type in CREATION_TYPES:
                created.add(event.flowfile_uuid)
                created.update(event.child_uuids)
            reported.add(event.flowfile_uuid)
            if record is not None and record.removed and record.original is None:
                continue  # the FlowFile never left the session
            if held.enrich and record is not None:
                event = self._complete(event, record, duration)
            events.append(event)
        events.extend(plan.events)  # commit-time CLONE events
        created.update(uuid for event in plan.events for uuid in event.child_uuids)
        for record in self._records.values():
            flowfile = record.current
            if record.removed and record.original is None:
                continue
            if record.original is None:
                if flowfile.uuid not in created:
                    events.append(self._event_for(E.CREATE, record, duration))
                    reported.add(flowfile.uuid)
                continue
            if flowfile.uuid in reported:
                continue
            if flowfile.content_claim != record.original.content_claim:
                events.append(self._event_for(E.CONTENT_MODIFIED, record, duration))
                reported.add(flowfile.uuid)
            elif record.original.attributes is not flowfile.attributes and updated_attributes(record):
                events.append(self._event_for(E.ATTRIBUTES_MODIFIED, record, duration))
                reported.add(flowfile.uuid)
        for record in self._records.values():
            flowfile = record.current
            before = record.original.attributes.get(ALTERNATE_IDENTIFIER) if record.original else None
            after = flowfile.attributes.get(ALTERNATE_IDENTIFIER)
            if after and after != before and not (record.removed and record.original is None):
                events.append(self._event_for(E.ASSOCIATE, record, duration, alternate_identifier=after))
        return events

    def _generated(self, event_type: E, flowfile: FlowFile, **fields) -> ProvenanceEvent:
        component = self.component
        return ProvenanceEvent(
            event_type, self._now_ms(), flowfile.uuid, component.identifier, component.component_type,
            entry_date=flowfile.entry_date, lineage_start_date=flowfile.lineage_start_date, **fields,
        )

    def _event_for(self, event_type: E, record: _Record, duration: int, *, parent_uuids: tuple[str, ...] = (),
                   child_uuids: tuple[str, ...] = (), details: str | None = None,
                   alternate_identifier: str | None = None) -> ProvenanceEvent:
        """A new event about ``record``'s FlowFile, with its committed state.

        The tuple is built by position in one step (see ``ProvenanceEvent``): keywords and
        ``_replace`` would cost several times more, and this runs for most events.
        """
        component = self.component
        flowfile = record.current
        original = record.original
        source = record.source
        return _new(ProvenanceEvent, (
            event_type, self._now_ms(), flowfile.uuid, component.identifier, component.component_type,
            flowfile.entry_date, flowfile.lineage_start_date, parent_uuids, child_uuids,
            original.attributes if original is not None else NO_ATTRIBUTES, updated_attributes(record),
            original.content_claim if original is not None else None, flowfile.content_claim, None, details, None,
            None, alternate_identifier, source.identifier if source is not None else None, duration, -1,
        ))

    @staticmethod
    def _complete(event: ProvenanceEvent, record: _Record, duration: int) -> ProvenanceEvent:
        """Fill in an event reported during the session with the committed state of its FlowFile.

        Attribute mappings are shared, not copied: a FlowFile's attributes are never mutated.
        """
        flowfile = record.current
        original = record.original
        source = record.source.identifier if record.source is not None else None
        e = event
        return _new(ProvenanceEvent, (
            e[0], e[1], e[2], e[3], e[4], flowfile.entry_date, flowfile.lineage_start_date, e[7], e[8],
            original.attributes if original is not None else NO_ATTRIBUTES, updated_attributes(record),
            original.content_claim if original is not None else None, flowfile.content_claim, e[13], e[14], e[15],
            e[16], e[17], source, e[19] if e[19] >= 0 else duration, e[20],
        ))
