"""The Spark work of the record processors: each function runs inside ``SparkRuntime.run`` and
takes the runtime, the SparkSession and the Arrow records of a micro-batch (with the
``__flowfile_index`` column that says which FlowFile each record came from); answers come back
as Arrow tables that keep that column. pyspark is imported inside the functions only.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, NamedTuple

import pyarrow as pa

from engine.processors._query_plan import INDEX_COLUMN

__all__ = ["QueryAnswer", "add_columns", "query_records", "update_records"]


class QueryAnswer(NamedTuple):
    """One query's answer over a micro-batch, and, for an aggregate without GROUP BY, its
    answer over no records (for the FlowFiles that have none)."""

    table: pa.Table
    over_no_records: pa.Table | None


def query_records(runtime: Any, spark: Any, table: pa.Table, plans: Sequence[Any],
                  positions: Sequence[int]) -> list[QueryAnswer]:
    """Each plan's answer (``engine.processors._query_plan.QueryPlan``) over ``table``, whose
    records belong to the FlowFiles at ``positions``. A plan rewritten for micro-batches runs
    once; any other runs once per FlowFile."""
    from pyspark.sql import functions as F

    view = _view_name()
    answers = []
    with runtime.frame(spark, table) as frame:
        frame.createOrReplaceTempView(view)
        try:
            for plan in plans:
                if plan.batched is not None:
                    answer = runtime.collect(spark.sql(plan.batched_sql(view)), size_hint=table.nbytes)
                else:
                    pieces = []
                    for position in positions:
                        records = frame.where(F.col(INDEX_COLUMN) == position).drop(INDEX_COLUMN)
                        piece = _query_view(runtime, spark, records, plan, table.nbytes)
                        pieces.append(piece.append_column(INDEX_COLUMN, pa.array([position] * piece.num_rows,
                                                                                 pa.int32())))
                    answer = pa.concat_tables(pieces, promote_options="permissive")
                empty = None
                if plan.needs_empty_answer:
                    empty = _query_view(runtime, spark, frame.limit(0).drop(INDEX_COLUMN), plan, 0)
                answers.append(QueryAnswer(answer, empty))
        finally:
            spark.catalog.dropTempView(view)
    return answers


def add_columns(runtime: Any, spark: Any, table: pa.Table, expressions: Sequence[tuple[str, str]]) -> pa.Table:
    """``table`` with a column per ``(name, Spark SQL expression)`` added (the record order kept)."""
    from pyspark.sql import functions as F

    with runtime.frame(spark, table) as frame:
        added = frame.select("*", *(F.expr(sql).alias(name) for name, sql in expressions))
        return runtime.collect(added, size_hint=table.nbytes)


def update_records(runtime: Any, spark: Any, table: pa.Table,
                   updates: Sequence[Sequence[tuple[str, str]]]) -> pa.Table:
    """``table`` with its top-level columns replaced (or added) by each update, a list of
    ``(column, Spark SQL expression)`` computed together; the updates apply one after the other
    (a later one sees the earlier ones), and the record order is kept."""
    from pyspark.sql import functions as F

    with runtime.frame(spark, table) as frame:
        for columns in updates:
            frame = frame.withColumns({column: F.expr(expression) for column, expression in columns})
        return runtime.collect(frame, size_hint=table.nbytes)


def _query_view(runtime: Any, spark: Any, records: Any, plan: Any, size_hint: int) -> pa.Table:
    """The plan's query as written, over ``records`` (a DataFrame without the index)."""
    view = _view_name()
    records.createOrReplaceTempView(view)
    try:
        return runtime.collect(spark.sql(plan.single_sql(view)), size_hint=size_hint)
    finally:
        spark.catalog.dropTempView(view)


def _view_name() -> str:
    """A temporary view name no other job of the shared SparkSession uses."""
    return f"flowfile_{uuid.uuid4().hex}"
