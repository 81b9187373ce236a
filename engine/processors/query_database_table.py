"""QueryDatabaseTable: fetches the rows of a table added since the last run, by its maximum-value columns."""

from __future__ import annotations

import datetime as dt
import io
import re
import uuid
from decimal import Decimal, InvalidOperation

from engine.components import (
    AllowableValue,
    DynamicProperties,
    ExpressionScope,
    InputRequirement,
    ProcessException,
    Processor,
    PropertyDescriptor,
    Relationship,
    Scope,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.processors import _sql
from engine.processors._sql import (
    AUTO_COMMIT,
    DBCP_SERVICE,
    DEFAULT_PRECISION,
    DEFAULT_SCALE,
    FETCH_SIZE,
    MAX_ROWS_PER_FLOW_FILE,
    NORMALIZE_NAMES,
    OUTPUT_BATCH_SIZE,
    QUERY_TIMEOUT,
    USE_LOGICAL_TYPES,
    AvroOptions,
    ResultWriter,
)

__all__ = ["QueryDatabaseTable"]

DB_TYPE = PropertyDescriptor(
    "Database Type", description="The kind of database, for the SQL generated: Flowsite's pools reach PostgreSQL, "
    "whose SQL Generic also is.", required=True, default="Generic", allowed_values=["Generic", "PostgreSQL"])
TABLE_NAME = PropertyDescriptor(
    "Table Name", description="The table to query. With a Custom Query, the alias of that query (and the "
    "tablename attribute).", required=True, validators=[v.NON_EMPTY], expression_language=ExpressionScope.ENVIRONMENT)
COLUMN_NAMES = PropertyDescriptor(
    "Columns to Return", description="The columns to fetch, separated by commas; unset: all of them.",
    expression_language=ExpressionScope.ENVIRONMENT)
WHERE_CLAUSE = PropertyDescriptor(
    "Additional WHERE clause", description="A condition every fetched row must also meet (SQL, without WHERE).",
    expression_language=ExpressionScope.ENVIRONMENT)
SQL_QUERY = PropertyDescriptor(
    "Custom Query", description="A query whose rows are fetched instead of the table's (it becomes a subquery "
    "aliased by the Table Name); it must not have ORDER BY.", expression_language=ExpressionScope.ENVIRONMENT)
MAX_VALUE_COLUMNS = PropertyDescriptor(
    "Maximum-value Columns", description="Columns, separated by commas, whose largest values seen are kept: a run "
    "fetches only rows beyond them (the first column strictly greater, the others at least as great). Unset: "
    "every run fetches every row. Integer, decimal, floating point, text, date, time and timestamp columns may be "
    "used.", expression_language=ExpressionScope.ENVIRONMENT)
INITIAL_LOAD_STRATEGY = PropertyDescriptor(
    "Initial Load Strategy", description="Where the first run (with no state) starts.", required=True,
    default="Start at Beginning",
    allowed_values=[AllowableValue("Start at Beginning", "Start at Beginning", "Fetch every existing row."),
                    AllowableValue("Start at Current Maximum Values", "Start at Current Maximum Values",
                                   "Fetch only rows added after the first run, beyond the current maximum values.")])
MAX_FRAGMENTS = PropertyDescriptor(
    "Maximum Number of Fragments", description="With Max Rows Per FlowFile: the most FlowFiles one run makes; "
    "the rest comes in the next runs (rows are then ordered by the maximum-value columns so none is skipped). "
    "Zero: no limit.", required=True, default="0", validators=[v.NON_NEGATIVE_INTEGER],
    expression_language=ExpressionScope.ENVIRONMENT)
ISOLATION_LEVELS = {"0": None, "1": "READ UNCOMMITTED", "2": "READ COMMITTED", "4": "REPEATABLE READ",
                    "8": "SERIALIZABLE"}
TRANS_ISOLATION_LEVEL = PropertyDescriptor(
    "Transaction Isolation Level", description="The isolation level of the query's transaction; unset: the "
    "database's default.",
    allowed_values=[AllowableValue(code, f"TRANSACTION_{(name or 'NONE').replace(' ', '_')}")
                    for code, name in ISOLATION_LEVELS.items()])

SUCCESS = Relationship("success", "The rows fetched, as Avro.")

INITIAL_MAX_VALUE = "initial.maxvalue."
DELIMITER = "@!@"
ROW_COUNT = "querydbtable.row.count"
_INTEGERS = {"int2", "int4", "int8", "oid"}
_ORDERED = _INTEGERS | {"numeric", "float4", "float8", "text", "varchar", "bpchar", "name", "date", "time",
                        "timestamp", "timestamptz"}


def state_key(table: str, column: str) -> str:
    """NiFi's state key of a column's maximum value: ``table@!@column``, lower case, unquoted."""
    def unwrap(name: str) -> str:
        return re.sub(r'["`\[\]]', "", name.lower())
    return f"{unwrap(table)}{DELIMITER}{unwrap(column)}"


class QueryDatabaseTable(Processor):
    """Fetches the rows of a database table (or of a custom query) as Avro. With Maximum-value
    Columns it fetches incrementally: the largest values seen in those columns are kept in the
    processor's cluster state, and each run fetches only the rows beyond them, so a row is
    fetched once even across restarts of the processor or the node.

    The state holds one entry per maximum-value column, under NiFi's keys
    (``<table>@!@<column>``, lower case) and in NiFi's text forms, so NiFi's state and
    ``initial.maxvalue.<column>`` properties carry over; clearing the state starts again from the
    Initial Load Strategy. The state is saved once the run's FlowFiles are committed: a crash in
    between fetches those rows again (never loses them). As in NiFi, a row inserted later with a
    smaller value than one already fetched (a transaction that commits late) is not fetched.
    The Avro is ExecuteSQL's, the record named after the Table Name. A run that cannot reach the
    database, or whose query fails, makes no FlowFile, keeps the state as it was, posts a
    bulletin and yields.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.standard.QueryDatabaseTable"
    tags = ("sql", "select", "jdbc", "query", "database")
    properties = (DBCP_SERVICE, DB_TYPE, TABLE_NAME, COLUMN_NAMES, WHERE_CLAUSE, SQL_QUERY, MAX_VALUE_COLUMNS,
                  INITIAL_LOAD_STRATEGY, QUERY_TIMEOUT, FETCH_SIZE, AUTO_COMMIT, MAX_ROWS_PER_FLOW_FILE,
                  OUTPUT_BATCH_SIZE, MAX_FRAGMENTS, NORMALIZE_NAMES, TRANS_ISOLATION_LEVEL, USE_LOGICAL_TYPES,
                  DEFAULT_PRECISION, DEFAULT_SCALE)
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.FORBIDDEN
    trigger_serially = True
    primary_node_only = True
    default_scheduling_period = "1 min"
    dynamic_properties = DynamicProperties(
        "initial.maxvalue.<max_value_column>", "The column's starting maximum value",
        "The maximum value a column starts from when the state holds none (so the first run fetches only rows "
        "beyond it).", ExpressionScope.ENVIRONMENT)
    migrated_properties = {"db-fetch-db-type": "Database Type", "db-fetch-where-clause": "Additional WHERE clause",
                           "db-fetch-sql-query": "Custom Query", "qdbt-max-rows": "Max Rows Per FlowFile",
                           "qdbt-output-batch-size": "Output Batch Size",
                           "qdbt-max-frags": "Maximum Number of Fragments",
                           "transaction-isolation-level": "Transaction Isolation Level",
                           "initial-load-strategy": "Initial Load Strategy",
                           "dbf-normalize": "Normalize Table and Column Names",
                           "dbf-user-logical-types": "Use Avro Logical Types",
                           "dbf-default-precision": "Default Decimal Precision",
                           "dbf-default-scale": "Default Decimal Scale"}
    stateful = ("Cluster-wide: the largest value fetched so far of each Maximum-value Column, under "
                "<table>@!@<column>.")
    writes_attributes = (
        WrittenAttribute("tablename", "The Table Name."),
        WrittenAttribute(ROW_COUNT, "The number of rows in the FlowFile."),
        WrittenAttribute("fragment.identifier", "With Max Rows Per FlowFile: the same for every FlowFile of a run."),
        WrittenAttribute("fragment.count", "With Max Rows Per FlowFile and no Output Batch Size: how many FlowFiles "
                         "the run made."),
        WrittenAttribute("fragment.index", "With Max Rows Per FlowFile: the FlowFile's position in the run."),
        WrittenAttribute("maxvalue.*", "Without Output Batch Size: the largest value of each Maximum-value Column "
                         "after the run (maxvalue.<column>)."),
        WrittenAttribute("mime.type", "application/avro-binary."))
    see_also = ("ExecuteSQL", "DBCPConnectionPool")

    def on_scheduled(self, context) -> None:
        self._service = context.property(DBCP_SERVICE).as_service()
        self._types: dict[str, str] | None = None

    def on_stopped(self, context) -> None:
        self._types = None

    def on_trigger(self, context, session) -> None:
        def value(descriptor):
            return context.property(descriptor).evaluate().value

        table = value(TABLE_NAME)
        max_columns = [c.strip() for c in (value(MAX_VALUE_COLUMNS) or "").split(",") if c.strip()]
        stored = context.state.get_state(Scope.CLUSTER)
        state = dict(stored.values)
        for name, prop in context.dynamic_properties.items():
            if name.startswith(INITIAL_MAX_VALUE):
                column = name[len(INITIAL_MAX_VALUE):].lower()
                key = state_key(table, column)
                if key not in state:
                    state[key] = state.get(column, prop.evaluate().value)
        options = AvroOptions(record_name=table, normalize=context.property(NORMALIZE_NAMES).as_bool(),
                              logical_types=context.property(USE_LOGICAL_TYPES).as_bool(),
                              default_precision=context.property(DEFAULT_PRECISION).evaluate().as_int(),
                              default_scale=context.property(DEFAULT_SCALE).evaluate().as_int(),
                              max_rows=context.property(MAX_ROWS_PER_FLOW_FILE).evaluate().as_int())
        max_fragments = context.property(MAX_FRAGMENTS).evaluate().as_int()
        batch_size = context.property(OUTPUT_BATCH_SIZE).evaluate().as_int()
        source = f"({value(SQL_QUERY)}) AS {table}" if context.property(SQL_QUERY).is_set() else table
        try:
            with self._service.connection() as conn:
                try:
                    self._begin(context, conn)
                    if self._types is None:
                        self._types = _column_types(conn, source)
                    if (max_columns and not state and
                            context.property(INITIAL_LOAD_STRATEGY).value == "Start at Current Maximum Values"):
                        state = self._current_maxima(conn, table, source, max_columns)
                    query = self._query(table, source, value(COLUMN_NAMES), max_columns, value(WHERE_CLAUSE), state,
                                        order=bool(max_fragments and options.max_rows))
                    tracker = _MaxValues(table, max_columns, self._types, state)
                    cursor = _sql.text_cursor(conn, f"qdbt_{uuid.uuid4().hex}")
                    fetch_size = context.property(FETCH_SIZE).evaluate().as_int()
                    with cursor:
                        cursor.execute(query)
                        tracker.locate(cursor)
                        produced = self._write(session, ResultWriter(cursor, options, fetch_size=fetch_size), table,
                                               tracker, max_fragments, batch_size)
                    conn.commit()
                except BaseException:
                    _sql.rollback_quietly(conn)
                    raise
        except Exception as error:
            context.yield_processor()
            raise ProcessException(f"cannot fetch from {table} on {self._service.url}: {_sql.describe_error(error)}"
                                   f"; the maximum values are unchanged and the next run tries again") from error
        if not produced:
            context.yield_processor()
        new_state = tracker.state
        if batch_size == 0:
            attributes = {f"maxvalue.{key[key.rfind(DELIMITER) + len(DELIMITER):]}": v for key, v in new_state.items()}
            if options.max_rows:
                attributes["fragment.count"] = str(len(produced))
            produced = [session.put_all_attributes(f, attributes) for f in produced]
        for flowfile in produced:
            session.transfer(flowfile, SUCCESS)
        if new_state != stored.values:
            session.on_commit(lambda: self._save(context, new_state))

    def _begin(self, context, conn) -> None:
        _sql.set_statement_timeout(conn, context.property(QUERY_TIMEOUT).evaluate().as_duration())
        level = ISOLATION_LEVELS.get(context.property(TRANS_ISOLATION_LEVEL).value or "0")
        if level:
            conn.execute(f"SET TRANSACTION ISOLATION LEVEL {level}")

    def _current_maxima(self, conn, table, source, columns) -> dict[str, str]:
        """Initial Load Strategy 'Start at Current Maximum Values': the columns' maxima now."""
        selected = ", ".join(f"MAX({c}) {c}" for c in columns)
        tracker = _MaxValues(table, columns, self._types, {})
        with _sql.text_cursor(conn) as cursor:
            cursor.execute(f"SELECT {selected} FROM {source}")
            tracker.locate(cursor)
            tracker.observe(cursor.fetchone())
        return tracker.state

    def _query(self, table, source, columns, max_columns, where, state, order) -> str:
        query = f"SELECT {columns or '*'} FROM {source}"
        conditions = []
        for index, column in enumerate(max_columns):
            maximum = state.get(state_key(table, column)) or state.get(column.lower())
            if maximum:
                kind = self._types.get(column.lower().strip('"'))
                conditions.append(f"{column} {'>' if index == 0 else '>='} {_literal(kind, maximum)}")
        if where:
            conditions.append(f"({where})")
        if conditions:
            query += " WHERE " + " AND ".join(conditions)
        if order and max_columns:
            query += " ORDER BY " + ", ".join(max_columns)
        return query

    def _write(self, session, writer: ResultWriter, table, tracker, max_fragments, batch_size) -> list:
        options = writer.options
        fragment_id = str(uuid.uuid4())
        produced, released = [], 0
        while True:
            out = io.BytesIO()
            rows = writer.write(out, tracker.observe)
            if rows == 0:
                break
            flowfile = session.write_bytes(session.create(), out.getvalue())
            attributes = {ROW_COUNT: str(rows), "tablename": table, "mime.type": _sql.MIME_TYPE_AVRO}
            if options.max_rows:
                attributes.update({"fragment.identifier": fragment_id, "fragment.index": str(released + len(produced))})
            flowfile = session.put_all_attributes(flowfile, attributes)
            session.provenance.receive(flowfile, self._service.url)
            produced.append(flowfile)
            if batch_size and len(produced) >= batch_size:
                for ready in produced:
                    session.transfer(ready, SUCCESS)
                released += len(produced)
                produced = []
                session.commit()
            if not options.max_rows or writer.exhausted:
                break
            if max_fragments and released + len(produced) >= max_fragments:
                break
        return produced

    def _save(self, context, values: dict[str, str]) -> None:
        try:
            context.state.set_state(values, Scope.CLUSTER)
        except OSError as error:
            context.logger.error("could not save the maximum values (%s); the rows of the last run will be fetched "
                                 "again", error)


def _column_types(conn, source: str) -> dict[str, str]:
    """The PostgreSQL type name of each column of ``source``, by lower-case column name."""
    with conn.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {source} WHERE 1 = 0")
        return {column.name.lower(): _sql.type_name(column.type_code) for column in cursor.description}


def _literal(kind: str | None, value: str) -> str:
    """A maximum value as a SQL literal of its column's type."""
    if kind in _INTEGERS or kind in ("numeric", "float4", "float8"):
        return value
    quoted = "'" + value.replace("'", "''") + "'"
    if kind == "timestamptz" and re.fullmatch(r"[\d-]+( [\d:.]+)?", value):
        return quoted[:-1] + "+00'"
    return quoted


class _MaxValues:
    """The largest values of the maximum-value columns among the rows fetched, kept as NiFi's text."""

    def __init__(self, table: str, columns: list[str], types: dict[str, str], state: dict[str, str]) -> None:
        self.table = table
        self.state = dict(state)
        self.types = types
        self.columns = [c.lower().strip('"') for c in columns]
        self.positions: list[tuple[int, str, str]] = []
        for column in self.columns:
            kind = types.get(column)
            if kind is None:
                raise ProcessException(f"the Maximum-value Column {column!r} is not a column of {table}")
            if kind not in _ORDERED:
                raise ProcessException(f"the type of column {column!r} ({kind}) is not valid for maintaining a "
                                       f"maximum value")
        self._current = {key: _parse(types[c], self.state.get(state_key(table, c)) or self.state.get(c))
                         for c in self.columns for key in [state_key(table, c)]}

    def locate(self, cursor) -> None:
        names = [column.name.lower() for column in cursor.description]
        self.positions = [(names.index(c), state_key(self.table, c), self.types[c]) for c in self.columns
                          if c in names]

    def observe(self, row) -> None:
        for index, key, kind in self.positions:
            value = row[index]
            if value is None:
                continue
            if kind == "timestamptz" and value.tzinfo is not None:
                value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
            current = self._current.get(key)
            if current is None or value > current:
                self._current[key] = value
                self.state[key] = _text(kind, value)


def _parse(kind: str, text: str | None):
    """A stored maximum as a value comparable with the column's."""
    if not text:
        return None
    try:
        if kind in _INTEGERS:
            return int(text)
        if kind == "numeric":
            return Decimal(text.replace(",", ""))
        if kind in ("float4", "float8"):
            return float(text)
        if kind == "date":
            return dt.date.fromisoformat(text[:10])
        if kind == "time":
            return dt.time.fromisoformat(text)
        if kind in ("timestamp", "timestamptz"):
            return dt.datetime.fromisoformat(text)
    except (ValueError, InvalidOperation) as error:
        raise ProcessException(f"the maximum value {text!r} is not a {kind}: {error}") from error
    return text


def _text(kind: str, value) -> str:
    """A maximum value as NiFi writes it in the state."""
    if kind == "date":
        return value.isoformat()
    if kind == "time":
        return f"{value:%H:%M:%S}.{value.microsecond // 1000:03d}"
    if kind in ("timestamp", "timestamptz"):
        return _sql.timestamp_text(value)
    return str(value)
