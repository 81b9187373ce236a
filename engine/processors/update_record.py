"""UpdateRecord: sets the fields a RecordPath selects to a literal value or to what another
RecordPath gives, in each FlowFile's records; the updates run on Spark."""

from __future__ import annotations

import re

import pyarrow as pa
from sqlglot import exp

from engine.components import (
    AllowableValue,
    DynamicProperties,
    ExpressionScope,
    InputRequirement,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.processors._query_plan import INDEX_COLUMN
from engine.processors._records import (
    MICRO_BATCH_DATA_SIZE,
    MICRO_BATCH_SIZE,
    RECORD_ERROR,
    RECORD_READER,
    RECORD_WRITER,
    Compiled,
    MicroBatchProcessor,
    compile_path,
    error_text,
    evaluate_all,
    record_schema,
    split_by_flowfile,
)
from engine.session.damaged import DamagedContentError
from engine.session.guard import TaskTerminatedError

LITERAL = "literal-value"
RECORD_PATH = "record-path-value"

REPLACEMENT_VALUE_STRATEGY = PropertyDescriptor(
    "Replacement Value Strategy", description="How the values of the user-added properties are read.",
    required=True, default=LITERAL, allowed_values=[
        AllowableValue(LITERAL, "Literal Value", "The value (after its expressions over the FlowFile's attributes "
                       "are evaluated) is what the selected fields become"),
        AllowableValue(RECORD_PATH, "Record Path Value", "The value is a RecordPath evaluated against each record; "
                       "what it gives is what the selected fields become"),
    ])

SUCCESS = Relationship("success", "FlowFiles whose records were updated")
FAILURE = Relationship("failure", "FlowFiles that cannot be updated, unchanged (with record.error.message)")

# NiFi's per-field variables of literal values, which a Spark update cannot offer.
_FIELD_VARIABLES = re.compile(r"\$\{[^}]*\b(field\.name|field\.value|field\.type|record\.index)\b")


class UpdateRecord(MicroBatchProcessor):
    """Updates the records of each FlowFile: every user-added property's name is a RecordPath
    selecting the fields to update (``/customer/name``), and its value what they become —
    with Replacement Value Strategy 'Literal Value', the value itself (expressions over the
    FlowFile's attributes evaluated: ``${filename}``); with 'Record Path Value', the value of
    another RecordPath over the same record (``concat(/first, ' ', /last)``,
    ``toUpperCase(/name)``). A RecordPath naming a field the records lack adds it. The updates
    apply in the order of the properties, each seeing the ones before.

    The RecordPaths become Spark SQL expressions (docs/record-path.md lists the supported
    subset) applied to a micro-batch of FlowFiles in one Spark job (see QueryRecord and
    docs/records.md); FlowFiles whose literal values differ share the job. NiFi's per-field
    variables field.name, field.value, field.type and record.index are not available to literal
    values: use a Record Path Value with RecordPath functions instead. The FlowFile keeps its
    identity (CONTENT_MODIFIED); one that cannot be updated goes to failure unchanged, with
    record.error.message.
    """

    nifi_type = "org.apache.nifi.processors.standard.UpdateRecord"
    nifi_bundle = {"group": "org.apache.nifi", "artifact": "nifi-standard-nar"}
    tags = ("update", "record", "generic", "schema", "json", "csv", "avro", "log", "logs", "freeform", "text",
            "spark")
    properties = (RECORD_READER, RECORD_WRITER, REPLACEMENT_VALUE_STRATEGY, MICRO_BATCH_SIZE, MICRO_BATCH_DATA_SIZE)
    migrated_properties = {"record-reader": "Record Reader", "record-writer": "Record Writer",
                           "replacement-value-strategy": "Replacement Value Strategy"}
    relationships = (SUCCESS, FAILURE)
    dynamic_properties = DynamicProperties(
        "A RecordPath", "The value the selected fields become (or a RecordPath giving it)",
        "The fields the RecordPath of the property's name selects are set to the property's value.",
        ExpressionScope.FLOWFILE_ATTRIBUTES)
    input_requirement = InputRequirement.REQUIRED
    writes_attributes = (
        WrittenAttribute("mime.type", "The Record Writer's MIME type"),
        WrittenAttribute("record.count", "The number of records in the FlowFile"),
        WrittenAttribute(RECORD_ERROR, "On failure: the error met"),
    )
    see_also = ("ConvertRecord", "QueryRecord", "PartitionRecord")

    def validate(self, context):
        updates = context.dynamic_properties
        if not updates:
            yield "at least one RecordPath must be added as a user-added property"
        literal = context.property(REPLACEMENT_VALUE_STRATEGY).value == LITERAL
        for name, value in updates.items():
            try:
                compile_path(name)
            except ValueError as error:
                yield f"the property name {name!r} is not a RecordPath: {error}"
            text = value.value or ""
            if literal and _FIELD_VARIABLES.search(text):
                yield (f"the value of {name!r} uses NiFi's per-field variables (field.value, ...), which Flowsite "
                       "does not offer: use 'Record Path Value' and RecordPath functions")
            elif not literal and "${" not in text:
                try:
                    compile_path(text)
                except ValueError as error:
                    yield f"the value of {name!r} is not a RecordPath: {error}"

    def on_scheduled(self, context):
        self.configure_batches(context)
        self._literal = context.property(REPLACEMENT_VALUE_STRATEGY).value == LITERAL
        self._updates = dict(context.dynamic_properties)
        self._compiled = Compiled(compile_path)
        for name in self._updates:
            self._compiled.get(name)

    def prepare(self, context, flowfile):
        return evaluate_all(flowfile, self._updates, None if self._literal else self._compiled, "value")

    def group_of(self, key):
        # Literal values may differ between the FlowFiles of one job (see _value_sql).
        return None if self._literal else key

    def job(self, runtime, spark, table, group):
        from engine.spark.jobs import update_records

        schema = record_schema(table)
        updates = []
        for number, name in enumerate(self._updates):
            destination = self._compiled.get(name)
            if self._literal:
                values = {item.position: item.key[number] for item in group}
                value = _value_sql(values, _spark_type(destination.sql_value(schema).type))
            else:
                value = self._compiled.get(group[0].key[number] or "")
            updates.append(destination.update_sql_columns(value, schema))
        return update_records(runtime, spark, table, updates)

    def emit(self, context, session, group, result):
        pieces = split_by_flowfile(result, [item.position for item in group])
        for item, records in zip(group, pieces):
            try:
                updated, _ = self.write(session, item.flowfile, records, records.schema, item.flowfile.attributes)
            except (DamagedContentError, TaskTerminatedError):
                raise
            except Exception as error:
                self.fail(context, session, item.flowfile, f"cannot write its records: {error_text(error)}")
                continue
            session.transfer(updated, SUCCESS)

    def fail(self, context, session, flowfile, message):
        context.logger.error("cannot update %s: %s; routing it to failure", flowfile.uuid, message)
        session.transfer(session.put_attribute(flowfile, RECORD_ERROR, message), FAILURE)


def _value_sql(values: dict[int, str | None], spark_type: str | None) -> str:
    """The literal values of a micro-batch's FlowFiles (by position) as one Spark SQL expression:
    the value itself when they share it, else a CASE over the FlowFile index; each converted to
    ``spark_type`` (the type of the field it replaces) when given."""
    distinct = set(values.values())
    if len(distinct) == 1:
        return _literal(distinct.pop(), spark_type)
    cases = " ".join(f"WHEN {position} THEN {_literal(value, spark_type)}" for position, value in values.items())
    return f"CASE `{INDEX_COLUMN}` {cases} END"


def _literal(value: str | None, spark_type: str | None) -> str:
    text = "NULL" if value is None else exp.Literal.string(value).sql(dialect="spark")
    return f"CAST({text} AS {spark_type or 'STRING'})"


def _spark_type(arrow_type: pa.DataType | None) -> str | None:
    """The Spark SQL type a literal is converted to for a field of ``arrow_type`` (None: it stays
    text). As in NiFi, a value set into an existing field takes the field's type."""
    if arrow_type is None:
        return None
    if pa.types.is_decimal(arrow_type):
        return f"DECIMAL({arrow_type.precision}, {arrow_type.scale})"
    if pa.types.is_timestamp(arrow_type):
        return "TIMESTAMP" if arrow_type.tz else "TIMESTAMP_NTZ"
    for test, name in _SPARK_TYPES:
        if test(arrow_type):
            return name
    return None


_SPARK_TYPES = ((pa.types.is_boolean, "BOOLEAN"), (pa.types.is_int8, "TINYINT"), (pa.types.is_int16, "SMALLINT"),
                (pa.types.is_int32, "INT"), (pa.types.is_int64, "BIGINT"), (pa.types.is_float32, "FLOAT"),
                (pa.types.is_float64, "DOUBLE"), (pa.types.is_date32, "DATE"), (pa.types.is_binary, "BINARY"))
