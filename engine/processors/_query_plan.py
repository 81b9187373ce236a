"""QueryRecord's SQL, rewritten so that one Spark job answers it for every FlowFile of a micro-batch.

The records of a micro-batch's FlowFiles are one table whose extra column ``__flowfile_index``
says which FlowFile each record came from. A query written for one FlowFile (``FROM FLOWFILE``)
is rewritten with sqlglot to keep the FlowFiles apart:

- the index is added to the projection (a ``*`` brings it along already) and to GROUP BY (an
  aggregate without GROUP BY gets ``GROUP BY`` the index), so each FlowFile gets its own groups;
- window functions get the index in their PARTITION BY; DISTINCT keeps working because the
  index is projected; ORDER BY gets the index first;
- ``LIMIT n [OFFSET m]`` becomes a filter on ``ROW_NUMBER() OVER (PARTITION BY index ORDER BY
  ...)``: the query's own ORDER BY, or the records' order in the FlowFile when it has none;
- an aggregate without GROUP BY answers one row even for a FlowFile without records (a count of
  0): such FlowFiles get the query's answer over no records.

Queries this cannot rewrite safely run once per FlowFile instead: set operations (UNION,
INTERSECT, EXCEPT), WITH, joins (FLOWFILE with itself), subqueries, a FROM that is not FLOWFILE
alone, named WINDOW clauses, GROUPING SETS / ROLLUP / CUBE, QUALIFY, TABLESAMPLE, LATERAL VIEW,
DISTINCT with LIMIT, a LIMIT that is not a number, and queries without FROM.

The SQL is Spark SQL read with NiFi's quoting (Calcite's MySQL-ANSI lexing, which NiFi's
QueryRecord uses): ``"double quotes"`` and backticks name columns, ``'single quotes'``
are strings. The only table is ``FLOWFILE``; functions that reach outside the records
(``reflect``, ``java_method``) are refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import SqlglotError

__all__ = ["INDEX_COLUMN", "RESERVED_PREFIX", "QueryPlan", "QuerySyntaxError", "plan_query", "reserved"]

TABLE = "flowfile"
#: Columns named so are Flowsite's (the micro-batch index, the rewrite's helpers): a result
#: never keeps them, and records may not have them.
RESERVED_PREFIX = "__flowfile_"
INDEX_COLUMN = "__flowfile_index"
ROW_COLUMN = "__flowfile_row"
RANK_COLUMN = "__flowfile_rank"
_REFUSED_FUNCTIONS = frozenset({"reflect", "java_method", "try_reflect"})


class QuerySyntaxError(ValueError):
    """The text is not a query QueryRecord can run: not SQL, not a SELECT, another table..."""


class _Unsafe(Exception):
    """The rewrite found that the query cannot run for a whole micro-batch."""


class _NiFiSpark(Spark):
    """Spark SQL with NiFi's quoting: double quotes name identifiers."""

    class Tokenizer(Spark.Tokenizer):
        IDENTIFIERS = ["`", '"']
        QUOTES = ["'"]


@dataclass(frozen=True)
class QueryPlan:
    """How one query runs: rewritten for a whole micro-batch, or once per FlowFile."""

    text: str
    #: The query as written (its FLOWFILE tables renamed when run).
    single: exp.Query
    #: The rewritten query over a micro-batch, or None when it runs once per FlowFile.
    batched: exp.Query | None
    #: Why it runs once per FlowFile (None when batched).
    single_reason: str | None
    #: An aggregate without GROUP BY: a FlowFile without rows gets the answer over no records.
    needs_empty_answer: bool

    def single_sql(self, view: str) -> str:
        """The query as written, over the view ``view``."""
        return _over(self.single, view)

    def batched_sql(self, view: str) -> str:
        """The rewritten query over the view ``view`` (which has the index column)."""
        if self.batched is None:
            raise ValueError(f"the query runs once per FlowFile: {self.single_reason}")
        return _over(self.batched, view)


