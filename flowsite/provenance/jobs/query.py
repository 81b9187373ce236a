"""The provenance query job: every connected node (or the one named) searches its repository
within the request's scope; the answers are merged newest first as they come
(``merge.query``), so a client polling sees the events found so far (NiFi's incremental
results)."""

from __future__ import annotations

from typing import Any

from flowsite.provenance import merge
from flowsite.provenance.jobs.common import ask, finish, target_nodes

__all__ = ["NO_NODE", "run"]

NO_NODE = "no node is connected to the cluster: there is no provenance to search"


def run(record: dict[str, Any]) -> None:
    """Search every node and keep the newest ``maxResults`` events."""
    request, search = record["request"], record["search"]
    max_results = request["maxResults"]
    answers: dict[str, dict[str, Any]] = {}

    def answered(node: str, answer: dict[str, Any]) -> dict[str, Any]:
        answers[node] = answer
        return {"result": {**merge.query(answers, max_results), "warnings": []}}

    if not search["scope"]:  # no component the search may show: no node is asked
        finish(record, "done", result={**merge.query({}, max_results), "warnings": []})
        return
    nodes = target_nodes(record, request.get("clusterNodeId"))
    ask(record, nodes, "provenance.query", {"query": search["query"], "scope": search["scope"], "limit": max_results},
        on_answer=answered)
    warnings = [NO_NODE] if not record["nodes"]["asked"] else []
    finish(record, "done", result={**merge.query(answers, max_results), "warnings": warnings})
