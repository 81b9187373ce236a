"""DOWNLOAD provenance events: who read which content through the platform, and when.

NiFi records a DOWNLOAD event each time a user fetches the content of a provenance event or of a
queued FlowFile (``FlowController.getContent``), so viewing data leaves a trace in the data's own
history. Flowsite does the same, once per content request (the web tier names the requester on
the first chunk it asks for). NiFi files the event under the root process group; a node runs
several tenants' flows, so Flowsite files it under the component the content belongs to — the
event's component, or the connection holding the FlowFile — which keeps it within the tenant and
visible to those who may see that component's provenance.
"""

from __future__ import annotations

import logging
import time

from engine.flowfile import FlowFile
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType as E
from engine.provenance.repository import ProvenanceRepository

__all__ = ["record_event_download", "record_flowfile_download"]

log = logging.getLogger(__name__)


def _register(provenance: ProvenanceRepository, event: ProvenanceEvent) -> None:
    # The content was read already: a trace that cannot be written is logged, not an error to the reader.
    try:
        provenance.register_events([event])
    except Exception:
        log.exception("the DOWNLOAD event of %s could not be recorded", event.details)


def record_event_download(provenance: ProvenanceRepository, event: ProvenanceEvent, direction: str, requester: str,
                          uri: str) -> None:
    """Record that ``requester`` fetched ``event``'s ``direction`` (input/output) content at ``uri``."""
    claim = event.previous_content_claim if direction == "input" else event.content_claim
    attributes = event.previous_attributes if direction == "input" else event.attributes
    _register(provenance, ProvenanceEvent(
        E.DOWNLOAD, int(time.time() * 1000), event.flowfile_uuid, event.component_id, event.component_type,
        entry_date=event.entry_date, lineage_start_date=event.lineage_start_date,
        previous_attributes=dict(attributes), content_claim=claim, transit_uri=uri,
        details=f"Download of {direction.capitalize()} Content requested by {requester} for Provenance Event "
                f"{event.event_id}"))


def record_flowfile_download(provenance: ProvenanceRepository, flowfile: FlowFile, connection_id: str,
                             requester: str, uri: str) -> None:
    """Record that ``requester`` fetched the content of ``flowfile``, queued in ``connection_id``, at ``uri``."""
    _register(provenance, ProvenanceEvent(
        E.DOWNLOAD, int(time.time() * 1000), flowfile.uuid, connection_id, "Connection",
        entry_date=flowfile.entry_date, lineage_start_date=flowfile.lineage_start_date,
        previous_attributes=dict(flowfile.attributes), content_claim=flowfile.content_claim, transit_uri=uri,
        details=f"Download of Content requested by {requester} for FlowFile {flowfile.uuid} in connection "
                f"{connection_id}"))
