"""A provenance search as NiFi clients send it, made into what the nodes are asked.

``searchTerms`` are keyed by NiFi's searchable field ids (``SEARCHABLE_FIELDS``); any other key
is an attribute name. A value holding ``*`` or ``?`` is a wildcard pattern, and every value
matches the whole field ignoring case (NiFi's search); ``inverse`` excludes what matches. The
component terms are decided here, where the names are: ``ProcessorID`` and ``ComponentName``
narrow the request's scope to the components they let through (so the nodes receive fewer
components, never more); the others go to the nodes as the criteria of ``provenance.query``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from engine.provenance.event import ProvenanceEventType
from flowsite.flows.models import Component

__all__ = ["SEARCHABLE_FIELDS", "Search", "event_types", "matcher", "search"]

#: NiFi's searchable fields: (id, field, label); every one is text (``STRING``).
SEARCHABLE_FIELDS = (
    ("EventType", "eventType", "Event Type"),
    ("FlowFileUUID", "uuid", "FlowFile UUID"),
    ("Filename", "filename", "Filename"),
    ("ProcessorID", "processorId", "Component ID"),
    ("ComponentName", "componentName", "Component Name"),
    ("ComponentType", "componentType", "Component Type"),
    ("Relationship", "relationship", "Relationship"),
    ("TransitURI", "transitUri", "Transit URI"),
    ("AlternateIdentifierURI", "alternateIdentifierUri", "Alternate Identifier URI"),
    ("Details", "details", "Details"),
    ("SourceQueueIdentifier", "sourceQueueIdentifier", "Source Queue Identifier"),
)
#: The text terms the nodes decide, and their criterion in ``provenance.query``.
_NODE_TEXT = {"FlowFileUUID": "flowfile_uuid", "Filename": "filename", "Relationship": "relationship",
              "TransitURI": "transit_uri", "AlternateIdentifierURI": "alternate_identifier", "Details": "details",
              "SourceQueueIdentifier": "source_queue_id"}
_EVENT_TYPES = {event_type.value for event_type in ProvenanceEventType}


@dataclass(frozen=True)
class Search:
    """What the nodes are asked: ``query`` (criteria of ``provenance.query``) over ``scope``."""

    query: dict[str, Any]
    scope: frozenset[str]


def matcher(value: str):
    """A test of a whole text ignoring case; ``*`` and ``?`` are wildcards."""
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in value.lower())
    pattern = re.compile(body, re.DOTALL)
    return lambda text: text is not None and pattern.fullmatch(text.lower()) is not None


def event_types(value: str) -> list[str]:
    """The event types of an ``EventType`` value (comma-separated; wildcards allowed);
    ValueError for a name no event type has."""
    types = [part.strip() for part in value.split(",") if part.strip()]
    for name in types:
        if not any(matcher(name)(known) for known in _EVENT_TYPES):
            raise ValueError(f"no event type {name!r} (one of {', '.join(sorted(_EVENT_TYPES))})")
    return [name.upper() for name in types]


def _narrow(scope: frozenset[str], terms: Mapping[str, dict[str, Any]]) -> frozenset[str]:
    """The components of ``scope`` the ``ProcessorID`` and ``ComponentName`` terms let through."""
    kept = set(scope)
    by_id = terms.get("ProcessorID")
    if by_id is not None:
        matches = matcher(by_id["value"])
        kept = {pk for pk in kept if matches(pk) != by_id["inverse"]}
    by_name = terms.get("ComponentName")
    if by_name is not None and kept:
        matches = matcher(by_name["value"])
        names = {str(pk): name for pk, name in Component.objects.filter(pk__in=list(kept)).values_list("pk", "name")}
        kept = {pk for pk in kept if matches(names.get(pk, "")) != by_name["inverse"]}
    return frozenset(kept)


def search(request: Mapping[str, Any], scope: frozenset[str]) -> Search:
    """The nodes' query for a validated NiFi provenance ``request`` (``searchTerms`` as
    ``{id: {value, inverse}}``, ``startDate``/``endDate`` in ms, sizes in bytes) over ``scope``."""
    terms = request.get("searchTerms") or {}
    query: dict[str, Any] = {}
    inverse: list[str] = []
    attributes: dict[str, str] = {}
    for name, term in terms.items():
        value, inverted = term["value"], term["inverse"]
        if name in _NODE_TEXT:
            query[_NODE_TEXT[name]] = value
            criterion = _NODE_TEXT[name]
        elif name == "EventType":
            query["event_types"] = event_types(value)
            criterion = "event_types"
        elif name == "ComponentType":
            query["component_types"] = [value]
            criterion = "component_types"
        elif name in ("ProcessorID", "ComponentName"):
            continue
        else:
            attributes[name] = value
            criterion = f"attributes.{name}"
        if inverted:
            inverse.append(criterion)
    if attributes:
        query["attributes"] = attributes
    if inverse:
        query["inverse"] = sorted(inverse)
    for field, criterion in (("startDate", "start_time"), ("endDate", "end_time"), ("minimumFileSize", "min_size"),
                             ("maximumFileSize", "max_size")):
        if request.get(field) is not None:
            query[criterion] = request[field]
    return Search(query, _narrow(scope, terms))
