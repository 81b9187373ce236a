"""The provenance search form: NiFi's searchable fields under the query-string names the portal's
links use (``/provenance/?componentId=…``, ``?flowFileUuid=…``), filled from a URL's query. The
page's script turns the form into the API's provenance request (static/portal/provenance-search.js):
each field's ``term`` is NiFi's search term id; ``exclude`` names the fields whose matches are left
out (NiFi's *inverse*); attribute rows are ``attributeName`` / ``attributeValue`` pairs whose
exclusion is ``exclude=attribute-<row>``."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest

from django.http import QueryDict

from engine.provenance import ProvenanceEventType

#: The most results a query may ask for (the API's limit) and the default.
MAX_RESULTS = 10_000
DEFAULT_RESULTS = 1_000

EVENT_TYPES = tuple(kind.value for kind in ProvenanceEventType if kind is not ProvenanceEventType.UNKNOWN)


@dataclass(frozen=True)
class SearchField:
    name: str
    term: str
    label: str
    help: str = ""


SEARCH_FIELDS = (
    SearchField("flowFileUuid", "FlowFileUUID", "FlowFile UUID", "The FlowFile's events, and those naming it as a parent or child."),
    SearchField("filename", "Filename", "Filename"),
    SearchField("componentId", "ProcessorID", "Component ID"),
    SearchField("componentName", "ComponentName", "Component name"),
    SearchField("componentType", "ComponentType", "Component type", "e.g. GenerateFlowFile"),
    SearchField("eventType", "EventType", "Event type", "e.g. DROP, or CONTENT_*"),
    SearchField("relationship", "Relationship", "Relationship"),
    SearchField("transitUri", "TransitURI", "Transit URI"),
    SearchField("alternateIdentifier", "AlternateIdentifierURI", "Alternate identifier"),
    SearchField("details", "Details", "Details"),
    SearchField("sourceQueueId", "SourceQueueIdentifier", "Source queue", "The id of the connection the FlowFile came from."),
)

#: The query-string names of the fields that are not search terms.
RANGE_FIELDS = ("startDate", "endDate", "minimumFileSize", "maximumFileSize", "maxResults", "clusterNodeId")


def search_form(query: QueryDict) -> dict:
    """The form's fields with the values ``query`` (a URL's) gives them."""
    excluded = set(query.getlist("exclude"))
    fields = [{"name": field.name, "term": field.term, "label": field.label, "help": field.help,
               "value": query.get(field.name, ""), "excluded": field.name in excluded} for field in SEARCH_FIELDS]
    pairs = list(zip_longest(query.getlist("attributeName"), query.getlist("attributeValue"), fillvalue=""))
    attributes = [{"index": index, "name": name, "value": value, "excluded": f"attribute-{index}" in excluded}
                  for index, (name, value) in enumerate(pairs or [("", "")])]
    return {"fields": fields, "attributes": attributes, **{name: query.get(name, "") for name in RANGE_FIELDS},
            "max_results": MAX_RESULTS, "default_results": DEFAULT_RESULTS, "event_types": EVENT_TYPES}
