"""PartitionRecord: splits each FlowFile's records into one FlowFile per distinct combination of
RecordPath values, with the values as attributes; the RecordPaths are evaluated on Spark."""

from __future__ import annotations

import datetime
import decimal
import json
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.components import (
    DynamicProperties,
    ExpressionScope,
    InputRequirement,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.processors._bins import FRAGMENT_COUNT, FRAGMENT_ID, FRAGMENT_INDEX
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
    valid_path,
)
from engine.session.damaged import DamagedContentError
from engine.session.guard import TaskTerminatedError

SEGMENT_ORIGINAL_FILENAME = "segment.original.filename"

SUCCESS = Relationship("success", "The FlowFiles holding one partition each")
ORIGINAL = Relationship("original", "The original FlowFile, once all its records were partitioned")
FAILURE = Relationship("failure", "FlowFiles that cannot be partitioned, unchanged (with record.error.message)")

_KEY = "__flowfile_key{}"


class PartitionRecord(MicroBatchProcessor):
    """Splits, or partitions, each FlowFile's records by the values of RecordPaths: every
    user-added property names an attribute and holds a RecordPath (``/customer/country``), and
    two records go to the same outgoing FlowFile only if every RecordPath gives them the same
    value. Each outgoing FlowFile gets, for each property, an attribute with the value its
    records share (none when the value is null, or not a single scalar: an array, a map, a
    record), record.count, mime.type, and fragment.identifier (shared by all partitions of one
    FlowFile), fragment.index, fragment.count and segment.original.filename. Partitions come in
    the order their first record appears; records keep their order. The original goes to
    original.

    The RecordPaths become Spark SQL expressions (see docs/record-path.md for the supported
    subset) evaluated for a micro-batch of FlowFiles in one Spark job (see QueryRecord and
    docs/records.md); when Spark cannot run it, the micro-batch is rolled back and penalized.
    Each partition is a child of its FlowFile (FORK).
    """

    nifi_type = "org.apache.nifi.processors.standard.PartitionRecord"
    nifi_bundle = {"group": "org.apache.nifi", "artifact": "nifi-standard-nar"}
    tags = ("record", "partition", "recordpath", "rpath", "segment", "split", "group", "bin", "organize", "spark")
    properties = (RECORD_READER, RECORD_WRITER, MICRO_BATCH_SIZE, MICRO_BATCH_DATA_SIZE)
    migrated_properties = {"record-reader": "Record Reader", "record-writer": "Record Writer"}
    relationships = (SUCCESS, FAILURE, ORIGINAL)
    dynamic_properties = DynamicProperties(
        "The name of the attribute that holds the value", "A RecordPath",
        "Records are partitioned by the value of this RecordPath; the partition's FlowFile gets an attribute of "
        "this name holding the value (when it is a single scalar, not null).", ExpressionScope.FLOWFILE_ATTRIBUTES)
    input_requirement = InputRequirement.REQUIRED
    writes_attributes = (
        WrittenAttribute("record.count", "The number of records in the partition"),
        WrittenAttribute("mime.type", "The Record Writer's MIME type"),
        WrittenAttribute(FRAGMENT_ID, "One random identifier shared by the partitions of one FlowFile"),
        WrittenAttribute(FRAGMENT_INDEX, "The partition's place among its FlowFile's partitions, from 0"),
        WrittenAttribute(FRAGMENT_COUNT, "How many partitions the FlowFile made"),
        WrittenAttribute(SEGMENT_ORIGINAL_FILENAME, "The filename of the partitioned FlowFile"),
        WrittenAttribute("<property name>", "The value of the property's RecordPath, when a single scalar"),
        WrittenAttribute(RECORD_ERROR, "On failure: why (Flowsite's addition)"),
    )
    see_also = ("ConvertRecord", "QueryRecord", "UpdateRecord", "MergeRecord")

    @classmethod
    def dynamic_property_descriptor(cls, name):
        return PropertyDescriptor(name, description="A RecordPath whose value partitions the records", dynamic=True,
                                  validators=[valid_path], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)

    def validate(self, context):
        if not context.dynamic_properties:
            yield "at least one RecordPath must be added as a user-added property"

    def on_scheduled(self, context):
        self.configure_batches(context)
        self._paths = dict(context.dynamic_properties)
        self._compiled = Compiled(compile_path)

    def prepare(self, context, flowfile):
        return evaluate_all(flowfile, self._paths, self._compiled, "RecordPath")

    def job(self, runtime, spark, table, group):
        from engine.spark.jobs import add_columns

        schema = record_schema(table)
        keys = [(_KEY.format(number), self._compiled.get(text or "").to_sql(schema))
                for number, text in enumerate(group[0].key)]
        return add_columns(runtime, spark, table, keys)

    def emit(self, context, session, group, result):
        names = list(self._paths)
        keys = [_KEY.format(number) for number in range(len(names))]
        pieces = split_by_flowfile(result, [item.position for item in group], keep=keys)
        for item, records in zip(group, pieces):
            flowfile = item.flowfile
            children = []
            try:
                partitions = _partitions(records, keys)
                identifier = str(uuid.uuid4())
                for number, (rows, first) in enumerate(partitions):
                    child = session.create(flowfile)
                    children.append(child)
                    values = {name: _attribute(records.column(key)[first].as_py()) for name, key in zip(names, keys)}
                    attributes = {name: value for name, value in values.items() if value is not None}
                    attributes.update({FRAGMENT_ID: identifier, FRAGMENT_INDEX: str(number),
                                       FRAGMENT_COUNT: str(len(partitions))})
                    if "filename" in flowfile.attributes:
                        attributes[SEGMENT_ORIGINAL_FILENAME] = flowfile.attributes["filename"]
                    partition = records.take(rows).drop_columns(keys)
                    child, _ = self.write(session, child, partition, partition.schema, flowfile.attributes)
                    children[-1] = session.put_all_attributes(child, attributes)
            except (DamagedContentError, TaskTerminatedError):
                raise
            except Exception as error:
                for child in children:
                    session.remove(child)
                self.fail(context, session, flowfile, f"cannot write its partitions: {error_text(error)}")
                continue
            for child in children:
                session.transfer(child, SUCCESS)
            session.transfer(flowfile, ORIGINAL)

    def fail(self, context, session, flowfile, message):
        context.logger.error("cannot partition %s: %s; routing it to failure", flowfile.uuid, message)
        session.transfer(session.put_attribute(flowfile, RECORD_ERROR, message), FAILURE)


