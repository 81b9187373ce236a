"""The queue jobs: a listing (``queue.list`` on every connected node, merged by position) and a
drop (the queue's size on every node, ``queue.empty`` on every node, the size again), each node's
answers recorded as they come."""

from __future__ import annotations

from typing import Any

from flowsite.provenance import merge
from flowsite.provenance.jobs.common import ask, finish, target_nodes

__all__ = ["drop", "listing"]


def listing(record: dict[str, Any]) -> None:
    """List the queue's first FlowFiles on every node."""
    max_results = record["max_results"]
    answers: dict[str, dict[str, Any]] = {}

    def answered(node: str, answer: dict[str, Any]) -> dict[str, Any]:
        answers[node] = answer
        return {"result": merge.listing(answers, max_results)}

    nodes = target_nodes(record)
    ask(record, nodes, "queue.list", {"id": record["connection"], "max": max_results}, on_answer=answered)
    finish(record, "done", result=merge.listing(answers, max_results))


def drop(record: dict[str, Any]) -> None:
    """Drop every FlowFile of the queue on every node, counting before and after."""
    connection = record["connection"]
    original: dict[str, dict[str, Any]] = {}
    dropped: dict[str, dict[str, Any]] = {}
    current: dict[str, dict[str, Any]] = {}

    def stage(found: dict[str, dict[str, Any]]):
        def answered(node: str, answer: dict[str, Any]) -> dict[str, Any]:
            found[node] = answer
            return {"result": merge.drop(original, dropped, current)}
        return answered

    nodes = target_nodes(record)
    size = {"id": connection, "max": 0}
    ask(record, nodes, "queue.list", size, progress=(5, 30), on_answer=stage(original))
    ask(record, nodes, "queue.empty", {"id": connection, "requester": record["requester"]}, progress=(30, 80),
        on_answer=stage(dropped))
    ask(record, nodes, "queue.list", size, progress=(80, 95), on_answer=stage(current))
    finish(record, "done", result=merge.drop(original, dropped, current))
