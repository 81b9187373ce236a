"""Provenance searches: the criteria, how an event is matched against them, and a page of results.

Every criterion given must hold. Text criteria follow NiFi's search: a value matches the whole
field ignoring case, and a value holding ``*`` (any run of characters) or ``?`` (one character)
is a wildcard pattern. A criterion named in ``inverse`` excludes the events it matches instead
(an event lacking the field is then kept, as in NiFi). Set criteria (``component_ids``,
``component_types``, ``event_types``) match when any of their values does. ``scope`` is not a
search term but a boundary: an event of a component outside it is never returned; it matches
component ids exactly.

How a shard's index answers a query is ``engine.provenance.search``'s business; whatever it
finds is checked here (``matches``), so an index key shared by two texts costs a read, never a
wrong result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from engine.provenance.event import ProvenanceEvent, ProvenanceEventType

__all__ = [
    "ATTRIBUTE_PREFIX", "INVERTIBLE", "Criteria", "Pattern", "ProvenanceQuery", "QueryResult", "matches",
    "mentions", "overlaps", "page",
]

#: An attribute criterion's name in ``inverse``: ``attributes.<name>``.
ATTRIBUTE_PREFIX = "attributes."
#: The criteria that ``inverse`` may name (besides ``attributes.<name>``).
INVERTIBLE = frozenset({
    "flowfile_uuid", "filename", "component_ids", "component_types", "event_types", "relationship",
    "transit_uri", "alternate_identifier", "details", "source_queue_id",
})
_EVENT_TYPES = tuple(t.value for t in ProvenanceEventType)
_FIELDS: dict[str, Callable[[ProvenanceEvent], str | None]] = {
    "relationship": lambda event: event.relationship,
    "transit_uri": lambda event: event.transit_uri,
    "alternate_identifier": lambda event: event.alternate_identifier,
    "details": lambda event: event.details,
    "source_queue_id": lambda event: event.source_queue_id,
}


class Pattern:
    """A search value: the whole text ignoring case, or a wildcard pattern (``*``, ``?``)."""

    __slots__ = ("text", "folded", "regex")

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise ValueError(f"a search value must be text, not {text!r}")
        self.text = text
        self.folded = text.lower()
        self.regex = None
        if "*" in text or "?" in text:
            body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in self.folded)
            self.regex = re.compile(body, re.DOTALL)

    @property
    def wildcard(self) -> bool:
        """True for a pattern with ``*`` or ``?``."""
        return self.regex is not None

    def matches(self, value: str | None) -> bool:
        """Whether ``value`` (None: the field is absent) matches."""
        if value is None:
            return False
        folded = value.lower()
        return self.regex.fullmatch(folded) is not None if self.regex is not None else folded == self.folded

    def __repr__(self) -> str:
        return f"Pattern({self.text!r})"


@dataclass(frozen=True)
class ProvenanceQuery:
    """A search; times are ms since the epoch and sizes bytes, all bounds inclusive.

    ``component_id`` and ``event_type`` are shorthands for one-value ``component_ids`` and
    ``event_types``. Results come newest first (descending event id), at most ``limit`` per
    page; pass a result's ``next_cursor`` as ``before_event_id`` to get the following page.
    """

    flowfile_uuid: str | None = None
    filename: str | None = None
    component_id: str | None = None
    event_type: ProvenanceEventType | str | None = None
    start_time: int | None = None
    end_time: int | None = None
    attributes: Mapping[str, str] = field(default_factory=dict)
    limit: int = 100
    before_event_id: int | None = None
    component_ids: frozenset[str] = frozenset()
    component_types: frozenset[str] = frozenset()
    event_types: frozenset[str] = frozenset()
    relationship: str | None = None
    transit_uri: str | None = None
    alternate_identifier: str | None = None
    details: str | None = None
    source_queue_id: str | None = None
    min_size: int | None = None
    max_size: int | None = None
    #: The criteria that exclude what they match (see ``INVERTIBLE``; ``attributes.<name>``).
    inverse: frozenset[str] = frozenset()
    #: The components whose events may be returned; None: every component.
    scope: frozenset[str] | None = None
    #: The criteria compiled for matching (made from the fields above).
    criteria: Criteria = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.limit <= 0:
            raise ValueError(f"query limit must be positive, got {self.limit}")
        for name in ("component_ids", "component_types", "event_types", "inverse"):
            object.__setattr__(self, name, _text_set(getattr(self, name), name))
        if self.scope is not None:
            object.__setattr__(self, "scope", _text_set(self.scope, "scope"))
        for name in self.inverse:
            if name not in INVERTIBLE and not (name.startswith(ATTRIBUTE_PREFIX)
                                               and name[len(ATTRIBUTE_PREFIX):] in self.attributes):
                raise ValueError(f"'inverse' names {name!r}, which is not a criterion of this query "
                                 f"(one of {', '.join(sorted(INVERTIBLE))} or attributes.<name> of an attribute given)")
        for name in ("start_time", "end_time", "min_size", "max_size"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"'{name}' must be a whole number, not {value!r}")
        object.__setattr__(self, "criteria", Criteria.of(self))

    @classmethod
    def from_mapping(cls, criteria: Mapping[str, Any], *, scope: Iterable[str] | None = None,
                     limit: int = 100) -> ProvenanceQuery:
        """A query from JSON-ready ``criteria`` (the node command's ``query``: lists for the sets).

        Raises ValueError naming an unknown criterion or a value of the wrong kind.
        """
        if not isinstance(criteria, Mapping):
            raise ValueError(f"the query must be an object of criteria, not {criteria!r}")
        known = set(_MAPPING_FIELDS)
        unknown = sorted(set(criteria) - known)
        if unknown:
            raise ValueError(f"unknown query criteria {', '.join(map(repr, unknown))} "
                             f"(known: {', '.join(sorted(known))})")
        values: dict[str, Any] = {}
        for name, value in criteria.items():
            if value is None:
                continue
            if name == "attributes":
                if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
                    raise ValueError("'attributes' must map attribute names to text values")
                values[name] = dict(value)
            elif name in ("component_ids", "component_types", "event_types", "inverse"):
                values[name] = frozenset(_text_list(value, name))
            else:
                values[name] = value
        return cls(**values, scope=None if scope is None else frozenset(_text_list(scope, "scope")), limit=limit)


_MAPPING_FIELDS = (
    "flowfile_uuid", "filename", "component_ids", "component_types", "event_types", "relationship",
    "transit_uri", "alternate_identifier", "details", "source_queue_id", "attributes", "start_time",
    "end_time", "min_size", "max_size", "inverse",
)


def _text_list(value: Any, name: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ValueError(f"'{name}' must be a list of text values, not {value!r}")
    values = list(value)
    if not all(isinstance(item, str) for item in values):
        raise ValueError(f"'{name}' must be a list of text values, not {value!r}")
    return values


def _text_set(value: Any, name: str) -> frozenset[str]:
    return value if isinstance(value, frozenset) else frozenset(_text_list(value, name))


@dataclass(frozen=True)
class Criteria:
    """A query compiled: patterns per criterion, whether each excludes, and the resolved sets."""

    uuid: tuple[Pattern, bool] | None
    filename: tuple[Pattern, bool] | None
    components: tuple[tuple[Pattern, ...], bool] | None
    component_types: tuple[tuple[Pattern, ...], bool] | None
    #: The event types an event may have (None: any).
    event_types: frozenset[str] | None
    fields: tuple[tuple[Callable[[ProvenanceEvent], str | None], Pattern, bool], ...]
    attributes: tuple[tuple[str, Pattern, bool], ...]
    start_time: int | None
    end_time: int | None
    min_size: int | None
    max_size: int | None
    scope: frozenset[str] | None
    #: Lower-case bytes that the stored bytes of every matching event hold once lower-cased
    #: (a text is stored as its UTF-8 bytes), or None: an event without them need not be decoded.
    required: bytes | None = None

    @classmethod
    def of(cls, query: ProvenanceQuery) -> Criteria:
        inverse = query.inverse

        def text(name: str, value: str | None) -> tuple[Pattern, bool] | None:
            return None if value is None else (Pattern(value), name in inverse)

        def patterns(name: str, values: Iterable[str]) -> tuple[tuple[Pattern, ...], bool] | None:
            found = tuple(Pattern(value) for value in sorted(values))
            return (found, name in inverse) if found else None

        components = set(query.component_ids)
        if query.component_id is not None:
            components.add(query.component_id)
        types = set(query.event_types)
        if query.event_type is not None:
            types.add(ProvenanceEventType(query.event_type).value)
        return cls(
            uuid=text("flowfile_uuid", query.flowfile_uuid),
            filename=text("filename", query.filename),
            components=patterns("component_ids", components),
            component_types=patterns("component_types", query.component_types),
            event_types=_resolve_types(types, "event_types" in inverse) if types else None,
            fields=tuple((_FIELDS[name], Pattern(getattr(query, name)), name in inverse)
                         for name in _FIELDS if getattr(query, name) is not None),
            attributes=tuple((name, Pattern(value), f"{ATTRIBUTE_PREFIX}{name}" in inverse)
                             for name, value in sorted(query.attributes.items())),
            start_time=query.start_time, end_time=query.end_time,
            min_size=query.min_size, max_size=query.max_size, scope=query.scope,
        )._with_required()

    def _with_required(self) -> Criteria:
        # Values a matching event must hold somewhere: those of criteria that include (a list
        # only when it has one value; component ids are the index's business).
        holding = [text for text in (self.uuid, self.filename) if text is not None and not text[1]]
        holding += [(pattern, inverse) for _, pattern, inverse in (*self.fields, *self.attributes) if not inverse]
        if self.component_types is not None and not self.component_types[1] and len(self.component_types[0]) == 1:
            holding.append((self.component_types[0][0], False))
        pieces = [piece for pattern, _ in holding for piece in _safe_pieces(pattern.text)]
        if not pieces:
            return self
        return replace(self, required=max(pieces, key=len).lower().encode())

    def component_allowed(self, component_id: str) -> bool:
        """Whether the component criterion and the scope let events of ``component_id`` through."""
        if self.scope is not None and component_id not in self.scope:
            return False
        return _any_of(self.components, component_id)


#: The only letters a character outside ASCII lower-cases into (U+212A KELVIN SIGN, U+0130).
_FOLDED_INTO_ASCII = re.compile("[kKiI]")
_MIN_PIECE = 3


def _safe_pieces(text: str) -> list[str]:
    """The runs of ``text`` a stored event holding a value that matches it must hold as bytes,
    ignoring ASCII case: ASCII runs between wildcards, cut at the letters that a non-ASCII
    character lower-cases into (such a value need not hold the letter itself)."""
    pieces = []
    for run in re.split(r"[*?]", text):
        if run.isascii():
            pieces += [piece for piece in _FOLDED_INTO_ASCII.split(run) if len(piece) >= _MIN_PIECE]
    return pieces


def _resolve_types(values: Iterable[str], inverse: bool) -> frozenset[str]:
    chosen: set[str] = set()
    for value in values:
        pattern = Pattern(value)
        if not pattern.wildcard and pattern.text.upper() not in _EVENT_TYPES:
            raise ValueError(f"unknown event type {value!r} (known: {', '.join(_EVENT_TYPES)})")
        chosen.update(name for name in _EVENT_TYPES if pattern.matches(name))
    return frozenset(_EVENT_TYPES) - chosen if inverse else frozenset(chosen)


def _any_of(criterion: tuple[Sequence[Pattern], bool] | None, value: str | None) -> bool:
    if criterion is None:
        return True
    found = any(pattern.matches(value) for pattern in criterion[0])
    return found != criterion[1]


def _holds(criterion: tuple[Pattern, bool] | None, value: str | None) -> bool:
    return criterion is None or criterion[0].matches(value) != criterion[1]


def matches(event: ProvenanceEvent, query: ProvenanceQuery) -> bool:
    """Whether ``event`` meets every criterion of ``query`` and lies in its scope."""
    c = query.criteria
    if c.scope is not None and event.component_id not in c.scope:
        return False
    if c.start_time is not None and event.event_time < c.start_time:
        return False
    if c.end_time is not None and event.event_time > c.end_time:
        return False
    if c.event_types is not None and event.event_type.value not in c.event_types:
        return False
    if not _any_of(c.components, event.component_id) or not _any_of(c.component_types, event.component_type):
        return False
    if c.min_size is not None or c.max_size is not None:
        size = event.file_size
        if (c.min_size is not None and size < c.min_size) or (c.max_size is not None and size > c.max_size):
            return False
    if c.uuid is not None:
        pattern, inverse = c.uuid
        named = any(pattern.matches(uuid) for uuid in (event.flowfile_uuid, *event.parent_uuids, *event.child_uuids))
        if named == inverse:
            return False
    for get, pattern, inverse in c.fields:
        if pattern.matches(get(event)) == inverse:
            return False
    if c.filename is None and not c.attributes:
        return True
    attributes = event.attributes
    if not _holds(c.filename, attributes.get("filename")):
        return False
    return all(pattern.matches(attributes.get(name)) != inverse for name, pattern, inverse in c.attributes)


def mentions(event: ProvenanceEvent, uuid: str) -> bool:
    """Whether ``event`` names ``uuid`` as its FlowFile, a parent or a child."""
    return event.flowfile_uuid == uuid or uuid in event.parent_uuids or uuid in event.child_uuids


def overlaps(query: ProvenanceQuery, min_time: int, max_time: int) -> bool:
    """Whether a shard whose events span ``[min_time, max_time]`` can match the query's time range."""
    if query.start_time is not None and max_time < query.start_time:
        return False
    return not (query.end_time is not None and min_time > query.end_time)


@dataclass(frozen=True)
class QueryResult:
    """One page of matching events, newest first; ``next_cursor`` is None on the last page."""

    events: list[ProvenanceEvent]
    next_cursor: int | None


def page(events: Sequence[ProvenanceEvent], limit: int) -> QueryResult:
    """The first ``limit`` of ``events`` (sorted newest first), with a cursor if more remain."""
    if len(events) > limit:
        kept = list(events[:limit])
        return QueryResult(kept, kept[-1].event_id)
    return QueryResult(list(events), None)
