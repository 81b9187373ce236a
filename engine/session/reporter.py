"""The provenance reporter a processor uses to say what it did with a FlowFile."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.flowfile import FlowFile
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType as E
from engine.session.changes import NO_ATTRIBUTES, updated_attributes

if TYPE_CHECKING:
    from engine.session.session import ProcessSession

__all__ = ["ProvenanceReporter"]

_new = tuple.__new__


class ProvenanceReporter:
    """Records provenance events for a session; they are held until the session commits.

    At commit every held event is completed with the FlowFile's committed attributes and
    content, except SEND, UPLOAD and CLONE events, which keep the FlowFile as it was when they
    were reported: what was sent is what gets recorded. A ``send`` with ``force`` (the default)
    is recorded even if the session rolls back, since data that left cannot be un-sent: it is
    written with the commit, or by the rollback.
    """

    def __init__(self, session: ProcessSession) -> None:
        self._session = session

    def _event(self, event_type: E, flowfile: FlowFile, *, transit_uri: str | None = None,
               details: str | None = None, source_system_flowfile_id: str | None = None, duration: int = -1,
               relationship: str | None = None, alternate_identifier: str | None = None) -> ProvenanceEvent:
        session = self._session
        session._require_current(flowfile)
        component = session.component
        # Built by position (see ``ProvenanceEvent``): keywords cost several times more.
        return _new(ProvenanceEvent, (
            event_type, session._now_ms(), flowfile.uuid, component.identifier, component.component_type,
            flowfile.entry_date, flowfile.lineage_start_date, (), (), NO_ATTRIBUTES, NO_ATTRIBUTES, None, None,
            relationship, details, transit_uri, source_system_flowfile_id, alternate_identifier, None, duration, -1,
        ))

    def _snapshot(self, event: ProvenanceEvent, flowfile: FlowFile) -> ProvenanceEvent:
        """``event`` with the FlowFile as it is now (``flowfile`` is its current version)."""
        record = self._session._records[flowfile.id]
        original = record.original
        e = event
        return _new(ProvenanceEvent, (
            *e[:9], original.attributes if original is not None else NO_ATTRIBUTES, updated_attributes(record),
            original.content_claim if original is not None else None, flowfile.content_claim, *e[13:],
        ))

    def receive(
        self, flowfile: FlowFile, transit_uri: str, *, details: str | None = None,
        source_system_flowfile_id: str | None = None, duration: int = -1,
    ) -> None:
        """The FlowFile's content was received from an external system."""
        self._session._hold(self._event(
            E.RECEIVE, flowfile, transit_uri=transit_uri, details=details,
            source_system_flowfile_id=source_system_flowfile_id, duration=duration,
        ))

    def fetch(self, flowfile: FlowFile, transit_uri: str, *, details: str | None = None, duration: int = -1) -> None:
        """The FlowFile's content was replaced by data fetched from an external system."""
        self._session._hold(self._event(E.FETCH, flowfile, transit_uri=transit_uri, details=details, duration=duration))

    def send(
        self, flowfile: FlowFile, transit_uri: str, *, details: str | None = None, duration: int = -1,
        force: bool = True,
    ) -> None:
        """The FlowFile's content was sent to an external system."""
        event = self._snapshot(
            self._event(E.SEND, flowfile, transit_uri=transit_uri, details=details, duration=duration), flowfile
        )
        if force:
            self._session._force(event)
        else:
            self._session._hold(event, enrich=False)

    def upload(self, flowfile: FlowFile, transit_uri: str, *, details: str | None = None, duration: int = -1) -> None:
        """The FlowFile's content was uploaded to an external store (written at once, like SEND)."""
        event = self._snapshot(
            self._event(E.UPLOAD, flowfile, transit_uri=transit_uri, details=details, duration=duration), flowfile
        )
        self._session._force(event)

    def remote_invocation(self, flowfile: FlowFile, transit_uri: str, *, details: str | None = None) -> None:
        """A remote service was invoked on behalf of the FlowFile (content not sent)."""
        self._session._hold(self._event(E.REMOTE_INVOCATION, flowfile, transit_uri=transit_uri, details=details))

    def route(self, flowfile: FlowFile, relationship: str, *, details: str | None = None) -> None:
        """The FlowFile was routed to ``relationship`` for a reason worth recording."""
        self._session._hold(self._event(E.ROUTE, flowfile, relationship=relationship, details=details))

    def associate(self, flowfile: FlowFile, alternate_namespace: str, alternate_identifier: str) -> None:
        """The FlowFile is known elsewhere as ``alternate_namespace:alternate_identifier``."""
        self._session._hold(self._event(
            E.ASSOCIATE, flowfile, alternate_identifier=f"{alternate_namespace}:{alternate_identifier}"
        ))

    def modify_content(self, flowfile: FlowFile, *, details: str | None = None, duration: int = -1) -> None:
        """The FlowFile's content was changed."""
        self._session._hold(self._event(E.CONTENT_MODIFIED, flowfile, details=details, duration=duration))

    def modify_attributes(self, flowfile: FlowFile, *, details: str | None = None) -> None:
        """The FlowFile's attributes were changed."""
        self._session._hold(self._event(E.ATTRIBUTES_MODIFIED, flowfile, details=details))

    def create(self, flowfile: FlowFile, *, details: str | None = None) -> None:
        """The FlowFile was made from nothing by this component."""
        self._session._hold(self._event(E.CREATE, flowfile, details=details))

    def add_info(self, flowfile: FlowFile, details: str) -> None:
        """Extra information worth keeping about the FlowFile."""
        self._session._hold(self._event(E.ADDINFO, flowfile, details=details))