def plan_query(text: str) -> QueryPlan:
    """Parse and check ``text`` and rewrite it for micro-batches; raises QuerySyntaxError."""
    query = _parse(text)
    _check(query)
    try:
        reason = _unsafe(query)
        if reason is None:
            batched, needs_empty_answer = _rewrite(query.copy())
            return QueryPlan(text, query, batched, None, needs_empty_answer)
    except _Unsafe as error:
        reason = str(error)
    return QueryPlan(text, query, None, reason, False)


# -- parsing and checks ---------------------------------------------------------------------


def _parse(text: str) -> exp.Query:
    try:
        statements = [statement for statement in sqlglot.parse(text, read=_NiFiSpark) if statement is not None]
    except SqlglotError as error:
        raise QuerySyntaxError(f"not valid SQL: {_first_line(error)}") from None
    if len(statements) != 1:
        raise QuerySyntaxError(f"one SELECT statement is expected, not {len(statements)} statements")
    statement = statements[0]
    if not isinstance(statement, exp.Query):
        raise QuerySyntaxError(f"only SELECT queries are allowed: {_first_line(statement.sql(dialect='spark'))!r} "
                               "is not one")
    return statement


def _check(query: exp.Query) -> None:
    """Refuse tables other than FLOWFILE (and WITH names) and functions reaching outside."""
    ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    for table in query.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            raise QuerySyntaxError(f"table functions are not allowed: {table.sql(dialect='spark')}")
        if table.args.get("db") or table.args.get("catalog"):
            raise QuerySyntaxError(f"the only table is FLOWFILE, not {table.sql(dialect='spark')}")
        name = table.name.lower()
        if name != TABLE and name not in ctes:
            raise QuerySyntaxError(f"the only table is FLOWFILE, not {table.name}")
    for function in query.find_all(exp.Func):
        name = (function.name if isinstance(function, exp.Anonymous) else function.sql_name()).lower()
        if name in _REFUSED_FUNCTIONS:
            raise QuerySyntaxError(f"the function {name} is not allowed")
    for column in query.find_all(exp.Column):
        if reserved(column.name):
            raise QuerySyntaxError(f"{column.name} is a name Flowsite reserves")


def _unsafe(query: exp.Query) -> str | None:
    """Why ``query`` cannot be rewritten for a micro-batch, or None."""
    if not isinstance(query, exp.Select):
        return f"a set operation ({query.key.upper()})"
    if query.args.get("with_") or query.args.get("with"):
        return "a WITH clause"
    if any(select is not query for select in query.find_all(exp.Select)):
        return "a subquery"
    source = query.args.get("from_") or query.args.get("from")
    if source is None:
        return "no FROM clause"
    if query.args.get("joins") or not isinstance(source.this, exp.Table):
        return "a FROM clause other than FLOWFILE alone"
    if source.this.args.get("sample") or query.find(exp.TableSample):
        return "TABLESAMPLE"
    for key, why in (("windows", "a WINDOW clause"), ("qualify", "QUALIFY"), ("laterals", "LATERAL VIEW")):
        if query.args.get(key):
            return why
    group = query.args.get("group")
    if group is not None and (any(group.args.get(key) for key in ("rollup", "cube", "grouping_sets"))
                              or group.find(exp.Rollup, exp.Cube, exp.GroupingSets)):
        return "GROUPING SETS, ROLLUP or CUBE"
    limit = query.args.get("limit")
    if limit is not None:
        if query.args.get("distinct"):
            return "DISTINCT with LIMIT"
        if _number(limit.expression) is None:
            return "a LIMIT that is not a number"
    offset = query.args.get("offset")
    if offset is not None and _number(offset.expression) is None:
        return "an OFFSET that is not a number"
    return None


# -- the rewrite ----------------------------------------------------------------------------


