"""The nodes' answers merged into one, as NiFi's cluster mergers do (``ProvenanceQueryEndpointMerger``,
``ListFlowFilesEndpointMerger``, ``DropRequestEndpointMerger``). Pure: answers in, result out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["drop", "listing", "newest_first", "query"]


def newest_first(node: str, event: Mapping[str, Any]) -> tuple:
    """The sort key of an event of ``node``, newest first when sorted in reverse: event time, then
    node id, then event id (NiFi's order across a cluster)."""
    return event.get("time") or 0, node, event.get("id") or 0


def query(answers: Mapping[str, Mapping[str, Any]], max_results: int) -> dict[str, Any]:
    """Each node's ``provenance.query`` answer (``{events, more, oldest_event_time}``) merged:
    the newest ``max_results`` events as ``[node, event]``, ``total_count`` and ``capped`` (the
    count stops at ``max_results`` when more events match: NiFi's ``"1,000+"``), and the oldest
    event any node still holds."""
    found = [(node, event) for node, answer in answers.items() for event in answer.get("events") or ()]
    found.sort(key=lambda pair: newest_first(*pair), reverse=True)
    capped = len(found) > max_results or any(answer.get("more") for answer in answers.values())
    oldest = [answer["oldest_event_time"] for answer in answers.values() if answer.get("oldest_event_time") is not None]
    return {"events": [[node, event] for node, event in found[:max_results]],
            "total_count": max_results if capped else len(found), "capped": capped,
            "oldest_event_time": min(oldest) if oldest else None}


def listing(answers: Mapping[str, Mapping[str, Any]], max_results: int) -> dict[str, Any]:
    """Each node's ``queue.list`` answer merged: the queue's size over every node (swapped-out
    FlowFiles counted, not listed) and its first ``max_results`` FlowFiles by position, then node,
    as ``[node, flowfile]``; a side of the connection runs if it runs on any node."""
    flowfiles = [(node, flowfile) for node, answer in answers.items() for flowfile in answer.get("flowfiles") or ()]
    flowfiles.sort(key=lambda pair: (pair[1].get("position") or 0, pair[0]))
    return {"flowfiles": [[node, flowfile] for node, flowfile in flowfiles[:max_results]],
            "count": sum(int(answer.get("count") or 0) for answer in answers.values()),
            "bytes": sum(int(answer.get("bytes") or 0) for answer in answers.values()),
            "swapped_count": sum(int(answer.get("swapped_count") or 0) for answer in answers.values()),
            "source_running": any(answer.get("source_running") for answer in answers.values()),
            "destination_running": any(answer.get("destination_running") for answer in answers.values())}


def drop(original: Mapping[str, Mapping[str, Any]], dropped: Mapping[str, Mapping[str, Any]],
         current: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A drop's figures from the queue's size before (``queue.list``), what each node dropped
    (``queue.empty``) and the size after: totals (``original_count``, ``dropped_size`` …, None
    while a stage has no answer yet) and each node's own."""
    stages = {"original": {node: (answer.get("count"), answer.get("bytes")) for node, answer in original.items()},
              "dropped": {node: (answer.get("dropped"), answer.get("dropped_bytes"))
                          for node, answer in dropped.items()},
              "current": {node: (answer.get("count"), answer.get("bytes")) for node, answer in current.items()}}
    merged: dict[str, Any] = {"nodes": {}}
    for stage, figures in stages.items():
        merged[f"{stage}_count"] = sum(int(count or 0) for count, _ in figures.values()) if figures else None
        merged[f"{stage}_size"] = sum(int(size or 0) for _, size in figures.values()) if figures else None
        for node, (count, size) in figures.items():
            merged["nodes"].setdefault(node, {}).update({f"{stage}_count": count, f"{stage}_size": size})
    return merged
