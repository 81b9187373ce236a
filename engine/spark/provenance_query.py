"""Provenance analytics on Spark: SQL over the exported Parquet files, as the view ``provenance``.

``run_query`` reads the files the nodes exported (``engine.provenance.export``), keeps only the
events of the components the requester may see (``components``; None for all), offers them as
the temporary view ``provenance`` of a session of its own (so concurrent queries do not see each
other's view; times in UTC; SQL on files such as ``parquet.`/path``` is switched off) and runs the
SQL, keeping at most ``max_rows`` rows. Adaptive query execution is off in that session (its
stages run on threads that escape interruption); the shuffle is sized from the files instead. A query that outlives ``timeout`` or whose requester
gives up (``cancelled()``) is interrupted. The SQL itself is checked beforehand
(``provenance_sql.check_read_only``): this module trusts what it is given.

pyspark is imported only inside the functions here. The Spark session is the process's
(``engine.spark.runtime``), set up by ``jobs_runtime``; Spark's failures reach the caller as the
runtime maps them (``SparkQueryError``, ``SparkUnavailableError``).
"""

from __future__ import annotations

import base64
import logging
import math
import os
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import date, datetime, time as time_of_day, timedelta
from decimal import Decimal
from typing import Any, Callable, Collection, Sequence

import pyarrow as pa

from engine.provenance.export import SCHEMA
from engine.spark.provenance_sql import VIEW
from engine.spark.runtime import SparkRuntime, configure_node_runtime, node_runtime
from engine.spark.settings import SparkSettings

__all__ = ["QueryInterrupted", "QueryResult", "jobs_runtime", "run_query"]

log = logging.getLogger(__name__)

#: Parquet bytes per shuffle partition (compressed provenance: some hundred thousand events).
_BYTES_PER_PARTITION = 32 << 20


class QueryInterrupted(Exception):
    """The query was interrupted: it ran past its time limit, or its requester gave it up."""


@dataclass(frozen=True)
class QueryResult:
    """The first rows of a query's answer: ``columns`` as ``{"name", "type"}`` (Spark's type names),
    ``rows`` as lists of JSON-ready values, ``truncated`` when there were more than ``max_rows``."""

    columns: list[dict[str, str]]
    rows: list[list[Any]]
    truncated: bool
    max_rows: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {"columns": self.columns, "rows": self.rows, "row_count": len(self.rows), "truncated": self.truncated,
                "max_rows": self.max_rows, "seconds": round(self.seconds, 3)}


def run_query(runtime: SparkRuntime, files: Sequence[str], sql: str, *, components: Collection[str] | None,
              max_rows: int, timeout: float, cancelled: Callable[[], bool] = lambda: False) -> QueryResult:
    """Run ``sql`` over ``files`` as the view ``provenance`` (see the module docstring) on
    ``runtime`` (``jobs_runtime``); raises ``SparkQueryError`` (the query is wrong: Spark's
    message), ``SparkUnavailableError`` (Spark could not run it) or QueryInterrupted."""
    started = time.monotonic()

    def job(session: Any) -> QueryResult:
        from pyspark.sql import functions

        spark = _own_session(session)
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        spark.conf.set("spark.sql.runSQLOnFiles", "false")
        # Adaptive execution runs stages on threads of its own, which do not carry the job tags
        # that let a query be interrupted; the shuffle is sized from the data instead.
        spark.conf.set("spark.sql.adaptive.enabled", "false")
        spark.conf.set("spark.sql.shuffle.partitions", str(_shuffle_partitions(files)))
        schema = _spark_schema()
        events = spark.read.schema(schema).parquet(*files) if files else spark.createDataFrame([], schema)
        if components is not None:
            allowed = spark.createDataFrame([(c,) for c in sorted(components)], "allowed_component_id string")
            events = events.join(functions.broadcast(allowed), events.component_id == allowed.allowed_component_id,
                                 "left_semi")
        events.createOrReplaceTempView(VIEW)
        with _Watch(spark, timeout, cancelled) as watch:
            try:
                frame = spark.sql(sql)
                table = frame.limit(max_rows + 1).toArrow()
            except Exception:
                watch.raise_if_interrupted()
                raise
        columns = [{"name": field.name, "type": field.dataType.simpleString()} for field in frame.schema.fields]
        rows = _rows(table)
        return QueryResult(columns, rows[:max_rows], len(rows) > max_rows, max_rows, time.monotonic() - started)

    return runtime.run(job)


