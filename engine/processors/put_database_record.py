"""PutDatabaseRecord: writes the records of each FlowFile to a database table, in one transaction."""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from psycopg.types.json import Json

from engine.components import (
    AllowableValue,
    ExpressionScope,
    InputRequirement,
    ProcessException,
    Processor,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.processors import _sql
from engine.processors._sql import DBCP_SERVICE, QUERY_TIMEOUT, quote_identifier
from engine.record.path import compile_record_path
from engine.services.apis import RecordReaderFactory

__all__ = ["PutDatabaseRecord"]

INSERT, UPDATE, UPSERT, INSERT_IGNORE, DELETE, SQL = "INSERT", "UPDATE", "UPSERT", "INSERT_IGNORE", "DELETE", "SQL"
USE_ATTRIBUTE, USE_RECORD_PATH = "Use statement.type Attribute", "Use Record Path"
STATEMENT_TYPE_ATTRIBUTE = "statement.type"
ERROR_ATTRIBUTE = "putdatabaserecord.error"



def _valid_path(value: str, context) -> str | None:
    try:
        compile_record_path(value)
    except ValueError as error:
        return str(error)
    return None


RECORD_READER = PropertyDescriptor(
    "Record Reader", description="The record reader of the incoming FlowFiles' content.", required=True,
    service=RecordReaderFactory)
DB_TYPE = PropertyDescriptor(
    "Database Type", description="The kind of database, for the SQL generated: Flowsite's pools reach PostgreSQL, "
    "whose SQL Generic also is.", required=True, default="Generic", allowed_values=["Generic", "PostgreSQL"])
STATEMENT_TYPE = PropertyDescriptor(
    "Statement Type", description="What each record becomes: INSERT, UPDATE, UPSERT (INSERT ... ON CONFLICT "
    "DO UPDATE), INSERT_IGNORE (ON CONFLICT DO NOTHING), DELETE, what the FlowFile's statement.type attribute "
    "says (those or SQL), or what the Statement Type Record Path gives for each record.", required=True,
    allowed_values=[UPDATE, INSERT, UPSERT, INSERT_IGNORE, DELETE, USE_ATTRIBUTE, USE_RECORD_PATH])
STATEMENT_TYPE_RECORD_PATH = PropertyDescriptor(
    "Statement Type Record Path", description="A RecordPath giving each record's statement type: INSERT, UPDATE, "
    "UPSERT or DELETE (or Debezium's operations: r and c for INSERT, u for UPDATE, d for DELETE).", required=True,
    validators=[_valid_path], depends_on=[PropertyDependency("Statement Type", (USE_RECORD_PATH,))])
DATA_RECORD_PATH = PropertyDescriptor(
    "Data Record Path", description="A RecordPath selecting, in each record, the record(s) written to the table "
    "instead of the whole record (the 'after' record of a change event, for instance); unset: the whole record.",
    validators=[_valid_path])
PRE_SQL = PropertyDescriptor(
    "Pre-Processing SQL", description="Statements run before the records, in the same transaction, separated by "
    "semicolons (\\; is a semicolon inside one).", expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
POST_SQL = PropertyDescriptor(
    "Post-Processing SQL", description="Statements run after the records, in the same transaction.",
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
CATALOG_NAME = PropertyDescriptor(
    "Database Name", description="Accepted for NiFi flows; a PostgreSQL connection reaches one database (the "
    "pool's).", expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
SCHEMA_NAME = PropertyDescriptor(
    "Schema Name", description="The schema of the table; unset: the connection's search path finds it.",
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
TABLE_NAME = PropertyDescriptor(
    "Table Name", description="The table the records go to.", required=True, validators=[v.NON_EMPTY],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
BINARY_STRING_FORMAT = PropertyDescriptor(
    "Binary String Format", description="How a text value bound for a bytea column is turned into bytes.",
    required=True, default="UTF-8", allowed_values=[
        AllowableValue("UTF-8", "UTF-8", "The text's UTF-8 bytes."),
        AllowableValue("Hexadecimal", "Hexadecimal", "The text is hexadecimal digits."),
        AllowableValue("Base64", "Base64", "The text is Base64.")])
TRANSLATE_FIELD_NAMES = PropertyDescriptor(
    "Translate Field Names", description="Whether field and column names are matched after the translation "
    "strategy and upper-casing (so user_id matches USERID); false: names must match exactly.", required=True,
    default="true", allowed_values=["true", "false"])
STRATEGIES = {"REMOVE_UNDERSCORE": "Remove Underscore", "REMOVE_SPACE": "Remove Space",
              "REMOVE_UNDERSCORE_AND_SPACE": "Remove Underscores and Spaces",
              "REMOVE_ALL_SPECIAL_CHAR": "Remove Regular Expression Characters", "PATTERN": "Regular Expression"}
TRANSLATION_STRATEGY = PropertyDescriptor(
    "Column Name Translation Strategy", description="What is removed from names before they are matched.",
    required=True, default="REMOVE_UNDERSCORE", allowed_values=[AllowableValue(k, n) for k, n in STRATEGIES.items()],
    depends_on=[PropertyDependency("Translate Field Names", ("true",))])
TRANSLATION_PATTERN = PropertyDescriptor(
    "Column Name Translation Pattern", description="With the Regular Expression strategy: what is removed.",
    validators=[v.REGEX], depends_on=[PropertyDependency("Column Name Translation Strategy", ("PATTERN",))])
UNMATCHED_FIELD = PropertyDescriptor(
    "Unmatched Field Behavior", description="What a record field matching no column does.", required=True,
    default="Ignore Unmatched Fields", allowed_values=[
        AllowableValue("Ignore Unmatched Fields", "Ignore Unmatched Fields", "The field is left out."),
        AllowableValue("Fail on Unmatched Fields", "Fail on Unmatched Fields", "The FlowFile goes to failure.")])
UNMATCHED_COLUMN = PropertyDescriptor(
    "Unmatched Column Behavior", description="What a required column (NOT NULL, no default) with no record field "
    "does.", required=True, default="Fail on Unmatched Columns", allowed_values=[
        AllowableValue("Ignore Unmatched Columns", "Ignore Unmatched Columns", "Nothing."),
        AllowableValue("Warn on Unmatched Columns", "Warn on Unmatched Columns", "A warning is logged."),
        AllowableValue("Fail on Unmatched Columns", "Fail on Unmatched Columns", "The FlowFile goes to failure.")])
UPDATE_KEYS = PropertyDescriptor(
    "Update Keys", description="Columns, separated by commas, identifying the row an UPDATE or UPSERT changes; "
    "unset: the primary key.", expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
DELETE_KEYS = PropertyDescriptor(
    "Delete Keys", description="Columns, separated by commas, a DELETE matches on; unset: every field of the "
    "record.", expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
FIELD_CONTAINING_SQL = PropertyDescriptor(
    "Field Containing SQL", description="With statement.type SQL: the record field holding the statement to run.",
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
ALLOW_MULTIPLE = PropertyDescriptor(
    "Allow Multiple SQL Statements", description="With statement.type SQL: whether a field may hold several "
    "statements separated by semicolons.", required=True, default="false", allowed_values=["true", "false"])
QUOTE_COLUMNS = PropertyDescriptor(
    "Quote Column Identifiers", description="Whether column names are quoted in the SQL generated.", required=True,
    default="false", allowed_values=["true", "false"])
QUOTE_TABLE = PropertyDescriptor(
    "Quote Table Identifiers", description="Whether the schema and table names are quoted in the SQL generated.",
    required=True, default="false", allowed_values=["true", "false"])
TABLE_SCHEMA_CACHE_SIZE = PropertyDescriptor(
    "Table Schema Cache Size", description="How many tables' columns are remembered.", required=True,
    default="100", validators=[v.NON_NEGATIVE_INTEGER])
MAX_BATCH_SIZE = PropertyDescriptor(
    "Maximum Batch Size", description="How many records are sent to the database at a time; zero: all at once. "
    "Every batch of a FlowFile is in its one transaction.", required=True, default="1000",
    validators=[v.NON_NEGATIVE_INTEGER], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
AUTO_COMMIT = PropertyDescriptor(
    "Database Session AutoCommit", description="Must be false: the records of a FlowFile are written in one "
    "transaction, committed when all are written.", required=True, default="false",
    allowed_values=["true", "false"])
ROLLBACK_ON_FAILURE = PropertyDescriptor(
    "Rollback On Failure", description="Whether a FlowFile that fails stays in its queue (penalized; the "
    "processor yields) instead of going to failure or retry, so the order of FlowFiles is kept.", required=True,
    default="false", allowed_values=["true", "false"])

SUCCESS = Relationship("success", "FlowFiles whose records were all written (committed).")
RETRY = Relationship("retry", "FlowFiles the database could not take for now (unreachable, a conflict, a timeout); "
                     "nothing of them was written, trying again later may succeed.")
FAILURE = Relationship("failure", "FlowFiles that will not go in as they are (unreadable records, a constraint or "
                       "value the database refuses, no such table or column); nothing of them was written.")


@dataclass(frozen=True)
class _Column:
    name: str
    type: str
    required: bool


@dataclass(frozen=True)
class _Table:
    qualified: str
    columns: dict[str, _Column]  # by normalized name
    primary_key: list[str]


class PutDatabaseRecord(Processor):
    """Writes the records of each FlowFile to a database table: each record becomes an INSERT,
    UPDATE, UPSERT, INSERT_IGNORE or DELETE of a row (or, with statement.type SQL, the statement
    one of its fields holds). All the records of a FlowFile are written in one transaction: if
    one fails, none is kept.

    With Statement Type 'Use Record Path', a RecordPath gives each record's statement type
    (INSERT, UPDATE, UPSERT, DELETE, or Debezium's c, r, u, d); a Data Record Path writes the
    record(s) it selects in each record instead of the whole one (the ``after`` of a change
    event). Records are written in their order, a batch ending where the statement type changes;
    each statement type's SQL is made from the fields of the first record of that type.

    Record fields are matched to the table's columns by name (after the translation of Translate
    Field Names); values are sent as parameters cast to their column's type, so text becomes
    dates, numbers, json and so on as PostgreSQL reads it, and nested records and arrays bound for
    json columns are written as JSON. A FlowFile whose records cannot be read, or which the
    database refuses (a constraint, a wrong value, an unknown table or column) goes to failure
    with ``putdatabaserecord.error``; one the database could not take for now (unreachable, gone
    away, a deadlock or serialization conflict, a lock or statement timeout) goes to retry,
    penalized. With Rollback On Failure it stays in its queue instead and the processor yields.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.standard.PutDatabaseRecord"
    tags = ("sql", "record", "jdbc", "put", "database", "update", "insert", "delete")
    properties = (RECORD_READER, DB_TYPE, STATEMENT_TYPE, STATEMENT_TYPE_RECORD_PATH, DATA_RECORD_PATH, PRE_SQL, POST_SQL, DBCP_SERVICE, CATALOG_NAME,
                  SCHEMA_NAME, TABLE_NAME, BINARY_STRING_FORMAT, TRANSLATE_FIELD_NAMES, TRANSLATION_STRATEGY,
                  TRANSLATION_PATTERN, UNMATCHED_FIELD, UNMATCHED_COLUMN, UPDATE_KEYS, DELETE_KEYS,
                  FIELD_CONTAINING_SQL, ALLOW_MULTIPLE, QUOTE_COLUMNS, QUOTE_TABLE, QUERY_TIMEOUT,
                  TABLE_SCHEMA_CACHE_SIZE, MAX_BATCH_SIZE, AUTO_COMMIT, ROLLBACK_ON_FAILURE)
    relationships = (SUCCESS, FAILURE, RETRY)
    input_requirement = InputRequirement.REQUIRED
    migrated_properties = {"put-db-record-record-reader": "Record Reader", "db-type": "Database Type",
                           "put-db-record-statement-type": "Statement Type",
                           "put-db-record-dcbp-service": "Database Connection Pooling Service",
                           "put-db-record-catalog-name": "Database Name", "put-db-record-schema-name": "Schema Name",
                           "put-db-record-table-name": "Table Name",
                           "put-db-record-translate-field-names": "Translate Field Names",
                           "put-db-record-unmatched-field-behavior": "Unmatched Field Behavior",
                           "put-db-record-unmatched-column-behavior": "Unmatched Column Behavior",
                           "put-db-record-update-keys": "Update Keys",
                           "put-db-record-field-containing-sql": "Field Containing SQL",
                           "put-db-record-allow-multiple-statements": "Allow Multiple SQL Statements",
                           "put-db-record-quoted-identifiers": "Quote Column Identifiers",
                           "put-db-record-quoted-table-identifiers": "Quote Table Identifiers",
                           "put-db-record-query-timeout": "Max Wait Time",
                           "table-schema-cache-size": "Table Schema Cache Size",
                           "put-db-record-max-batch-size": "Maximum Batch Size",
                           "database-session-autocommit": "Database Session AutoCommit",
                           "rollback-on-failure": "Rollback On Failure"}
    reads_attributes = (WrittenAttribute(STATEMENT_TYPE_ATTRIBUTE, "With 'Use statement.type Attribute': INSERT, "
                                         "UPDATE, UPSERT, INSERT_IGNORE, DELETE or SQL."),)
    writes_attributes = (WrittenAttribute(ERROR_ATTRIBUTE, "Why the FlowFile went to failure or retry."),)
    see_also = ("ExecuteSQL", "DBCPConnectionPool")

    def validate(self, context):
        if context.property(AUTO_COMMIT).value == "true":
            yield (f"'{AUTO_COMMIT.name}' must be false: the records of a FlowFile are written in one transaction")

    def on_scheduled(self, context) -> None:
        self._service = context.property(DBCP_SERVICE).as_service()
        self._reader = context.property(RECORD_READER).as_service()
        type_path = context.property(STATEMENT_TYPE_RECORD_PATH).value
        data_path = context.property(DATA_RECORD_PATH).value
        use_path = context.property(STATEMENT_TYPE).value == USE_RECORD_PATH
        self._type_path = compile_record_path(type_path) if use_path and type_path else None
        self._data_path = compile_record_path(data_path) if data_path else None
        self._tables: dict[tuple, _Table] = {}
        translate = context.property(TRANSLATE_FIELD_NAMES).as_bool()
        self._normalize = _normalizer(context.property(TRANSLATION_STRATEGY).value,
                                      context.property(TRANSLATION_PATTERN).value) if translate else None

    def on_trigger(self, context, session) -> None:
        flowfile = session.get()
        if flowfile is None:
            return
        started = time.monotonic()
        try:
            with self._service.connection() as conn:
                try:
                    count = self._put(context, session, flowfile, conn)
                    conn.commit()
                except BaseException:
                    _sql.rollback_quietly(conn)
                    raise
        except Exception as error:
            self._failed(context, session, flowfile, error)
            return
        session.provenance.send(flowfile, self._service.url, details=f"{count} records",
                                duration=int((time.monotonic() - started) * 1000))
        session.transfer(flowfile, SUCCESS)

    def _failed(self, context, session, flowfile, error: Exception) -> None:
        message = _sql.describe_error(error)
        transient = _sql.is_transient(error)
        if context.property(ROLLBACK_ON_FAILURE).as_bool():
            context.yield_processor()
            raise ProcessException(f"Failed to put records to {self._service.url} for {flowfile.uuid}: {message}; "
                                   f"the FlowFile stays in its queue (Rollback On Failure)") from error
        relationship = RETRY if transient else FAILURE
        if transient:
            flowfile = session.penalize(flowfile)
            context.yield_processor()
        context.logger.error("Failed to put records to %s for %s: %s; routing to %s", self._service.url,
                             flowfile.uuid, message, relationship.name)
        session.transfer(session.put_attribute(flowfile, ERROR_ATTRIBUTE, message), relationship)

    def _put(self, context, session, flowfile, conn) -> int:
        def value(descriptor):
            return context.property(descriptor).evaluate(flowfile).value

        statement_type = context.property(STATEMENT_TYPE).value
        if statement_type == USE_ATTRIBUTE:
            statement_type = (flowfile.attributes.get(STATEMENT_TYPE_ATTRIBUTE) or "").strip().upper()
            if statement_type not in (INSERT, UPDATE, UPSERT, INSERT_IGNORE, DELETE, SQL):
                raise ValueError(f"the {STATEMENT_TYPE_ATTRIBUTE} attribute must be INSERT, UPDATE, UPSERT, "
                                 f"INSERT_IGNORE, DELETE or SQL, not {statement_type or 'missing'!r}")
        with session.read(flowfile) as stream, self._reader.create_reader(stream, flowfile.attributes) as reader:
            table_data = reader.read_all()
        fields, records = list(table_data.column_names), table_data.to_pylist()
        _sql.set_statement_timeout(conn, context.property(QUERY_TIMEOUT).evaluate(flowfile).as_duration())
        for statement in _sql.split_queries(value(PRE_SQL)):
            conn.execute(statement)
        if statement_type == SQL:
            self._run_sql_fields(context, conn, records, value(FIELD_CONTAINING_SQL))
        elif records:
            table = self._table(context, conn, value(SCHEMA_NAME), value(TABLE_NAME))
            binary = context.property(BINARY_STRING_FORMAT).value
            batch = context.property(MAX_BATCH_SIZE).evaluate(flowfile).as_int()
            statements: dict[str, tuple] = {}
            with conn.cursor() as cursor:
                for kind, data in self._runs(statement_type, records):
                    if kind not in statements:
                        names = list(data[0]) if self._data_path is not None else fields
                        statements[kind] = self._statement(context, flowfile, kind, table, names)
                    sql, columns, params = statements[kind]
                    rows = [[_param(record.get(field), column, binary) for field, column in zip(params, columns)]
                            for record in data]
                    for start in range(0, len(rows), batch or len(rows)):
                        cursor.executemany(sql, rows[start:start + (batch or len(rows))])
        for statement in _sql.split_queries(value(POST_SQL)):
            conn.execute(statement)
        return len(records)

    def _runs(self, statement_type: str, records: list[dict]) -> list[tuple[str, list[dict]]]:
        """The records to write, in order, as runs of one statement type: each record's type (from
        the Statement Type Record Path when that is used) and its data records (the Data Record Path's)."""
        runs: list[tuple[str, list[dict]]] = []
        for record in records:
            kind = self._record_statement_type(record) if self._type_path is not None else statement_type
            data = self._data_records(record) if self._data_path is not None else [record]
            if runs and runs[-1][0] == kind:
                runs[-1][1].extend(data)
            else:
                runs.append((kind, data))
        return runs

    def _record_statement_type(self, record: dict) -> str:
        path = self._type_path
        values = list(dict.fromkeys(str(v) if v is not None else "null" for v in path.values(record)))
        if not values:
            raise ValueError(f"Evaluated RecordPath {path.text} against a record but got no results")
        if len(values) > 1:
            raise ValueError(f"Evaluated RecordPath {path.text} against a record and received multiple distinct "
                             f"results ({', '.join(values)})")
        value = values[0].upper()
        kind = {"C": INSERT, "R": INSERT, "U": UPDATE, "D": DELETE}.get(value, value)
        if kind not in (INSERT, UPDATE, DELETE, UPSERT):
            raise ValueError(f"Evaluated RecordPath {path.text} against a record to determine the statement type "
                             f"but found {values[0]!r}, not INSERT, UPDATE, UPSERT, DELETE, c, r, u or d")
        return kind

    def _data_records(self, record: dict) -> list[dict]:
        path = self._data_path
        selected = path.evaluate(record)
        if not selected:
            raise ValueError(f"RecordPath {path.text} evaluated against a record yielded no results")
        for field in selected:
            if not isinstance(field.value, dict):
                kind = "null" if field.value is None else type(field.value).__name__
                raise ValueError(f"RecordPath {path.text} evaluated against a record is expected to return one or "
                                 f"more records but gave a {kind} value")
        return [field.value for field in selected]

    def _run_sql_fields(self, context, conn, records, field: str | None) -> None:
        if not field:
            raise ValueError(f"statement.type SQL needs '{FIELD_CONTAINING_SQL.name}'")
        multiple = context.property(ALLOW_MULTIPLE).as_bool()
        for record in records:
            text = record.get(field)
            if not text:
                raise ValueError(f"a record's field {field!r} holds no SQL statement")
            statements = _sql.split_queries(text) if multiple else [text]
            for statement in statements:
                conn.execute(statement)

    def _table(self, context, conn, schema: str | None, name: str) -> _Table:
        quote = context.property(QUOTE_TABLE).as_bool()
        parts = [p for p in (schema, name) if p]
        qualified = ".".join(quote_identifier(p) if quote else p for p in parts)
        key = (qualified, self._normalize is None)
        cached = self._tables.get(key)
        if cached is not None:
            return cached
        rows = conn.execute(
            "SELECT a.attname, a.atttypid::regtype::text, a.attnotnull AND NOT a.atthasdef AND a.attidentity = '', "
            "coalesce(a.attnum = ANY(i.indkey), false) FROM pg_attribute a LEFT JOIN pg_index i "
            "ON i.indrelid = a.attrelid AND i.indisprimary WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 "
            "AND NOT a.attisdropped AND a.attgenerated = '' ORDER BY a.attnum", (qualified,)).fetchall()
        if not rows:
            raise psycopg.errors.UndefinedTable(f"table {qualified!r} does not exist (or has no column)")
        columns = {self._normal(n): _Column(n, t, required) for n, t, required, _ in rows}
        table = _Table(qualified, columns, [n for n, _, _, primary in rows if primary])
        size = context.property(TABLE_SCHEMA_CACHE_SIZE).as_int()
        if size:
            if len(self._tables) >= size:
                self._tables.pop(next(iter(self._tables)))
            self._tables[key] = table
        return table

    def _normal(self, name: str) -> str:
        return self._normalize(name) if self._normalize else name

    def _statement(self, context, flowfile, statement_type: str, table: _Table,
                   fields: list[str]) -> tuple[str, list[_Column], list[str]]:
        """The SQL of ``statement_type`` for records of ``fields``: its text, the column of each
        parameter and the field giving it."""
        matched: list[tuple[str, _Column]] = []
        for field in fields:
            column = table.columns.get(self._normal(field))
            if column is not None:
                matched.append((field, column))
            elif context.property(UNMATCHED_FIELD).value == "Fail on Unmatched Fields":
                raise ValueError(f"Cannot map field '{field}' to any column of {table.qualified} "
                                 f"(columns: {', '.join(c.name for c in table.columns.values())})")
        if not matched:
            raise ValueError(f"None of the fields of the records map to a column of {table.qualified}")
        if statement_type in (INSERT, UPSERT, INSERT_IGNORE):
            self._check_required(context, table, {column.name for _, column in matched})
        quote = context.property(QUOTE_COLUMNS).as_bool()

        def ident(column: _Column) -> str:
            return quote_identifier(column.name) if quote else column.name

        def placeholder(column: _Column) -> str:
            return f"%s::{column.type}"

        if statement_type == DELETE:
            keys = self._keys(context.property(DELETE_KEYS).evaluate(flowfile).value, None, table, matched)
            conditions = " AND ".join(f"{ident(c)} IS NOT DISTINCT FROM {placeholder(c)}" for _, c in keys)
            return f"DELETE FROM {table.qualified} WHERE {conditions}", [c for _, c in keys], [f for f, _ in keys]
        names = ", ".join(ident(c) for _, c in matched)
        values = ", ".join(placeholder(c) for _, c in matched)
        if statement_type == INSERT:
            return (f"INSERT INTO {table.qualified} ({names}) VALUES ({values})", [c for _, c in matched],
                    [f for f, _ in matched])
        if statement_type == INSERT_IGNORE:
            return (f"INSERT INTO {table.qualified} ({names}) VALUES ({values}) ON CONFLICT DO NOTHING",
                    [c for _, c in matched], [f for f, _ in matched])
        keys = self._keys(context.property(UPDATE_KEYS).evaluate(flowfile).value, table.primary_key, table, matched)
        key_names = {c.name for _, c in keys}
        rest = [(f, c) for f, c in matched if c.name not in key_names]
        if statement_type == UPSERT:
            action = ("DO UPDATE SET " + ", ".join(f"{ident(c)} = EXCLUDED.{ident(c)}" for _, c in rest)
                      if rest else "DO NOTHING")
            conflict = ", ".join(ident(c) for _, c in keys)
            return (f"INSERT INTO {table.qualified} ({names}) VALUES ({values}) ON CONFLICT ({conflict}) {action}",
                    [c for _, c in matched], [f for f, _ in matched])
        if not rest:
            raise ValueError(f"the records have no field to update besides the keys {sorted(key_names)}")
        assignments = ", ".join(f"{ident(c)} = {placeholder(c)}" for _, c in rest)
        conditions = " AND ".join(f"{ident(c)} = {placeholder(c)}" for _, c in keys)
        pairs = rest + keys
        return (f"UPDATE {table.qualified} SET {assignments} WHERE {conditions}", [c for _, c in pairs],
                [f for f, _ in pairs])

    def _keys(self, names: str | None, default: list[str] | None, table: _Table,
              matched: list[tuple[str, _Column]]) -> list[tuple[str, _Column]]:
        if not names:
            if default is None:
                return matched
            if not default:
                raise ValueError(f"Table {table.qualified} has no primary key and no Update Keys were given")
            wanted = default
        else:
            wanted = [name.strip() for name in names.split(",") if name.strip()]
        by_column = {self._normal(c.name): (f, c) for f, c in matched}
        keys = []
        for name in wanted:
            pair = by_column.get(self._normal(name))
            if pair is None:
                raise ValueError(f"the records have no field for the key column {name!r}")
            keys.append(pair)
        return keys

    def _check_required(self, context, table: _Table, present: set[str]) -> None:
        behaviour = context.property(UNMATCHED_COLUMN).value
        for column in table.columns.values():
            if column.required and column.name not in present:
                message = f"Record does not have a value for the Required column '{column.name}'"
                if behaviour == "Fail on Unmatched Columns":
                    raise ValueError(message)
                if behaviour == "Warn on Unmatched Columns":
                    context.logger.warning(message)


def _normalizer(strategy: str, pattern: str | None) -> Callable[[str], str]:
    """NiFi's name translation: remove what the strategy says, trim, upper-case."""
    removals = {"REMOVE_UNDERSCORE": r"_", "REMOVE_SPACE": r" ", "REMOVE_UNDERSCORE_AND_SPACE": r"[_ ]",
                "REMOVE_ALL_SPECIAL_CHAR": r"[^a-zA-Z0-9]", "PATTERN": pattern or r"(?!)"}
    regex = re.compile(removals[strategy])
    return lambda name: regex.sub("", name).strip().upper()


def _param(value, column: _Column, binary_format: str):
    """A record value as a parameter for ``column``."""
    if value is None:
        return None
    if column.type in ("json", "jsonb") and not isinstance(value, str):
        return Json(value)
    if column.type == "bytea" and isinstance(value, str):
        if binary_format == "Hexadecimal":
            return bytes.fromhex(value)
        if binary_format == "Base64":
            return base64.b64decode(value)
        return value.encode()
    if isinstance(value, dict):
        return Json(value)
    return value
