"""The lineage job (NiFi's lineage computations and their expansions).

- ``FLOWFILE``: every connected node is asked for the events of the FlowFile's lineage
  (``provenance.lineage`` with its uuid, both directions); the events of all nodes are merged and
  the graph built over them, so a FlowFile that moved between nodes is followed across them.
- ``PARENTS`` / ``CHILDREN``: the node holding the event is asked for the event's parents (or
  children) and their lineage in that direction; the graph is that of each parent (or child).

Each node sends the events of the request's scope only (every component of the tenants whose
provenance the user may query); events of those the user may not view the provenance of become
NiFi's UNKNOWN placeholders (``flowsite.provenance.lineage``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from flowsite.provenance.jobs.common import ask, finish, target_nodes
from flowsite.provenance.jobs.query import NO_NODE
from flowsite.provenance.lineage import graph, related

__all__ = ["run"]

_DIRECTIONS = {"FLOWFILE": "both", "PARENTS": "parents", "CHILDREN": "children"}


def run(record: dict[str, Any]) -> None:
    """Gather the lineage's events from the nodes and build its graph."""
    kind = record["request"]["lineageRequestType"]
    scope, visible = record["scope"], frozenset(record["visible"])
    max_nodes = settings.FLOWSITE_LINEAGE_MAX_NODES
    args: dict[str, Any] = {"direction": _DIRECTIONS[kind], "scope": scope, "max_nodes": max_nodes}
    if kind == "FLOWFILE":
        nodes = target_nodes(record)
        args["uuid"] = record["root"]
    else:
        node, number = record["event"]
        nodes = target_nodes(record, node)
        args["event_id"] = number
    answers = ask(record, nodes, "provenance.lineage", args)
    found = [(node, event) for node, answer in answers.items() for event in answer.get("events") or ()]
    if kind == "FLOWFILE":
        roots = [record["root"]]
    else:
        anchor = next((event for node, event in found if [node, event["id"]] == record["event"]), None)
        roots = related(anchor, children=kind == "CHILDREN") if anchor else []
    result = graph(found, roots, visible, max_nodes)
    result["truncated"] = result["truncated"] or any(answer.get("truncated") for answer in answers.values())
    finish(record, "done", result={**result, "warnings": [] if record["nodes"]["asked"] else [NO_NODE]})

