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
    more: bool = False  # under "More criteria"


SEARCH_FIELDS = (
    SearchField("flowFileUuid", "FlowFileUUID", "FlowFile UUID", "The FlowFile's events, and those naming it as a parent or child."),
    SearchField("filename", "Filename", "Filename"),
    SearchField("componentId", "ProcessorID", "Component ID"),
    SearchField("componentName", "ComponentName", "Component name"),
    SearchField("componentType", "ComponentType", "Component type", "e.g. GenerateFlowFile"),
    SearchField("eventType", "EventType", "Event type", "e.g. DROP, or CONTENT_*"),
    SearchField("relationship", "Relationship", "Relationship", more=True),
    SearchField("transitUri", "TransitURI", "Transit URI", more=True),
    SearchField("alternateIdentifier", "AlternateIdentifierURI", "Alternate identifier", more=True),
    SearchField("details", "Details", "Details", more=True),
    SearchField("sourceQueueId", "SourceQueueIdentifier", "Source queue", "The id of the connection the FlowFile came from.",
                more=True),
)

#: The query-string names of the fields that are not search terms (the last three under "More
#: criteria").
RANGE_FIELDS = ("startDate", "endDate", "maxResults", "minimumFileSize", "maximumFileSize", "clusterNodeId")
_MORE_RANGES = RANGE_FIELDS[3:]


def search_form(query: QueryDict) -> dict:
    """The form's fields with the values ``query`` (a URL's) gives them; ``more_open`` when one of
    those under "More criteria" has a value."""
    excluded = set(query.getlist("exclude"))
    fields = [{"name": field.name, "term": field.term, "label": field.label, "help": field.help, "more": field.more,
               "value": query.get(field.name, ""), "excluded": field.name in excluded} for field in SEARCH_FIELDS]
    pairs = list(zip_longest(query.getlist("attributeName"), query.getlist("attributeValue"), fillvalue=""))
    attributes = [{"index": index, "name": name, "value": value, "excluded": f"attribute-{index}" in excluded}
                  for index, (name, value) in enumerate(pairs or [("", "")])]
    more_open = (any(f["value"] for f in fields if f["more"]) or any(a["name"] for a in attributes)
                 or any(query.get(name) for name in _MORE_RANGES))
    return {"fields": [f for f in fields if not f["more"]], "more_fields": [f for f in fields if f["more"]],
            "attributes": attributes, "more_open": more_open, **{name: query.get(name, "") for name in RANGE_FIELDS},
            "max_results": MAX_RESULTS, "default_results": DEFAULT_RESULTS, "event_types": EVENT_TYPES}
