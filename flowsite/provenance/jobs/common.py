"""What every job shares: its request's life and asking the nodes.

A job runs one request of the request store (``flowsite.provenance.store``) from ``queued`` to
``done`` or ``failed``, writing progress as it goes. Every write goes through ``step``, which
raises ``Gone`` once the request was deleted (or expired): the job then stops at once, and a
task delivered again for a finished request finds nothing to do.

``ask`` carries one command to several nodes at once, each on a thread of its own (a node that
does not answer delays no other), waiting ``FLOWSITE_NODE_REQUEST_TIMEOUT`` for each. Nodes are
recorded in the request as they answer: ``nodes.asked``, ``nodes.answered`` and
``nodes.missing`` (``{node, reason, detail}``: a node that did not answer in time, answered an
error or is not connected). A missing node makes the result ``partial``; it never fails the
request. While it waits for slow nodes a job checks twice a second that its request still
exists, so a DELETE stops it at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any

import redis
from django.conf import settings

from engine.cluster.bus import Reply
from flowsite.cluster import redis as cluster_redis
from flowsite.cluster.nodes import connected
from flowsite.provenance import store

__all__ = ["Gone", "ask", "begin", "finish", "run", "step", "target_nodes"]

log = logging.getLogger(__name__)

#: How often a job waiting for the nodes checks that its request still exists, in seconds.
_CHECK_SECONDS = 0.5
#: Answers a node may give that mean "nothing of that here" rather than an answer to merge: the
#: node holds the component but does not run it (its tenant is placed on other nodes).
_NOT_HERE = "here"


class Gone(Exception):
    """The request was deleted (or expired) while its job ran."""


def step(record: dict[str, Any], **changes: Any) -> None:
    """Record ``changes``; raise Gone when the request no longer exists."""
    if not store.update(record, **changes):
        raise Gone()


def finish(record: dict[str, Any], state: str, **changes: Any) -> None:
    """Record the request as ``state`` (done or failed) with ``changes``, kept a whole lifetime from now."""
    store.update(record, final=True, state=state, percent=100, finished_at=store.iso(), **changes)


def begin(request_id: str, kind: str) -> dict[str, Any] | None:
    """The request to run, marked running; None when there is nothing to do (deleted, expired,
    of another kind or already finished: a task delivered twice)."""
    record = store.load(request_id)
    if record is None or record.get("kind") != kind or record["state"] in ("done", "failed"):
        return None
    step(record, state="running", percent=max(record.get("percent") or 0, 1), started_at=store.iso())
    return record


def run(request_id: str, kind: str, work: Callable[[dict[str, Any]], None]) -> None:
    """Run ``work(record)`` for request ``request_id`` of ``kind``: ``work`` finishes the request
    itself; a deleted request stops it quietly, an unexpected error fails the request."""
    try:
        record = begin(request_id, kind)
        if record is None:
            return
        try:
            work(record)
        except (Gone, redis.RedisError):
            raise
        except Exception as error:  # noqa: BLE001 - the request says why it failed
            log.exception("%s %s failed", kind, request_id)
            finish(record, "failed", failure_reason=f"the job failed: {error}")
    except Gone:
        log.info("%s %s was deleted; its job stopped", kind, request_id)
    except redis.RedisError as error:
        log.warning("%s %s: the cluster's Redis does not answer (%s); the job stops", kind, request_id, error)


def target_nodes(record: dict[str, Any], only: str | None = None) -> list[str]:
    """The nodes to ask — every connected node, or only ``only`` — recorded as asked; ``only``
    when it is not connected is recorded as missing."""
    nodes = connected()
    if only is not None:
        absent = only not in nodes
        nodes = [] if absent else [only]
        missing = [{"node": only, "reason": "it is not connected to the cluster", "detail": ""}] if absent else []
        step(record, nodes={"asked": [only], "answered": [], "missing": missing}, partial=absent)
        return nodes
    step(record, nodes={"asked": nodes, "answered": [], "missing": []}, partial=False)
    return nodes


def _ask_one(node: str, command: str, args: dict[str, Any], timeout: float) -> Reply:
    return cluster_redis.bus().request([node], command, args, timeout=timeout)[node]


def _missed(record: dict[str, Any], node: str, reply: Reply) -> None:
    """Record ``node`` as missing, saying why (its own words only in ``detail``)."""
    nodes = record["nodes"]
    if reply.timed_out:
        reason = f"it did not answer within {settings.FLOWSITE_NODE_REQUEST_TIMEOUT:g} s"
    else:
        reason = "it could not answer the request"
    nodes["answered"] = [name for name in nodes["answered"] if name != node]
    if all(entry["node"] != node for entry in nodes["missing"]):
        nodes["missing"].append({"node": node, "reason": reason, "detail": reply.error})
    record["partial"] = True


def ask(record: dict[str, Any], nodes: list[str], command: str, args: Callable[[str], dict[str, Any]] | dict[str, Any],
        *, progress: tuple[int, int] = (5, 95),
        on_answer: Callable[[str, dict[str, Any]], dict[str, Any] | None] | None = None) -> dict[str, dict[str, Any]]:
    """Send ``command`` with ``args`` (or ``args(node)``) to each of ``nodes`` (those missing
    already are skipped) and return the result of each that answered, by node. As each answers
    the request records it, its percent moving through ``progress``, with what
    ``on_answer(node, result)`` returns; a node that answers ``here: false`` answered nothing."""
    missing = {entry["node"] for entry in record["nodes"]["missing"]}
    asked = [node for node in nodes if node not in missing]
    results: dict[str, dict[str, Any]] = {}
    if not asked:
        return results
    low, high = progress
    timeout = float(settings.FLOWSITE_NODE_REQUEST_TIMEOUT)
    pool = ThreadPoolExecutor(max_workers=min(len(asked), 32), thread_name_prefix=f"ask-{command}")
    try:
        pending = {pool.submit(_ask_one, node, command, args(node) if callable(args) else args, timeout): node
                   for node in asked}
        done = 0
        while pending:
            finished, _ = wait(pending, timeout=_CHECK_SECONDS, return_when=FIRST_COMPLETED)
            if not finished and not store.exists(record["id"]):
                raise Gone()
            for future in finished:
                node, reply = pending.pop(future), future.result()
                done += 1
                changes: dict[str, Any] = {}
                if reply.ok and isinstance(reply.result, dict):
                    if reply.result.get(_NOT_HERE) is not False:
                        results[node] = reply.result
                        changes = (on_answer(node, reply.result) if on_answer else None) or {}
                    record["nodes"]["answered"] = sorted({*record["nodes"]["answered"], node})
                else:
                    _missed(record, node, reply)
                step(record, nodes=record["nodes"], partial=record["partial"],
                     percent=low + (high - low) * done // len(asked), **changes)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return results
