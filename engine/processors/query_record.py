"""QueryRecord: SQL over each FlowFile's records (the table FLOWFILE), run on Spark for a
micro-batch of FlowFiles at once; each query's answer goes to the relationship named after it."""

from __future__ import annotations

from engine.components import (
    DynamicProperties,
    ExpressionScope,
    InputRequirement,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.processors._query_plan import QuerySyntaxError, plan_query
from engine.processors._records import (
    INCLUDE_ZERO_RECORDS,
    MICRO_BATCH_DATA_SIZE,
    MICRO_BATCH_SIZE,
    RECORD_ERROR,
    RECORD_READER,
    RECORD_WRITER,
    Compiled,
    MicroBatchProcessor,
    error_text,
    evaluate_all,
    split_by_flowfile,
    write_many,
)

ROUTE_ATTRIBUTE = "QueryRecord.Route"

DEFAULT_PRECISION = PropertyDescriptor(
    "Default Decimal Precision", description="Accepted so that NiFi flows load unchanged; Spark's decimals always "
    "carry their precision, so it is not used.", required=True, default="10", validators=[v.POSITIVE_INTEGER],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
DEFAULT_SCALE = PropertyDescriptor(
    "Default Decimal Scale", description="Accepted so that NiFi flows load unchanged; Spark's decimals always carry "
    "their scale, so it is not used.", required=True, default="0", validators=[v.NON_NEGATIVE_INTEGER],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)

ORIGINAL = Relationship("original", "The original FlowFile, once every query has answered for it")
FAILURE = Relationship("failure", "FlowFiles whose records cannot be read or queried (a query naming a column "
                       "they do not have, ...), unchanged")


def _valid_query(value: str, context) -> str | None:
    try:
        plan_query(value)
    except QuerySyntaxError as error:
        return str(error)
    return None


class QueryRecord(MicroBatchProcessor):
    """Runs SQL queries over the records of each FlowFile: every user-added property is a query
    over the table ``FLOWFILE`` (``SELECT * FROM FLOWFILE WHERE "age" >= 18``) and a
    relationship of the same name, which gets, for each FlowFile, a new FlowFile holding the
    query's answer written by the Record Writer (whose inherited schema is the answer's). The
    original goes to original; a FlowFile whose records cannot be read or queried goes to
    failure unchanged.

    Queries are Spark SQL, read with NiFi's quoting: ``"double quotes"`` (and backticks)
    name columns, ``'single quotes'`` are strings. The only table is FLOWFILE, and the functions
    ``reflect`` and ``java_method`` are refused. Column names of unnamed expressions are Spark's
    (``count(1)``): name them with AS.

    FlowFiles are queried a micro-batch at a time (Micro-Batch Size, Micro-Batch Data Size): their
    records are one table with a column telling each record's FlowFile, and each query is
    rewritten so that it answers per FlowFile in one Spark job — GROUP BY, window PARTITION BYs,
    DISTINCT and ORDER BY get the FlowFile's index, LIMIT becomes a per-FlowFile row number, and
    an aggregate without GROUP BY still answers (a count of 0) for a FlowFile without records.
    Queries that cannot be rewritten safely (UNION and other set operations, WITH, joins of
    FLOWFILE with itself, subqueries, ROLLUP/CUBE/GROUPING SETS, named windows, QUALIFY,
    TABLESAMPLE, LATERAL VIEW, DISTINCT with LIMIT) run once per FlowFile instead: the same
    answers, more slowly. FlowFiles of different record schemas, or whose queries differ (an
    expression over their attributes), are queried in separate jobs.

    When Spark cannot run a job (it died, its master is unreachable), the micro-batch is rolled
    back with its FlowFiles penalized and the processor yields: nothing is lost. Each output is a
    child of its FlowFile (FORK) and gets a ROUTE event.
    """

    nifi_type = "org.apache.nifi.processors.standard.QueryRecord"
    nifi_bundle = {"group": "org.apache.nifi", "artifact": "nifi-standard-nar"}
    tags = ("sql", "query", "calcite", "route", "record", "transform", "select", "update", "modify", "etl",
            "filter", "csv", "json", "logs", "text", "avro", "aggregate", "spark")
    properties = (RECORD_READER, RECORD_WRITER, INCLUDE_ZERO_RECORDS, DEFAULT_PRECISION, DEFAULT_SCALE,
                  MICRO_BATCH_SIZE, MICRO_BATCH_DATA_SIZE)
    migrated_properties = {"record-reader": "Record Reader", "record-writer": "Record Writer",
                           "include-zero-record-flowfiles": "Include Zero Record FlowFiles",
                           "dbf-default-precision": "Default Decimal Precision",
                           "dbf-default-scale": "Default Decimal Scale"}
    relationships = (ORIGINAL, FAILURE)
    dynamic_relationships = True
    dynamic_properties = DynamicProperties(
        "The name of the relationship to route data to",
        "A SQL SELECT statement over the table FLOWFILE",
        "Each user-added property is a query whose answer, for each FlowFile, goes to the relationship named "
        "after the property.", ExpressionScope.FLOWFILE_ATTRIBUTES)
    input_requirement = InputRequirement.REQUIRED
    writes_attributes = (
        WrittenAttribute("mime.type", "The Record Writer's MIME type"),
        WrittenAttribute("record.count", "The number of records the query selected"),
        WrittenAttribute(ROUTE_ATTRIBUTE, "The relationship the FlowFile went to (the query's name, original or "
                         "failure)"),
        WrittenAttribute(RECORD_ERROR, "On failure: why (Flowsite's addition)"),
    )
    see_also = ("ConvertRecord", "PartitionRecord", "UpdateRecord")
    streams = True

    @classmethod
    def migrate_properties(cls, properties):
        migrated = super().migrate_properties(properties)
        migrated.pop("cache-schema", None)  # removed from NiFi: statements are always cached
        return migrated

    @classmethod
    def dynamic_property_descriptor(cls, name):
        return PropertyDescriptor(name, description="A SQL SELECT statement over the table FLOWFILE; its answer "
                                  "goes to the relationship of this name", dynamic=True, validators=[_valid_query],
                                  expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)

    @classmethod
    def relationships_for(cls, properties):
        static = {descriptor.name for descriptor in cls.properties}
        queries = [name for name, value in properties.items() if name not in static and value is not None]
        return [ORIGINAL, FAILURE] + [Relationship(name, "The answers of the query of this name") for name in queries]

    def validate(self, context):
        if not context.dynamic_properties:
            yield "at least one user-added property (a query) is needed"

    def on_scheduled(self, context):
        self.configure_batches(context)
        self._include_zero = context.property(INCLUDE_ZERO_RECORDS).as_bool()
        self._queries = dict(context.dynamic_properties)
        self._plans = Compiled(plan_query)

    def prepare(self, context, flowfile):
        return evaluate_all(flowfile, self._queries, self._plans, "query")

    def job(self, runtime, spark, table, group):
        from engine.spark.jobs import query_records

        plans = [self._plans.get(text or "") for text in group[0].key]
        return query_records(runtime, spark, table, plans, [item.position for item in group])

    def emit(self, context, session, group, answers):
        positions = [item.position for item in group]
        flowfiles = [item.flowfile for item in group]
        failed: dict[int, str] = {}
        outputs: list[list] = [[] for _ in group]
        for name, answer in zip(self._queries, answers):
            pieces = split_by_flowfile(answer.table, positions)
            if answer.over_no_records is not None:
                pieces = [piece if piece.num_rows else _like(answer.over_no_records, piece.schema) for piece in pieces]
            wanted = [number for number, piece in enumerate(pieces)
                      if number not in failed and (piece.num_rows or self._include_zero)]
            children = [session.create(flowfiles[number]) for number in wanted]
            written = write_many(session, self.writer_factory, children, [pieces[number] for number in wanted],
                                 [flowfiles[number].attributes for number in wanted], {ROUTE_ATTRIBUTE: name})
            for number, child, result in zip(wanted, children, written):
                if isinstance(result, Exception):
                    session.remove(child)
                    failed[number] = f"cannot write the answer: {error_text(result)}"
                elif not result[1].record_count and not self._include_zero:
                    session.remove(result[0])
                else:
                    outputs[number].append([result[0], name])
        for number, flowfile in enumerate(flowfiles):
            if number in failed:
                _drop(session, outputs[number])
                self.fail(context, session, flowfile, failed[number])
            else:
                self._route(session, flowfile, outputs[number])

    def stream(self, context, session, runtime, spark, flowfile, key, frame, schema):
        from engine.spark.jobs import query_batches

        outputs: list = []
        try:
            for name, text in zip(self._queries, key):
                with query_batches(runtime, spark, frame, self._plans.get(text or "")) as answer:
                    self._answer(session, flowfile, name, answer, answer.schema, outputs)
        except BaseException:
            _drop(session, outputs)
            raise
        self._route(session, flowfile, outputs)

    def _answer(self, session, flowfile, name: str, records, schema, outputs: list) -> None:
        """Write one query's answer for ``flowfile`` into a child added to ``outputs`` (dropped
        again when it holds no record and such outputs are not wanted)."""
        outputs.append([session.create(flowfile), name])
        child, result = self.write(session, outputs[-1][0], records, schema, flowfile.attributes)
        if not result.record_count and not self._include_zero:
            session.remove(child)
            outputs.pop()
            return
        outputs[-1][0] = session.put_attribute(child, ROUTE_ATTRIBUTE, name)

    @staticmethod
    def _route(session, flowfile, outputs: list) -> None:
        for child, name in outputs:
            session.provenance.route(child, name)
            session.transfer(child, name)
        session.transfer(session.put_attribute(flowfile, ROUTE_ATTRIBUTE, ORIGINAL.name), ORIGINAL)

    def fail(self, context, session, flowfile, message):
        context.logger.error("cannot query %s: %s; routing it to failure", flowfile.uuid, message)
        flowfile = session.put_all_attributes(flowfile, {ROUTE_ATTRIBUTE: FAILURE.name, RECORD_ERROR: message})
        session.transfer(flowfile, FAILURE)


def _drop(session, outputs: list) -> None:
    """Remove the outputs made so far for a FlowFile that fails."""
    for child, _ in outputs:
        session.remove(child)


def _like(table, schema):
    """``table`` cast to ``schema`` where it can be (the same columns, maybe another nullability)."""
    try:
        return table.cast(schema)
    except (ValueError, TypeError, NotImplementedError):
        return table