def _partitions(records: pa.Table, keys: list[str]) -> list[tuple[pa.Array, int]]:
    """The row numbers of each distinct combination of the ``keys`` columns' values, and the
    first row of each, in the order combinations first appear."""
    if not records.num_rows:
        return []
    codes = np.stack([_codes(records.column(key)) for key in keys], axis=1)
    _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    partition_of_row = rank[inverse]
    rows = np.argsort(partition_of_row, kind="stable")
    bounds = np.searchsorted(partition_of_row[rows], np.arange(len(order) + 1))
    return [(pa.array(rows[bounds[number]:bounds[number + 1]]), int(first[order[number]]))
            for number in range(len(order))]


def _codes(column: pa.ChunkedArray) -> np.ndarray:
    """An integer per row, equal for equal values (null included)."""
    try:
        encoded = pc.dictionary_encode(column, null_encoding="encode").combine_chunks()
        return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        seen: dict[str, int] = {}
        return np.array([seen.setdefault(json.dumps(value, sort_keys=True, default=str), len(seen))
                         for value in column.to_pylist()], dtype=np.int64)


def _attribute(value) -> str | None:
    """A RecordPath value as an attribute (NiFi's text of it), or None when it is null or not a
    single scalar."""
    if value is None or isinstance(value, (list, dict, tuple, bytes)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, datetime.time):
        return value.strftime("%H:%M:%S")
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    return str(value)