def _rewrite(query: exp.Select) -> tuple[exp.Query, bool]:
    """The micro-batch form of ``query`` and whether it needs the answer over no records;
    raises _Unsafe when it cannot be done."""
    source = (query.args.get("from_") or query.args.get("from")).this
    alias = source.alias_or_name
    index = exp.column(INDEX_COLUMN, table=alias if source.alias else None)
    aggregate = _is_aggregate(query)
    empty_answer = aggregate and query.args.get("group") is None

    for window in query.find_all(exp.Window):
        window.set("partition_by", [index.copy(), *(window.args.get("partition_by") or [])])
    if not _has_star(query):
        query.append("expressions", index.copy())
    if aggregate:
        group = query.args.get("group") or exp.Group()
        group.append("expressions", index.copy())
        query.set("group", group)

    limit = query.args.get("limit")
    offset = query.args.get("offset")
    if limit is None and offset is None:
        order = query.args.get("order")
        if order is not None:
            order.set("expressions", [exp.Ordered(this=index.copy()), *order.expressions])
        return query, empty_answer

    # LIMIT/OFFSET per FlowFile: number the rows of each FlowFile, keep the wanted ones.
    ordering = _order_terms(query)
    if ordering is None:
        raise _Unsafe("an ORDER BY ordinal that names * or no column")
    if not ordering:
        if aggregate:
            ordering = [exp.Ordered(this=index.copy())]
        else:
            row_source = exp.select("*", exp.alias_(exp.func("monotonically_increasing_id"), ROW_COLUMN)).from_(
                exp.Table(this=exp.to_identifier(TABLE)))
            query.set("from_", exp.From(this=row_source.subquery(alias)))
            ordering = [exp.Ordered(this=exp.column(ROW_COLUMN, table=alias))]
    rank = exp.Window(this=exp.RowNumber(), partition_by=[index.copy()], order=exp.Order(expressions=ordering))
    query.append("expressions", exp.alias_(rank, RANK_COLUMN))
    for key in ("limit", "offset", "order"):
        query.set(key, None)
    skip = _number(offset.expression) if offset is not None else 0
    condition = exp.column(RANK_COLUMN) > skip
    if limit is not None:
        condition = exp.and_(condition, exp.column(RANK_COLUMN) <= skip + _number(limit.expression))
    outer = (exp.select("*").from_(query.subquery("__flowfile_numbered")).where(condition)
             .order_by(exp.column(INDEX_COLUMN), exp.column(RANK_COLUMN)))
    return outer, empty_answer


def _order_terms(query: exp.Select) -> list[exp.Ordered] | None:
    """The ORDER BY terms with output aliases and ordinals replaced by the expressions they name
    (a window cannot see the select list); None when an ordinal names a ``*``."""
    order = query.args.get("order")
    if order is None:
        return []
    projections = query.expressions
    aliases = {projection.alias.lower(): projection.this for projection in projections
               if isinstance(projection, exp.Alias)}
    terms = []
    for ordered in order.expressions:
        ordered = ordered.copy()
        term = ordered.this
        position = _number(term) if isinstance(term, exp.Literal) else None
        if position is not None:
            if not 1 <= position <= len(projections):
                return None
            named = projections[position - 1]
            if isinstance(named, exp.Star) or (isinstance(named, exp.Column) and isinstance(named.this, exp.Star)):
                return None
            ordered.set("this", (named.this if isinstance(named, exp.Alias) else named).copy())
        elif isinstance(term, exp.Column) and not term.table and term.name.lower() in aliases:
            ordered.set("this", aliases[term.name.lower()].copy())
        terms.append(ordered)
    return terms


def _is_aggregate(query: exp.Select) -> bool:
    if query.args.get("group") is not None or query.args.get("having") is not None:
        return True
    return any(function.find_ancestor(exp.Window) is None for function in query.find_all(exp.AggFunc))


def _has_star(query: exp.Select) -> bool:
    return any(isinstance(projection, exp.Star)
               or (isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star))
               for projection in query.expressions)


def reserved(name: str) -> bool:
    """True for a column name Flowsite reserves."""
    return name.lower().startswith(RESERVED_PREFIX)


def _number(node: exp.Expression | None) -> int | None:
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return int(node.this)
        except ValueError:
            return None
    return None


def _over(query: exp.Query, view: str) -> str:
    """``query`` as Spark SQL with its FLOWFILE tables reading ``view`` (still called FLOWFILE
    or their alias, so that qualified columns keep working)."""
    query = query.copy()
    for table in query.find_all(exp.Table):
        if table.name.lower() == TABLE:
            alias = table.alias or table.name
            table.set("this", exp.to_identifier(view))
            table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    return query.sql(dialect="spark")


def _first_line(error: Exception) -> str:
    return str(error).strip().split("\n")[0]