def _own_session(session: Any) -> Any:
    """A session of its own for one query (its temporary views and settings are its own; the
    SparkContext is shared); under Spark Connect, which has no ``newSession``, the session itself
    (the jobs process runs one query at a time)."""
    try:
        return session.newSession()
    except Exception:  # noqa: BLE001 - Spark Connect: not implemented
        return session


class _Watch:
    """Interrupts the Spark jobs this thread starts once ``timeout`` passes or ``cancelled()``.

    Jobs are tagged through the SparkContext (a classic session: its jobs carry the thread's
    tags); a Spark Connect session, which has no SparkContext, tags its operations instead."""

    def __init__(self, spark: Any, timeout: float, cancelled: Callable[[], bool]) -> None:
        self.tag = f"flowsite-analytics-{uuid.uuid4().hex}"
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.cancelled = cancelled
        self.reason = ""
        try:
            context = spark.sparkContext
        except Exception:  # noqa: BLE001 - Spark Connect has none
            context = None
        if context is not None:
            self._tag, self._untag = context.addJobTag, context.removeJobTag
            self._interrupt = context.cancelJobsWithTag
        else:
            self._tag, self._untag, self._interrupt = spark.addTag, spark.removeTag, spark.interruptTag
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="analytics-watch", daemon=True)

    def __enter__(self) -> _Watch:
        self._tag(self.tag)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._done.set()
        self._thread.join()
        self._untag(self.tag)

    def _run(self) -> None:
        while not self._done.wait(0.5):
            if not self.reason:
                if time.monotonic() > self.deadline:
                    self.reason = f"the query ran longer than its limit of {self.timeout:g} s"
                elif self.cancelled():
                    self.reason = "the request was given up"
                else:
                    continue
            # Again and again until the query ends: a job that starts after a cancel is not cancelled.
            try:
                self._interrupt(self.tag)
            except Exception:  # noqa: BLE001 - the query may be over already
                log.debug("interrupting analytics query %s failed", self.tag, exc_info=True)

    def raise_if_interrupted(self) -> None:
        if self.reason:
            raise QueryInterrupted(self.reason)


def _shuffle_partitions(files: Sequence[str]) -> int:
    """One shuffle partition per ``_BYTES_PER_PARTITION`` of Parquet, from 1 to 200."""
    total = 0
    for name in files:
        try:
            total += os.stat(name).st_size
        except OSError:
            continue
    return max(1, min(200, math.ceil(total / _BYTES_PER_PARTITION)))


def _spark_schema() -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(SCHEMA)


def _rows(table: pa.Table) -> list[list[Any]]:
    columns = [[_json(value, column.type) for value in column.to_pylist()] for column in table.columns]
    return [list(row) for row in zip(*columns)] if columns else [[] for _ in range(table.num_rows)]


def _json(value: Any, kind: pa.DataType) -> Any:
    """``value`` (of Arrow type ``kind``, as ``to_pylist`` gives it) as JSON: times in ISO 8601,
    decimals as numbers, bytes in base64, maps as objects, NaN and infinities as text."""
    if value is None:
        return None
    if pa.types.is_map(kind):
        return {str(_json(key, kind.key_type)): _json(item, kind.item_type) for key, item in value}
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return [_json(item, kind.value_type) for item in value]
    if pa.types.is_struct(kind):
        return {field.name: _json(value.get(field.name), field.type) for field in kind}
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, (date, time_of_day)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return value


# -- the Spark session of the jobs process ------------------------------------------------------

def jobs_runtime(settings: SparkSettings) -> SparkRuntime:
    """The process's Spark runtime (``node_runtime()``: one SparkSession per process), set up
    with ``settings`` when it holds others (the jobs process has no node settings of its own)."""
    runtime = node_runtime()
    if runtime.settings != settings:
        configure_node_runtime(settings, None, "flowsite-analytics")
        runtime = node_runtime()
    return runtime
