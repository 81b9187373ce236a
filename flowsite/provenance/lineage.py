"""A lineage graph in NiFi's shape (``ProvenanceNodeDTO``, ``ProvenanceLinkDTO``) from the events
the nodes answered, built by the engine's ``compute_lineage``.

Events of several nodes share event numbers, so each is given a stand-in number in time order
(then node, then number) for ``compute_lineage`` and is shown by its cluster-unique id
(``"<node>:<eventId>"``). An event of a component the user may not view the provenance of is
NiFi's placeholder: type ``UNKNOWN``, no component type, its FlowFiles kept so the graph holds
together. At most ``FLOWSITE_LINEAGE_MAX_NODES`` nodes; ``truncated`` says when more were left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from engine.provenance.event import ProvenanceEvent, ProvenanceEventType
from engine.provenance.lineage import compute_lineage, event_parents
from flowsite.provenance import formats
from flowsite.provenance.events import event_id
from flowsite.provenance.merge import newest_first

__all__ = ["graph", "related"]

_UNKNOWN = ProvenanceEventType.UNKNOWN.value


def _stand_in(number: int, event: Mapping[str, Any]) -> ProvenanceEvent:
    kind = event.get("type")
    return ProvenanceEvent(
        ProvenanceEventType(kind) if kind in ProvenanceEventType.__members__ else ProvenanceEventType.UNKNOWN,
        int(event.get("time") or 0), event["flowfile_uuid"], event.get("component_id") or "",
        event.get("component_type") or "", parent_uuids=tuple(event.get("parent_uuids") or ()),
        child_uuids=tuple(event.get("child_uuids") or ()), event_id=number)


def related(event: Mapping[str, Any], *, children: bool) -> list[str]:
    """The FlowFiles ``event`` created (``children``), or those it acted on (its parents, its
    own FlowFile among them unless it created it), as ``engine.provenance.lineage`` reads events."""
    stand_in = _stand_in(0, event)
    return sorted(stand_in.child_uuids if children else event_parents(stand_in))


def graph(found: Iterable[tuple[str, Mapping[str, Any]]], roots: Iterable[str], visible: frozenset[str] | set[str],
          max_nodes: int) -> dict[str, Any]:
    """NiFi's ``nodes`` and ``links`` of the lineage of each FlowFile of ``roots`` over ``found``
    (``(node, event)``, duplicates allowed), and ``truncated``."""
    unique = {(node, event["id"]): (node, event) for node, event in found}
    ordered = sorted(unique.values(), key=lambda pair: newest_first(*pair))
    stand_ins = [_stand_in(number, event) for number, (_, event) in enumerate(ordered)]
    mentioning: dict[str, list[ProvenanceEvent]] = defaultdict(list)
    for stand_in in stand_ins:
        for uuid in {stand_in.flowfile_uuid, *stand_in.parent_uuids, *stand_in.child_uuids}:
            mentioning[uuid].append(stand_in)
    first_seen = {uuid: min(e.event_time for e in events) for uuid, events in mentioning.items()}
    nodes: dict[str, dict[str, Any]] = {}
    links: dict[tuple[str, str], dict[str, Any]] = {}
    truncated = False
    for root in dict.fromkeys(roots):
        lineage = compute_lineage(root, lambda uuid: mentioning.get(uuid, ()), max_nodes)
        truncated = truncated or lineage.truncated
        shown = {}
        for item in lineage.nodes:
            if len(nodes) >= max_nodes and item.id not in shown:
                truncated = True
                continue
            if item.kind == "flowfile":
                millis = first_seen.get(item.flowfile_uuid)
                entry = {"id": item.flowfile_uuid, "type": "FLOWFILE", "flowFileUuid": item.flowfile_uuid,
                         "parentUuids": [], "childUuids": [], "clusterNodeIdentifier": None, "eventType": None,
                         "componentType": None, "millis": millis, "timestamp": formats.timestamp(millis)}
            else:
                node, event = ordered[item.event_id]
                hidden = event.get("component_id") not in visible
                entry = {"id": event_id(node, event["id"]), "type": "EVENT",
                         "flowFileUuid": event["flowfile_uuid"], "parentUuids": sorted(event.get("parent_uuids") or ()),
                         "childUuids": sorted(event.get("child_uuids") or ()), "clusterNodeIdentifier": node,
                         "eventType": _UNKNOWN if hidden else event.get("type"),
                         "componentType": None if hidden else event.get("component_type"),
                         "millis": item.event_time, "timestamp": formats.timestamp(item.event_time)}
            shown[item.id] = entry
            nodes.setdefault(entry["id"], entry)
        for edge in lineage.edges:
            source, target = shown.get(edge.source), shown.get(edge.target)
            if source is None or target is None:
                continue
            millis = target["millis"] if target["type"] == "EVENT" else source["millis"]
            links.setdefault((source["id"], target["id"]), {
                "sourceId": source["id"], "targetId": target["id"], "flowFileUuid": edge.flowfile_uuid,
                "millis": millis, "timestamp": formats.timestamp(millis)})
    return {"nodes": list(nodes.values()), "links": list(links.values()), "truncated": truncated}
