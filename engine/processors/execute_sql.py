"""ExecuteSQL: runs a SQL query and writes its result sets as Avro."""

from __future__ import annotations

import io
import time
import uuid

import fastavro

from engine.components import (
    AllowableValue,
    DynamicProperties,
    ExpressionScope,
    InputRequirement,
    ProcessException,
    Processor,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.processors import _sql, _sql_args
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

__all__ = ["ExecuteSQL"]

SQL_PRE_QUERY = PropertyDescriptor(
    "SQL Pre-Query", description="Statements run before the query, separated by semicolons (\\; is a semicolon "
    "inside one), to set session properties for instance; their results are not kept.",
    validators=[v.NON_EMPTY], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
SQL_QUERY = PropertyDescriptor(
    "SQL Query", description="The query to run. When unset, the content of each incoming FlowFile is the query "
    "(Expression Language is not evaluated in the content).", validators=[v.NON_EMPTY],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
SQL_POST_QUERY = PropertyDescriptor(
    "SQL Post-Query", description="Statements run after the query, separated by semicolons; their results are "
    "not kept.", validators=[v.NON_EMPTY], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
CODECS = {"NONE": "null", "DEFLATE": "deflate", "BZIP2": "bzip2", "SNAPPY": "snappy", "LZO": None}
COMPRESSION_FORMAT = PropertyDescriptor(
    "Compression Format", description="The compression codec of the Avro data files.", required=True,
    default="NONE", allowed_values=list(CODECS))
CONTENT_OUTPUT_STRATEGY = PropertyDescriptor(
    "Content Output Strategy", description="What an incoming FlowFile's content becomes when its query produces "
    "no result set.", required=True, default="EMPTY",
    allowed_values=[AllowableValue("EMPTY", "Empty", "An Avro data file holding no record."),
                    AllowableValue("ORIGINAL", "Original", "The FlowFile's content, unchanged.")])

SUCCESS = Relationship("success", "The result sets of queries, as Avro (and statements' empty results).")
FAILURE = Relationship("failure", "Incoming FlowFiles whose query the database rejected or failed on (penalized).")

ROW_COUNT = "executesql.row.count"
DURATION = "executesql.query.duration"
EXECUTION_TIME = "executesql.query.executiontime"
FETCH_TIME = "executesql.query.fetchtime"
RESULTSET_INDEX = "executesql.resultset.index"
ERROR_MESSAGE = "executesql.error.message"
INPUT_UUID = "input.flowfile.uuid"


class ExecuteSQL(Processor):
    """Runs a SQL query against a database and writes each result set it returns as Avro, split
    into FlowFiles of at most Max Rows Per FlowFile rows when that is set.

    The query comes from the SQL Query property (evaluated against the incoming FlowFile) or,
    when that is unset, from the incoming FlowFile's content. Without an incoming connection the
    processor runs the query on its schedule. The Avro schema is NiFi's: a record named after the
    first column's table (NiFi_ExecuteSQL_Record when there is none) in the namespace
    ``any.data``, every field a union of null and its type; integers and floating point as Avro
    numbers, booleans, bytea as bytes, and (without Use Avro Logical Types) NUMERIC, DATE, TIME and
    TIMESTAMP as strings; json, uuid, intervals and the like as their text; arrays as the bytes of
    their text, as pgjdbc gives them. Timestamps with a time zone are written in UTC, timestamps
    without one are taken as UTC.

    Pre- and post-queries, the query and the commit run in one transaction on one pooled
    connection. A query that fails (a syntax error, a statement timeout, a post-query error)
    routes the incoming FlowFile to failure with ``executesql.error.message``; when the database
    cannot be reached or goes away, the incoming FlowFile stays in its queue (penalized) and
    the processor yields, so nothing is lost and it is tried again (once Output Batch Size has
    sent part of the results on, a FlowFile with the incoming one's attributes goes to failure
    instead, as in NiFi). Fetch Size reads a SELECT
    through a server-side cursor that many rows at a time.

    A query may have ``?`` placeholders (``??`` is a literal question mark, the jsonb operator),
    bound in order to ``sql.args.1.value``, ``sql.args.2.value``, ... of the types
    ``sql.args.N.type`` (JDBC type numbers) and, for binary, date, time and timestamp values, the
    formats ``sql.args.N.format``, read as NiFi reads them; they come from user-added properties
    and, overriding those, from the incoming FlowFile's attributes. Dates, times and timestamps
    are read as on a NiFi node whose time zone is UTC. An argument of the wrong form, an unknown
    type, a gap in the numbering or a placeholder count that does not match routes the FlowFile
    to failure saying which.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.standard.ExecuteSQL"
    tags = ("sql", "select", "jdbc", "query", "database")
    properties = (DBCP_SERVICE, SQL_PRE_QUERY, SQL_QUERY, SQL_POST_QUERY, QUERY_TIMEOUT, NORMALIZE_NAMES,
                  USE_LOGICAL_TYPES, COMPRESSION_FORMAT, DEFAULT_PRECISION, DEFAULT_SCALE, MAX_ROWS_PER_FLOW_FILE,
                  OUTPUT_BATCH_SIZE, FETCH_SIZE, AUTO_COMMIT, CONTENT_OUTPUT_STRATEGY)
    relationships = (SUCCESS, FAILURE)
    dynamic_properties = DynamicProperties(
        "sql.args.N.type, sql.args.N.value or sql.args.N.format", "the parameter's JDBC type number, value or "
        "format", "Parameters of the query's ? placeholders, as the same-named FlowFile attributes give them "
        "(which win over these): the JDBC type as a number (4 INTEGER, 12 VARCHAR, 93 TIMESTAMP, ...), the value, "
        "and for binary values ascii, hex or base64, for dates and times a Java pattern or a named ISO format.")
    input_requirement = InputRequirement.ALLOWED
    migrated_properties = {"sql-pre-query": "SQL Pre-Query", "SQL select query": "SQL Query",
                           "sql-post-query": "SQL Post-Query", "esql-output-batch-size": "Output Batch Size",
                           "esql-fetch-size": "Fetch Size", "esql-auto-commit": "Set Auto Commit",
                           "esql-max-rows": "Max Rows Per FlowFile", "compression-format": "Compression Format",
                           "dbf-normalize": "Normalize Table and Column Names",
                           "dbf-user-logical-types": "Use Avro Logical Types",
                           "dbf-default-precision": "Default Decimal Precision",
                           "dbf-default-scale": "Default Decimal Scale"}
    writes_attributes = (
        WrittenAttribute(ROW_COUNT, "The number of rows in the FlowFile (of the result set when not split)."),
        WrittenAttribute(DURATION, "Execution time plus fetch time, in milliseconds."),
        WrittenAttribute(EXECUTION_TIME, "How long the query took to execute, in milliseconds."),
        WrittenAttribute(FETCH_TIME, "How long fetching and writing the FlowFile's rows took, in milliseconds."),
        WrittenAttribute(RESULTSET_INDEX, "Which result set of the query the FlowFile holds, from 0."),
        WrittenAttribute(ERROR_MESSAGE, "Why the query failed (on FlowFiles routed to failure)."),
        WrittenAttribute("fragment.identifier", "With Max Rows Per FlowFile: the same for every FlowFile of a "
                         "result set."),
        WrittenAttribute("fragment.count", "With Max Rows Per FlowFile and no Output Batch Size: how many "
                         "FlowFiles the result set became."),
        WrittenAttribute("fragment.index", "With Max Rows Per FlowFile: the FlowFile's position in its result set."),
        WrittenAttribute(INPUT_UUID, "The uuid of the incoming FlowFile that held or triggered the query."),
        WrittenAttribute("mime.type", "application/avro-binary when the query produced no result set."))
    reads_attributes = (
        WrittenAttribute("sql.args.N.type", "The JDBC type number of the query's Nth ? parameter: -7 BIT, "
                         "16 BOOLEAN, -6 TINYINT, 5 SMALLINT, 4 INTEGER, -5 BIGINT, 7 REAL, 6 FLOAT, 8 DOUBLE, "
                         "2 NUMERIC, 3 DECIMAL, 1 CHAR, 12 VARCHAR, -1 LONGVARCHAR, -16 LONGNVARCHAR, 2005 CLOB, "
                         "2011 NCLOB, 1111 OTHER (text the database converts), 91 DATE, 92 TIME, 93 TIMESTAMP, "
                         "-2 BINARY, -3 VARBINARY, -4 LONGVARBINARY."),
        WrittenAttribute("sql.args.N.value", "The value of the Nth parameter; absent: NULL."),
        WrittenAttribute("sql.args.N.format", "Optional. Binary values: ascii (the default), hex or base64. Dates, "
                         "times and timestamps: a Java DateTimeFormatter pattern or a named format (ISO_LOCAL_DATE, "
                         "ISO_OFFSET_DATE_TIME, ...); without one a date is yyyy-MM-dd, a time HH:mm:ss.SSS, a "
                         "timestamp yyyy-MM-dd HH:mm:ss.SSS, or any of them milliseconds since the epoch."))
    see_also = ("QueryDatabaseTable", "PutDatabaseRecord", "DBCPConnectionPool")

    def validate(self, context):
        codec = CODECS[context.property(COMPRESSION_FORMAT).value]
        if codec is None or not _codec_available(codec):
            yield f"'{COMPRESSION_FORMAT.name}' {context.property(COMPRESSION_FORMAT).value} is not available here"

    def on_scheduled(self, context) -> None:
        if not context.property(SQL_QUERY).is_set() and not context.has_incoming_connection():
            raise ProcessException("Either the SQL Query must be set or there must be an incoming connection "
                                   "providing FlowFiles that hold the query")
        self._service = context.property(DBCP_SERVICE).as_service()

    def on_trigger(self, context, session) -> None:
        incoming = None
        if context.has_incoming_connection():
            incoming = session.get()
            if incoming is None:
                return

        def value(descriptor):
            return context.property(descriptor).evaluate(incoming)

        if context.property(SQL_QUERY).is_set():
            query = value(SQL_QUERY).value
        else:
            query = session.read_bytes(incoming).decode("utf-8", errors="replace")
        options = AvroOptions(normalize=context.property(NORMALIZE_NAMES).as_bool(),
                              logical_types=context.property(USE_LOGICAL_TYPES).as_bool(),
                              default_precision=value(DEFAULT_PRECISION).as_int(),
                              default_scale=value(DEFAULT_SCALE).as_int(),
                              max_rows=value(MAX_ROWS_PER_FLOW_FILE).as_int(),
                              codec=CODECS[context.property(COMPRESSION_FORMAT).value])
        run = _Run(self, context, session, incoming, options, value(OUTPUT_BATCH_SIZE).as_int())
        statement = query
        try:
            arguments = {name: prop.value for name, prop in context.dynamic_properties.items()}
            if incoming is not None:
                arguments.update(incoming.attributes)
            parameters = _sql_args.sql_arguments(arguments)
            if parameters is not None:
                query = _sql_args.bind_placeholders(query, len(parameters))
            with self._service.connection() as conn:
                try:
                    _sql.set_statement_timeout(conn, value(QUERY_TIMEOUT).as_duration())
                    for statement in _sql.split_queries(value(SQL_PRE_QUERY).value):
                        conn.execute(statement)
                    statement = query
                    run.execute(conn, query, value(FETCH_SIZE).as_int(), parameters)
                    for statement in _sql.split_queries(value(SQL_POST_QUERY).value):
                        conn.execute(statement)
                    conn.commit()
                except BaseException:
                    _sql.rollback_quietly(conn)
                    raise
        except Exception as error:
            run.discard()
            self._failed(context, session, run, statement, error)
            return
        run.finish()

    def _failed(self, context, session, run: _Run, query: str, error: Exception) -> None:
        message = _sql.describe_error(error)
        # Once a batch went downstream the incoming FlowFile is gone: a stand-in goes to failure instead.
        if _sql.is_unreachable(error) and run.retained is None:
            context.yield_processor()
            raise ProcessException(f"cannot run the query on {self._service.url}: {message}; "
                                   f"{'the FlowFile stays queued and is tried again' if run.incoming else 'will retry'}"
                                   " when the database answers") from error
        flowfile = run.failure_flowfile()
        if flowfile is None:
            context.logger.error("Unable to execute SQL query [%s]: %s. No FlowFile to route to failure", query,
                                 message)
            context.yield_processor()
            return
        if context.has_incoming_connection():
            context.logger.error("Unable to execute SQL query [%s] for %s: %s; routing to failure", query,
                                 flowfile.uuid, message)
            flowfile = session.penalize(flowfile)
        else:
            context.logger.error("Unable to execute SQL query [%s]: %s; routing to failure", query, message)
            context.yield_processor()
        session.transfer(session.put_all_attributes(flowfile, {ERROR_MESSAGE: message}), FAILURE)


class _Run:
    """One trigger's output: the FlowFiles of its result sets, committed in batches if asked."""

    def __init__(self, processor, context, session, incoming, options: AvroOptions, batch_size: int) -> None:
        self.context, self.session, self.incoming = context, session, incoming
        self.options, self.batch_size = options, batch_size
        self.pending: list = []
        self.result_sets = 0
        self.retained: dict[str, str] | None = None
        self.url = processor._service.url

    def execute(self, conn, query: str, fetch_size: int, parameters: list | None = None) -> None:
        server_side = fetch_size > 0 and (query.split() or [""])[0].upper() in ("SELECT", "VALUES", "TABLE")
        cursor = _sql.text_cursor(conn, f"executesql_{uuid.uuid4().hex}" if server_side else None)
        self.fetch_size = fetch_size
        with cursor:
            started = time.monotonic()
            cursor.execute(query, parameters)
            execution_ms = int((time.monotonic() - started) * 1000)
            while True:
                if cursor.description is not None:
                    self._write_result_set(cursor, execution_ms)
                if server_side or not cursor.nextset():
                    break

    def _write_result_set(self, cursor, execution_ms: int) -> None:
        session, options = self.session, self.options
        writer = ResultWriter(cursor, options, _sql.table_name_of(cursor), self.fetch_size)
        fragment_id, fragments = str(uuid.uuid4()), []
        base = dict(self.incoming.attributes) if self.incoming is not None else {}
        while True:
            started = time.monotonic()
            out = io.BytesIO()
            rows = writer.write(out)
            if options.max_rows and rows == 0 and fragments:
                break
            fetch_ms = int((time.monotonic() - started) * 1000)
            flowfile = session.create(self.incoming) if self.incoming is not None else session.create()
            flowfile = session.write_bytes(flowfile, out.getvalue())
            attributes = {**base, ROW_COUNT: str(rows), DURATION: str(execution_ms + fetch_ms),
                          EXECUTION_TIME: str(execution_ms), FETCH_TIME: str(fetch_ms),
                          RESULTSET_INDEX: str(self.result_sets), "mime.type": _sql.MIME_TYPE_AVRO}
            if self.incoming is not None:
                attributes[INPUT_UUID] = self.incoming.uuid
            if options.max_rows:
                attributes.update({"fragment.identifier": fragment_id, "fragment.index": str(len(fragments))})
            flowfile = session.put_all_attributes(flowfile, attributes)
            details = f"Retrieved {rows} rows"
            if self.context.has_incoming_connection():
                session.provenance.fetch(flowfile, self.url, details=details, duration=execution_ms + fetch_ms)
            else:
                session.provenance.receive(flowfile, self.url, details=details, duration=execution_ms + fetch_ms)
            fragments.append(flowfile)
            self.pending.append(flowfile)
            if self.batch_size and len(self.pending) >= self.batch_size:
                self._release()
            if not options.max_rows or writer.exhausted:
                break
        if options.max_rows and not self.batch_size:
            count = str(len(fragments))
            self.pending = [session.put_attribute(f, "fragment.count", count) if f in fragments else f
                            for f in self.pending]
        self.result_sets += 1

    def _release(self) -> None:
        """Output Batch Size reached: send what is ready downstream now (the incoming FlowFile goes)."""
        for flowfile in self.pending:
            self.session.transfer(flowfile, SUCCESS)
        self.pending = []
        if self.incoming is not None:
            self.retained = dict(self.incoming.attributes)
            self.session.remove(self.incoming)
            self.incoming = None
        self.session.commit()

    def finish(self) -> None:
        session = self.session
        for flowfile in self.pending:
            session.transfer(flowfile, SUCCESS)
        if self.incoming is not None:
            if self.result_sets:
                session.remove(self.incoming)
            elif self.context.property(CONTENT_OUTPUT_STRATEGY).value == "ORIGINAL":
                session.transfer(self.incoming, SUCCESS)
            else:
                session.transfer(self._empty(self.incoming), SUCCESS)
        elif not self.result_sets and not self.retained:
            session.transfer(self._empty(session.create()), SUCCESS)

    def _empty(self, flowfile):
        flowfile = self.session.write_bytes(flowfile, _sql.empty_avro(self.options.codec))
        return self.session.put_all_attributes(flowfile, {ROW_COUNT: "0", "mime.type": _sql.MIME_TYPE_AVRO})

    def discard(self) -> None:
        for flowfile in self.pending:
            self.session.remove(flowfile)
        self.pending = []

    def failure_flowfile(self):
        if self.incoming is not None:
            return self.incoming
        if self.retained is not None:
            return self.session.put_all_attributes(self.session.create(), self.retained)
        return None


def _codec_available(codec: str) -> bool:
    try:
        fastavro.writer(io.BytesIO(), fastavro.parse_schema({"type": "record", "name": "r", "fields": []}), [],
                        codec=codec)
    except (ValueError, ImportError):
        return False
    return True
