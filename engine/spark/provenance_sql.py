"""The SQL of provenance analytics: the ready questions, and the check that ad-hoc SQL only reads.

Queries run in Spark SQL over one view, ``provenance``: the exported events
(``engine.provenance.export.SCHEMA``), already reduced to the components the requester may see.
Importable without pyspark (the web tier checks SQL with it before a job is queued).

Ad-hoc SQL is accepted only as one query (``SELECT``, ``WITH … SELECT`` or a set operation of
them) that reads nothing but the view ``provenance`` and its own common table expressions: no
statement that writes or configures (``INSERT``, ``CREATE``, ``SET``, ``CACHE``, …), no other
table, no file read as a table (``parquet.`/path```), no table-valued function, no script
transform (``TRANSFORM(…) USING 'command'`` runs a program), none of the functions that call
into the JVM (``reflect``, ``java_method``) and none of the XML parsers (``xpath…``,
``from_xml``). sqlglot parses it in the Spark dialect; what it cannot parse is refused. What
runs is the query as sqlglot writes it back in Spark SQL, so Spark executes exactly what was
checked, not its own reading of the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import sqlglot
from sqlglot import exp

__all__ = ["QUESTIONS", "VIEW", "Parameter", "Question", "UnsafeQueryError", "check_read_only"]

#: The view every analytics query reads.
VIEW = "provenance"
#: Functions that reach outside the query: Java methods by reflection, and the XML parsers (an
#: XML document's external entities could name files or addresses; refused whatever the parser's
#: own defences).
_REFUSED_FUNCTIONS = frozenset({
    "reflect", "java_method", "try_reflect", "xpath", "xpath_boolean", "xpath_double", "xpath_float", "xpath_int",
    "xpath_long", "xpath_number", "xpath_short", "xpath_string", "from_xml", "schema_of_xml",
})
_MAX_SQL = 20_000


class UnsafeQueryError(ValueError):
    """SQL refused by ``check_read_only``; the message says why."""


def check_read_only(sql: str) -> str:
    """The query to run for ``sql`` — as sqlglot writes it back in Spark SQL — when ``sql`` is one
    read-only query of the ``provenance`` view (see the module docstring); raises
    UnsafeQueryError saying why not."""
    text = (sql or "").strip()
    if not text:
        raise UnsafeQueryError("the SQL is empty")
    if len(text) > _MAX_SQL:
        raise UnsafeQueryError(f"the SQL is longer than {_MAX_SQL} characters")
    try:
        statements = [statement for statement in sqlglot.parse(text, read="spark") if statement is not None]
    except sqlglot.errors.SqlglotError as error:
        raise UnsafeQueryError(f"the SQL does not parse: {_first_error(error)}") from None
    if len(statements) != 1:
        raise UnsafeQueryError(f"give exactly one query, not {len(statements)} statements")
    query = statements[0]
    if not isinstance(query, (exp.Select, exp.SetOperation)):
        raise UnsafeQueryError(f"only a query (SELECT or WITH … SELECT) may run; {_kind(query)} is refused")
    ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    for node in query.walk():
        if isinstance(node, (exp.DML, exp.DDL, exp.Command, exp.Set, exp.Cache, exp.Uncache, exp.Use)):
            raise UnsafeQueryError(f"only reading is allowed; {_kind(node)} is refused")
        if isinstance(node, exp.QueryTransform):
            raise UnsafeQueryError("script transforms (TRANSFORM … USING) may not be used: they run programs")
        if isinstance(node, exp.Table):
            _check_table(node, ctes)
        elif isinstance(node, exp.Func) and _function_name(node) in _REFUSED_FUNCTIONS:
            raise UnsafeQueryError(f"the function {_function_name(node)}() may not be used")
    return query.sql(dialect="spark")


def _check_table(table: exp.Table, ctes: set[str]) -> None:
    if not isinstance(table.this, exp.Identifier):
        raise UnsafeQueryError(f"only the view {VIEW!r} can be read; table functions such as "
                               f"{table.this.sql('spark')} cannot")
    if table.args.get("db") is not None or table.args.get("catalog") is not None:
        raise UnsafeQueryError(f"only the view {VIEW!r} can be read, not {table.sql('spark')}")
    name = table.name.lower()
    if name != VIEW and name not in ctes:
        raise UnsafeQueryError(f"only the view {VIEW!r} (and the query's own WITH tables) can be read, not {table.name!r}")


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return node.sql_name().lower()


def _kind(node: exp.Expression) -> str:
    name = str(node.this) if isinstance(node, exp.Command) else type(node).__name__
    return f"{name.upper()}"


def _first_error(error: sqlglot.errors.SqlglotError) -> str:
    errors = getattr(error, "errors", None)
    if errors:
        first = errors[0]
        return f"{first.get('description')} (line {first.get('line')}, column {first.get('col')})"
    return str(error).splitlines()[0]


@dataclass(frozen=True)
class Parameter:
    """An integer parameter of a question, from ``low`` to ``high``."""

    name: str
    title: str
    default: int
    low: int
    high: int

    def value(self, given: Any) -> int:
        """``given`` (or the default when None) as a checked int; raises ValueError."""
        if given is None or given == "":
            return self.default
        if isinstance(given, bool) or not isinstance(given, (int, str)) or not str(given).strip().isdigit():
            raise ValueError(f"{self.name} must be a whole number from {self.low} to {self.high}")
        number = int(given)
        if not self.low <= number <= self.high:
            raise ValueError(f"{self.name} must be from {self.low} to {self.high}, not {number}")
        return number


@dataclass(frozen=True)
class Question:
    """A ready question: its id, what it answers, and its SQL with ``{parameter}`` fields."""

    id: str
    title: str
    description: str
    template: str
    parameters: tuple[Parameter, ...] = field(default_factory=tuple)

    def values(self, given: Mapping[str, Any] | None) -> dict[str, int]:
        """The parameters' values from ``given`` (defaults for those missing); raises ValueError
        for an unknown or invalid one."""
        given = dict(given or {})
        unknown = sorted(set(given) - {parameter.name for parameter in self.parameters})
        if unknown:
            raise ValueError(f"question {self.id!r} takes no parameter {', '.join(map(repr, unknown))}")
        return {parameter.name: parameter.value(given.get(parameter.name)) for parameter in self.parameters}

    def sql(self, given: Mapping[str, Any] | None = None) -> str:
        """The question's SQL with the parameters filled in (checked ints only)."""
        return self.template.format(**self.values(given))

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "description": self.description,
                "parameters": [{"name": p.name, "title": p.title, "default": p.default, "min": p.low, "max": p.high}
                               for p in self.parameters]}


