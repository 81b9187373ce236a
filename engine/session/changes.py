"""What a session changed in a FlowFile's attributes, as provenance events record it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from engine.session.session import _Record

__all__ = ["NO_ATTRIBUTES", "updated_attributes", "attribute_changes"]

#: The previous attributes of a FlowFile made in the session (shared: events are never mutated).
NO_ATTRIBUTES: dict[str, str] = {}


def updated_attributes(record: _Record) -> Mapping[str, str | None]:
    """The attributes the session set (or removed, as None) on ``record``'s FlowFile so far.

    Worked out once per version of the attributes, however many events of the commit need
    it; a FlowFile made in the session shares its attribute mapping (all of it is new).
    """
    attributes = record.current.attributes
    cached = record.updated
    if cached is not None and cached[0] is attributes:
        return cached[1]
    original = record.original
    if original is None:
        updated = attributes
    elif original.attributes is attributes:
        updated = NO_ATTRIBUTES
    else:
        updated = attribute_changes(original.attributes, attributes)
    record.updated = (attributes, updated)
    return updated


def attribute_changes(before, after) -> dict[str, str | None]:
    """Attributes set or changed in ``after``, and those removed (as None)."""
    if before is after:
        return {}
    if not before:
        return dict(after)
    changed: dict[str, str | None] = {k: v for k, v in after.items() if before.get(k) != v}
    for key in before:
        if key not in after:
            changed[key] = None
    return changed
