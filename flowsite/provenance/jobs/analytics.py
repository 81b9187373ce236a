"""The analytics job: every connected node exports its provenance, then Spark SQL runs over it.

1. *Export* (``exporting``, 5–65 %): every connected node is sent ``provenance.export`` with the
   request's id as token, and asked again every half second until it reports ``done`` or
   ``failed`` (``workers.commands``). A node that fails, answers with an error, or has not
   finished within ``FLOWSITE_ANALYTICS_EXPORT_TIMEOUT`` makes the result *partial*; the request
   names it and why. Each node lists the files that hold its provenance now; the job finds them in
   its own view of the shared analytics directory (``FLOWSITE_ANALYTICS_DIR``) — a file it cannot
   see there also leaves that node out, with a message saying that the directory must be shared.
2. *Query* (``querying``, 70 %): the SQL is checked again and, as sqlglot writes it back
   (``check_read_only``), run by ``engine.spark.provenance_query.run_query`` over the files of
   the nodes that answered, restricted to the request's scope, at most
   ``FLOWSITE_ANALYTICS_MAX_ROWS`` rows, interrupted after ``FLOWSITE_ANALYTICS_QUERY_TIMEOUT``.
3. ``done`` with the result, or ``failed`` with the reason (Spark's message for a wrong query).

A request deleted meanwhile stops the job at its next step (a running Spark query is interrupted).
The web tier never reads the analytics directory: only this job (in the jobs process) does.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import redis
from django.conf import settings

from engine.provenance.export import node_export_directory
from engine.spark.provenance_query import QueryInterrupted, jobs_runtime, run_query
from engine.spark.provenance_sql import UnsafeQueryError, check_read_only
from engine.spark.runtime import SparkQueryError, SparkUnavailableError
from engine.spark.settings import SparkSettings
from flowsite.cluster import redis as cluster_redis
from flowsite.cluster.nodes import connected
from flowsite.provenance import store
from flowsite.provenance.jobs.common import Gone, finish, step

__all__ = ["run", "spark_settings"]

log = logging.getLogger(__name__)

_POLL = 0.5
#: How long one round of asking the nodes waits for their (immediate) answers, in seconds.
_ANSWER_TIMEOUT = 5.0


def run(request_id: str) -> None:
    """Run the job of analytics request ``request_id`` (see the module docstring)."""
    record = store.load(request_id)
    if record is None or record["state"] in ("done", "failed"):
        return
    started = time.monotonic()
    try:
        step(record, state="exporting", percent=5, started_at=store.iso())
        files = _export(record)
        step(record, state="querying", percent=70)
        result = run_query(
            jobs_runtime(spark_settings()), files, check_read_only(record["sql"]),
            components=None if record["components"] is None else frozenset(record["components"]),
            max_rows=settings.FLOWSITE_ANALYTICS_MAX_ROWS, timeout=settings.FLOWSITE_ANALYTICS_QUERY_TIMEOUT,
            cancelled=lambda: not store.exists(request_id))
        _finish(record, started, "done", result=result.as_dict())
    except Gone:
        log.info("analytics request %s was deleted; its job stopped", request_id)
    except QueryInterrupted as error:
        if store.exists(request_id):
            _finish(record, started, "failed", error=f"the query was stopped: {error}")
    except UnsafeQueryError as error:
        _finish(record, started, "failed", error=f"the SQL was refused: {error}")
    except SparkQueryError as error:
        _finish(record, started, "failed", error=f"Spark could not run the query: {error}")
    except SparkUnavailableError as error:
        _finish(record, started, "failed", error=f"Spark is not available: {error}")
    except redis.RedisError as error:
        log.warning("analytics request %s: the cluster's Redis does not answer (%s); the job stops", request_id, error)
    except Exception as error:
        log.exception("analytics request %s failed", request_id)
        _finish(record, started, "failed", error=f"the job failed: {error}")


def spark_settings() -> SparkSettings:
    """The Spark of the jobs process: ``SPARK_MASTER`` with ``FLOWSITE_ANALYTICS_SPARK``'s settings."""
    return SparkSettings.from_mapping({**settings.FLOWSITE_ANALYTICS_SPARK, "master": settings.SPARK_MASTER})


def _finish(record: dict[str, Any], started: float, state: str, **changes: Any) -> None:
    finish(record, state, duration_seconds=round(time.monotonic() - started, 3), **changes)