_HOURS = Parameter("hours", "Hours back", 24, 1, 24 * 366)
_LIMIT = Parameter("limit", "Components shown", 20, 1, 1000)
_RECENT = "event_time >= current_timestamp() - INTERVAL {hours} HOURS"

QUESTIONS: dict[str, Question] = {question.id: question for question in (
    Question(
        "throughput", "FlowFiles and bytes per component per hour",
        "For each hour and component: the FlowFiles it handled (each counted once) and their bytes (each "
        "FlowFile's largest size at the component in that hour).",
        f"""WITH handled AS (
  SELECT date_trunc('HOUR', event_time) AS hour, component_id, component_type, component_name, flowfile_uuid,
         max(file_size) AS size
  FROM provenance
  WHERE {_RECENT}
  GROUP BY date_trunc('HOUR', event_time), component_id, component_type, component_name, flowfile_uuid
)
SELECT hour, component_id, max(component_name) AS component_name, component_type,
       count(DISTINCT flowfile_uuid) AS flowfiles, sum(size) AS bytes
FROM handled
GROUP BY hour, component_id, component_type
ORDER BY hour DESC, flowfiles DESC, component_id""",
        (_HOURS,)),
    Question(
        "slowest", "Slowest components",
        "Components by the time their sessions took (average, 95th percentile, longest; the session that "
        "recorded each event), with the FlowFiles' age when they got there (lineage duration).",
        f"""SELECT component_id, max(component_name) AS component_name, component_type, count(*) AS events,
       round(avg(processing_duration_ms), 1) AS avg_processing_ms,
       percentile_approx(processing_duration_ms, 0.95) AS p95_processing_ms,
       max(processing_duration_ms) AS max_processing_ms,
       round(avg(lineage_duration_ms), 1) AS avg_lineage_ms,
       percentile_approx(lineage_duration_ms, 0.95) AS p95_lineage_ms
FROM provenance
WHERE {_RECENT} AND processing_duration_ms IS NOT NULL
GROUP BY component_id, component_type
ORDER BY avg_processing_ms DESC, component_id
LIMIT {{limit}}""",
        (_HOURS, _LIMIT)),
    Question(
        "drops", "Where FlowFiles were dropped",
        "DROP and EXPIRE events by component and reason (auto-terminated relationship, emptied queue, "
        "expiration, …).",
        f"""SELECT component_id, max(component_name) AS component_name, component_type, event_type,
       coalesce(details, '') AS reason, count(*) AS flowfiles, sum(file_size) AS bytes,
       min(event_time) AS first_time, max(event_time) AS last_time
FROM provenance
WHERE {_RECENT} AND event_type IN ('DROP', 'EXPIRE')
GROUP BY component_id, component_type, event_type, coalesce(details, '')
ORDER BY flowfiles DESC, component_id, event_type, reason""",
        (_HOURS,)),
)}
