"""Database access shared by ExecuteSQL, QueryDatabaseTable and PutDatabaseRecord: NiFi's
properties they have in common, result sets written as Avro the way NiFi's JdbcCommon writes
them (over psycopg 3), and which errors are worth retrying."""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, BinaryIO

import fastavro
import psycopg
from psycopg.postgres import types as pg_types
from psycopg.types.string import TextLoader

from engine.components import ExpressionScope, PropertyDescriptor
from engine.components import validators as v
from engine.services.apis import DBCPService

__all__ = ["AvroOptions", "ResultWriter", "describe_error", "empty_avro", "is_transient", "is_unreachable",
           "quote_identifier", "rollback_quietly", "set_statement_timeout", "split_queries", "table_name_of",
           "text_cursor", "timestamp_text", "type_name"]

MIME_TYPE_AVRO = "application/avro-binary"
DEFAULT_RECORD_NAME = "NiFi_ExecuteSQL_Record"

DBCP_SERVICE = PropertyDescriptor(
    "Database Connection Pooling Service", description="The controller service that gives connections to the "
    "database (a DBCPConnectionPool).", required=True, service=DBCPService)
QUERY_TIMEOUT = PropertyDescriptor(
    "Max Wait Time", description="The longest a query may run (the statement timeout); zero: no limit. Below "
    "one second counts as zero.", required=True, default="0 seconds", validators=[v.TIME_PERIOD],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
NORMALIZE_NAMES = PropertyDescriptor(
    "Normalize Table and Column Names", description="Whether characters not allowed in Avro names are replaced "
    "by underscores in the record and field names (and a leading digit gets one put before it).",
    required=True, default="false", allowed_values=["true", "false"])
USE_LOGICAL_TYPES = PropertyDescriptor(
    "Use Avro Logical Types", description="Whether DECIMAL/NUMERIC, DATE, TIME and TIMESTAMP columns are written "
    "as Avro logical types (decimal, date, time-millis, timestamp-millis) rather than as strings.",
    required=True, default="false", allowed_values=["true", "false"])
DEFAULT_PRECISION = PropertyDescriptor(
    "Default Decimal Precision", description="The precision of a NUMERIC column without one (unconstrained "
    "numeric) written as an Avro decimal.", required=True, default="10", validators=[v.POSITIVE_INTEGER],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
DEFAULT_SCALE = PropertyDescriptor(
    "Default Decimal Scale", description="The scale of a NUMERIC column without one written as an Avro decimal; "
    "digits beyond it are rounded half up.", required=True, default="0", validators=[v.NON_NEGATIVE_INTEGER],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
FETCH_SIZE = PropertyDescriptor(
    "Fetch Size", description="How many result rows are fetched from the database at a time (through a "
    "server-side cursor); zero: the whole result at once.", required=True, default="0",
    validators=[v.NON_NEGATIVE_INTEGER], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
AUTO_COMMIT = PropertyDescriptor(
    "Set Auto Commit", description="Accepted for NiFi flows: queries run in a transaction that is committed "
    "when they succeed, which PostgreSQL needs to fetch rows a Fetch Size at a time.", required=True,
    default="true", allowed_values=["true", "false"])
MAX_ROWS_PER_FLOW_FILE = PropertyDescriptor(
    "Max Rows Per FlowFile", description="The most result rows in one FlowFile; a larger result set is split "
    "into several (fragment.* attributes). Zero: all rows in one FlowFile.", required=True, default="0",
    validators=[v.NON_NEGATIVE_INTEGER], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
OUTPUT_BATCH_SIZE = PropertyDescriptor(
    "Output Batch Size", description="How many output FlowFiles are committed (released downstream) at a time "
    "while a large result is read; zero: all at the end. When set, fragment.count is not written.",
    required=True, default="0", validators=[v.NON_NEGATIVE_INTEGER],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)

#: PostgreSQL types loaded by psycopg into Python values; every other type is read as its text.
_PARSED = {"int2", "int4", "int8", "oid", "float4", "float8", "numeric", "bool", "date", "time", "timetz",
           "timestamp", "timestamptz", "bytea"}
_TEXT_OIDS = [info.oid for info in pg_types if info.name not in _PARSED] + [
    info.array_oid for info in pg_types if info.array_oid]
_ARRAY_OIDS = {info.array_oid for info in pg_types if info.array_oid}
_NAMES = {info.oid: info.name for info in pg_types}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_SQLSTATE_TRANSIENT = ("53", "40001", "40P01", "55P03", "57014")


def text_cursor(conn: psycopg.Connection, name: str | None = None) -> psycopg.Cursor:
    """A cursor reading the types Avro has no form for (json, arrays, uuid, ...) as their text, as
    pgjdbc gives them to NiFi; with ``name``, a server-side cursor (rows fetched as asked)."""
    cursor = conn.cursor(name) if name else conn.cursor()
    for oid in _TEXT_OIDS:
        cursor.adapters.register_loader(oid, TextLoader)
    return cursor


def rollback_quietly(conn: psycopg.Connection) -> None:
    """Roll the connection's transaction back; a broken connection (the pool drops it) is no error."""
    try:
        conn.rollback()
    except psycopg.Error:
        pass


def split_queries(text: str | None) -> list[str]:
    """A semicolon-separated list of statements (``\\;`` is a semicolon inside one), blanks dropped."""
    if not text or not text.strip():
        return []
    parts = (part.replace("\\;", ";").strip() for part in re.split(r"(?<!\\);", text))
    return [part for part in parts if part]


def quote_identifier(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def is_unreachable(error: BaseException) -> bool:
    """True when the database could not be reached or went away (or the pool had no connection);
    a refusal by confinement is not that."""
    if isinstance(error, PermissionError):
        return False
    if isinstance(error, OSError):
        return True
    if isinstance(error, psycopg.Error):
        state = error.sqlstate or ""
        if not state:
            return isinstance(error, (psycopg.OperationalError, psycopg.InterfaceError))
        return state.startswith(("08", "57P"))
    return False


def is_transient(error: BaseException) -> bool:
    """True when trying again later may succeed: the database is unreachable, out of resources, a
    lock or serialization conflict, a timeout. Errors in the statement or the data are not."""
    if is_unreachable(error):
        return True
    state = getattr(error, "sqlstate", None) or ""
    return isinstance(error, psycopg.Error) and state.startswith(_SQLSTATE_TRANSIENT)


def describe_error(error: BaseException) -> str:
    """One line saying what went wrong (the database's message with its SQLSTATE, or the error's)."""
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    state = getattr(error, "sqlstate", None)
    return f"{text} (SQLSTATE {state})" if state else text


def set_statement_timeout(conn: psycopg.Connection, seconds: float) -> None:
    """Limit the statements of the current transaction to ``seconds`` (under one: no limit, as NiFi)."""
    milliseconds = int(seconds) * 1000
    conn.execute("SELECT set_config('statement_timeout', %s, true)", (str(milliseconds),))


def normalize_name(name: str) -> str:
    """NiFi's normalizeNameForAvro: characters outside [A-Za-z0-9_] become '_', a leading digit gets '_'."""
    normalized = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return "_" + normalized if normalized[:1].isdigit() else normalized


@dataclass(frozen=True)
class AvroOptions:
    """How a result set becomes Avro (NiFi's AvroConversionOptions)."""

    record_name: str | None = None
    normalize: bool = False
    logical_types: bool = False
    default_precision: int = 10
    default_scale: int = 0
    max_rows: int = 0
    codec: str = "null"


@dataclass(frozen=True)
class _Column:
    name: str
    avro: Any
    convert: Callable[[Any], Any]


class ResultWriter:
    """Writes the rows of an executed cursor as Avro data files, ``max_rows`` at most per file."""

    def __init__(self, cursor: psycopg.Cursor, options: AvroOptions, table_name: str | None = None,
                 fetch_size: int = 0) -> None:
        self.cursor = cursor
        self.fetch_size = fetch_size or 1000
        self.options = options
        name = table_name or options.record_name or DEFAULT_RECORD_NAME
        if options.normalize or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            name = normalize_name(name)
        self.columns = [_column(column, options) for column in cursor.description or ()]
        self.schema = fastavro.parse_schema({
            "type": "record", "name": name, "namespace": "any.data",
            "fields": [{"name": column.name, "type": ["null", column.avro]} for column in self.columns]})
        self.exhausted = False

    def write(self, out: BinaryIO, on_row: Callable[[tuple], None] | None = None) -> int:
        """Write the next rows (up to the maximum per file) to ``out`` as one Avro data file; the
        number written. ``on_row`` sees each row as psycopg loaded it."""
        count = 0
        limit = self.options.max_rows

        def records() -> Iterator[dict[str, Any]]:
            nonlocal count
            while not limit or count < limit:
                rows = self.cursor.fetchmany(min(limit - count, self.fetch_size) if limit else self.fetch_size)
                if not rows:
                    self.exhausted = True
                    return
                for row in rows:
                    if on_row is not None:
                        on_row(row)
                    count += 1
                    yield {c.name: None if value is None else c.convert(value) for c, value in zip(self.columns, row)}

        fastavro.writer(out, self.schema, records(), codec=self.options.codec)
        return count

    def write_empty(self, out: BinaryIO) -> None:
        """An Avro data file of the result's schema holding no record."""
        fastavro.writer(out, self.schema, [], codec=self.options.codec)


def table_name_of(cursor: psycopg.Cursor) -> str | None:
    """The table the first column of the result comes from (what pgjdbc's getTableName gives), or None."""
    result = cursor.pgresult
    if result is None or not result.nfields or not result.ftable(0):
        return None
    row = cursor.connection.execute("SELECT relname FROM pg_class WHERE oid = %s", (result.ftable(0),)).fetchone()
    return row[0] if row else None


def empty_avro(codec: str = "null") -> bytes:
    """An Avro data file of an empty record, for a statement that returned no result set."""
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema({"type": "record", "name": DEFAULT_RECORD_NAME,
                                                "namespace": "any.data", "fields": []}), [], codec=codec)
    return out.getvalue()


def _column(column: psycopg.Column, options: AvroOptions) -> _Column:
    name = normalize_name(column.name) if options.normalize else column.name
    kind = type_name(column.type_code)
    logical = options.logical_types
    if kind in ("int2", "int4"):
        return _Column(name, "int", int)
    if kind in ("int8", "oid"):
        return _Column(name, "long", int)
    if kind == "float4":
        return _Column(name, "float", float)
    if kind == "float8":
        return _Column(name, "double", float)
    if kind == "bool":
        return _Column(name, "boolean", bool)
    if kind == "bytea":
        return _Column(name, "bytes", bytes)
    if kind == "array":
        return _Column(name, "bytes", lambda value: str(value).encode())
    if kind == "numeric":
        if not logical:
            return _Column(name, "string", str)
        precision, scale = column.precision or 0, column.scale or 0
        if precision <= 0:
            precision, scale = options.default_precision, scale if scale > 0 else options.default_scale
        precision = max(precision, scale)
        step = Decimal(1).scaleb(-scale)
        return _Column(name, {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale},
                       lambda value: value.quantize(step, rounding=ROUND_HALF_UP))
    if kind == "date":
        if logical:
            return _Column(name, {"type": "int", "logicalType": "date"}, lambda value: (value - _EPOCH.date()).days)
        return _Column(name, "string", lambda value: value.isoformat())
    if kind in ("time", "timetz"):
        if logical:
            return _Column(name, {"type": "int", "logicalType": "time-millis"}, _time_millis)
        return _Column(name, "string", lambda value: value.strftime("%H:%M:%S"))
    if kind in ("timestamp", "timestamptz"):
        if logical:
            return _Column(name, {"type": "long", "logicalType": "timestamp-millis"}, _timestamp_millis)
        return _Column(name, "string", timestamp_text)
    return _Column(name, "string", str)


def _utc(value: dt.datetime) -> dt.datetime:
    """A timestamp as UTC: with a zone, converted; without one, taken as UTC already."""
    return value.astimezone(dt.timezone.utc) if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


def _timestamp_millis(value: dt.datetime) -> int:
    delta = _utc(value) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def timestamp_text(value: dt.datetime) -> str:
    """java.sql.Timestamp's text (``2024-01-02 03:04:05.5``; ``.0`` without a fraction), in UTC."""
    value = _utc(value)
    return f"{value:%Y-%m-%d %H:%M:%S}." + (f"{value.microsecond:06d}".rstrip("0") or "0")


def type_name(oid: int) -> str:
    """The name of a built-in PostgreSQL type (``int4``, ``timestamptz``; ``array`` for arrays; ``text`` otherwise)."""
    return "array" if oid in _ARRAY_OIDS else _NAMES.get(oid, "text")


def _time_millis(value: dt.time) -> int:
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