def _export(record: dict[str, Any]) -> list[str]:
    """Have every connected node export; the Parquet files of those that did (see step 1). Each
    node is asked on a thread of its own, so a node that does not answer delays no other."""
    nodes = connected()
    step(record, nodes={"asked": nodes, "answered": [], "missing": []})
    if not nodes:
        record["warnings"].append("no node is connected to the cluster: there is no provenance to query")
        return []
    deadline = time.monotonic() + settings.FLOWSITE_ANALYTICS_EXPORT_TIMEOUT
    percents = {node: 0 for node in nodes}
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=min(len(nodes), 32), thread_name_prefix="analytics-export") as pool:
        futures = {node: pool.submit(_export_on, node, record["id"], deadline, percents, stop) for node in nodes}
        try:
            while not all(future.done() for future in futures.values()):
                time.sleep(_POLL)
                step(record, percent=5 + int(60 * sum(percents.values()) / (100 * len(nodes))))
        except BaseException:
            stop.set()
            raise
        outcomes = {node: future.result() for node, future in futures.items()}
    files: list[str] = []
    missing: list[dict[str, str]] = []
    for node, (report, problem) in outcomes.items():
        found: list[str] = []
        if report is not None:
            found, unreadable = _node_files(node, report)
            if unreadable:
                problem = {"reason": "its export cannot be read by the jobs process", "detail": unreadable}
        if problem is not None:
            missing.append({"node": node, **problem})
            continue
        files += found
        _note_damage(record, node, report)
    missed = {entry["node"] for entry in missing}
    step(record, nodes={"asked": nodes, "answered": [node for node in nodes if node not in missed],
                         "missing": missing}, partial=bool(missing))
    return files


def _export_on(node: str, token: str, deadline: float, percents: dict[str, int], stop: threading.Event
               ) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
    """Ask ``node`` to export until it is done, fails, ``deadline`` passes or ``stop`` is set:
    (its report, None) or (None, why it is missing)."""
    bus = cluster_redis.bus()
    reason = "it did not answer"
    while time.monotonic() < deadline and not stop.is_set():
        reply = bus.request([node], "provenance.export", {"token": token},
                            timeout=max(0.1, min(_ANSWER_TIMEOUT, deadline - time.monotonic())))[node]
        answer = reply.result if reply.ok and isinstance(reply.result, dict) else {}
        if reply.timed_out:
            reason = "it did not answer"
            continue
        if not reply.ok or answer.get("state") == "failed":
            return None, {"reason": "its export failed", "detail": reply.error or str(answer.get("error") or "")}
        if answer.get("state") == "done":
            percents[node] = 100
            return answer.get("report") or {}, None
        percents[node] = int(answer.get("percent") or 0)
        reason = f"it had not finished exporting ({percents[node]} %)"
        time.sleep(_POLL)
    limit = settings.FLOWSITE_ANALYTICS_EXPORT_TIMEOUT
    return None, {"reason": f"{reason} within {limit:g} s", "detail": ""}


def _node_files(node: str, report: dict[str, Any]) -> tuple[list[str], str]:
    """The paths of a node's exported files as this process sees them, or why they cannot be read."""
    directory = node_export_directory(settings.FLOWSITE_ANALYTICS_DIR, node)
    paths = [directory / Path(entry["name"]).name for entry in report.get("files") or ()]
    absent = [path for path in paths if not path.is_file()]
    if absent:
        return [], (f"it exported into {report.get('directory')}, but {absent[0]} is not there for the jobs process: "
                    "FLOWSITE_ANALYTICS_DIR must name one directory shared by the nodes and the jobs process, at "
                    "the same path")
    return [str(path) for path in paths], ""


def _note_damage(record: dict[str, Any], node: str, report: dict[str, Any]) -> None:
    """Report a node's damaged provenance and export errors: in full to operators (``damage``,
    ``node_errors``), in neutral words to anyone (``warnings``)."""
    damage = [{**entry, "node": node} for exported in report.get("files") or () for entry in exported.get("damage") or ()]
    record["damage"] += damage
    if damage:
        record["warnings"].append(f"node {node}: {len(damage)} damaged place(s) in its stored provenance could not be "
                                  "read; the events there are left out")
    errors = list(report.get("errors") or ())
    record["node_errors"] += [{"node": node, "error": error} for error in errors]
    if errors:
        record["warnings"].append(f"node {node}: its newest events may be missing (its export met a problem)")
