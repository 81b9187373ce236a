"""Prioritizers: the order in which a connection's queue hands out its FlowFiles.

A queue orders FlowFiles by a sort key built from its prioritizers, in the user's order, then
by the time they were queued and their id, so the order is total and stable. Smaller keys come
out first. Keys are flat tuples of ints and strings, so they can be stored in swap-file
summaries and compared again after a restart.
"""

from __future__ import annotations

from typing import Callable, Sequence

from engine.flowfile import FlowFile

__all__ = ["PRIORITIZERS", "SortKey", "resolve_prioritizer", "sort_key_function", "UnknownPrioritizerError"]

SortKey = tuple
PRIORITY_ATTRIBUTE = "priority"


class UnknownPrioritizerError(ValueError):
    """A prioritizer name that is neither a known short name nor a known NiFi class name."""


def _first_in_first_out(flowfile: FlowFile) -> SortKey:
    return (flowfile.last_queue_date, flowfile.queue_date_index)


def _oldest_first(flowfile: FlowFile) -> SortKey:
    return (flowfile.lineage_start_date, flowfile.lineage_start_index)


def _newest_first(flowfile: FlowFile) -> SortKey:
    return (-flowfile.lineage_start_date, -flowfile.lineage_start_index)


def _priority_attribute(flowfile: FlowFile) -> SortKey:
    # Whole numbers sort first, numerically; other values after them, as text; a FlowFile
    # without the attribute sorts last.
    value = flowfile.attributes.get(PRIORITY_ATTRIBUTE)
    if value is None:
        return (2, 0, "")
    text = value.strip()
    try:
        return (0, int(text), "")
    except ValueError:
        return (1, 0, value)


#: Short name → (NiFi class name, key part).
PRIORITIZERS: dict[str, tuple[str, Callable[[FlowFile], SortKey]]] = {
    "FirstInFirstOutPrioritizer": ("org.apache.nifi.prioritizer.FirstInFirstOutPrioritizer", _first_in_first_out),
    "OldestFlowFileFirstPrioritizer": ("org.apache.nifi.prioritizer.OldestFlowFileFirstPrioritizer", _oldest_first),
    "NewestFlowFileFirstPrioritizer": ("org.apache.nifi.prioritizer.NewestFlowFileFirstPrioritizer", _newest_first),
    "PriorityAttributePrioritizer": ("org.apache.nifi.prioritizer.PriorityAttributePrioritizer", _priority_attribute),
}


def resolve_prioritizer(name: str) -> str:
    """Return the short name of a prioritizer given by short or NiFi class name."""
    short = name.rsplit(".", 1)[-1]
    if short not in PRIORITIZERS:
        known = ", ".join(PRIORITIZERS)
        raise UnknownPrioritizerError(f"unknown prioritizer {name!r} (known: {known})")
    return short


def sort_key_function(prioritizers: Sequence[str] = ()) -> Callable[[FlowFile], SortKey]:
    """The sort key of a queue with ``prioritizers`` (short or NiFi class names), in order.

    With none the queue is first-in first-out. Ties are broken by queue time, then by id.
    """
    parts = [PRIORITIZERS[resolve_prioritizer(name)][1] for name in prioritizers]
    if not parts:
        return lambda f: (f.last_queue_date, f.queue_date_index, f.id)
    if len(parts) == 1:
        (part,) = parts
        return lambda f: part(f) + (f.last_queue_date, f.queue_date_index, f.id)

    def key(flowfile: FlowFile) -> SortKey:
        result: tuple = ()
        for part in parts:
            result += part(flowfile)
        return result + (flowfile.last_queue_date, flowfile.queue_date_index, flowfile.id)

    return key
