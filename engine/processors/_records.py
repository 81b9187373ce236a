"""What the record processors share: their common properties, and micro-batching.

A record processor configured with a Record Reader and a Record Writer works on FlowFiles one
by one in NiFi. The Spark-backed ones here (QueryRecord, PartitionRecord, UpdateRecord) take a
*micro-batch* of FlowFiles at a time instead, so that one Spark job serves many FlowFiles:

1. up to Micro-Batch Size FlowFiles (and about Micro-Batch Data Size of content) are taken;
2. each is read through the Record Reader into Arrow, with an added int column
   ``__flowfile_index`` holding its place in the micro-batch. A FlowFile that cannot be read
   goes to failure alone (``record.error.message`` says why); the others go on;
3. the FlowFiles are grouped by record schema (and by whatever else makes their jobs differ,
   such as a query text that depends on their attributes); the records of a group are one Arrow
   table, handed to Spark in one job;
4. the job's answer is split by the index column, and each FlowFile's own outputs are written
   with the Record Writer, with the attributes NiFi gives them.

When Spark cannot run a job (its JVM died, its master is unreachable) the whole session is
rolled back with its FlowFiles penalized and the processor yields: nothing is lost, and the
micro-batch is tried again once the penalty is over. When the job itself is wrong (a query
naming an unknown column) the FlowFiles of its group go to failure.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from engine.components import ExpressionScope, Processor, PropertyDescriptor
from engine.components import validators as v
from engine.processors._query_plan import INDEX_COLUMN, reserved
from engine.record.schema import RecordSchema
from engine.record.streams import OutputSink
from engine.services.apis import RecordReaderFactory, RecordSetWriterFactory
from engine.session.damaged import DamagedContentError
from engine.session.guard import TaskTerminatedError

if TYPE_CHECKING:
    from engine.components import ProcessContext
    from engine.flowfile import FlowFile
    from engine.record.api import WriteResult
    from engine.session import ProcessSession

__all__ = ["INCLUDE_ZERO_RECORDS", "MICRO_BATCH_DATA_SIZE", "MICRO_BATCH_SIZE", "RECORD_ERROR", "RECORD_READER",
           "RECORD_WRITER", "BatchRolledBack", "Loaded", "MicroBatchProcessor", "RecordProcessor", "error_text",
           "Compiled", "compile_path", "evaluate_all", "record_schema", "split_by_flowfile", "valid_path", "write_records"]

RECORD_ERROR = "record.error.message"
MIME_TYPE = "mime.type"
RECORD_COUNT = "record.count"

RECORD_READER = PropertyDescriptor(
    "Record Reader", description="The controller service that reads the incoming FlowFiles' records (and tells "
    "their schema).", required=True, service=RecordReaderFactory)
RECORD_WRITER = PropertyDescriptor(
    "Record Writer", description="The controller service that writes the outgoing records.", required=True,
    service=RecordSetWriterFactory)
INCLUDE_ZERO_RECORDS = PropertyDescriptor(
    "Include Zero Record FlowFiles", description="Whether an output that holds no record is sent on; when false "
    "it is dropped.", required=True, default="true", allowed_values=["true", "false"])
MICRO_BATCH_SIZE = PropertyDescriptor(
    "Micro-Batch Size", description="Flowsite's own: the most FlowFiles one Spark job serves. Each FlowFile still "
    "gets its own outputs; a bigger micro-batch spreads the cost of a job over more FlowFiles.", required=True,
    default="1000", validators=[v.POSITIVE_INTEGER], expression_language=ExpressionScope.ENVIRONMENT)
MICRO_BATCH_DATA_SIZE = PropertyDescriptor(
    "Micro-Batch Data Size", description="Flowsite's own: FlowFiles are added to a micro-batch until their content "
    "reaches this size (a single larger FlowFile makes a micro-batch of its own).", required=True,
    default="64 MB", validators=[v.DATA_SIZE], expression_language=ExpressionScope.ENVIRONMENT)

_TAKE = 100
_LARGE_CHUNK = 8192
_COMPILED_KEPT = 256


class BatchRolledBack(Exception):
    """Spark could not run a job: the session was rolled back (FlowFiles penalized) and the
    processor yielded; the trigger ends."""


@dataclass
class Loaded:
    """One FlowFile of a micro-batch, read: its place, its records (with the index column) and
    what the processor worked out for it before reading (``key``)."""

    position: int
    flowfile: FlowFile
    schema: RecordSchema
    table: pa.Table
    key: Hashable


class RecordProcessor(Processor):
    """A processor with a Record Reader and a Record Writer; subclasses call ``configure_records``
    from ``on_scheduled``."""

    abstract = True

    def configure_records(self, context: ProcessContext) -> None:
        """Take the Record Reader and Record Writer services."""
        self.reader_factory: RecordReaderFactory = context.property(RECORD_READER).as_service()
        self.writer_factory: RecordSetWriterFactory = context.property(RECORD_WRITER).as_service()

    def write(self, session: ProcessSession, flowfile: FlowFile, records: pa.Table | Iterable[pa.RecordBatch],
              schema: pa.Schema | RecordSchema, attributes: Mapping[str, str]) -> tuple[FlowFile, WriteResult]:
        """``write_records`` with the processor's Record Writer."""
        return write_records(session, flowfile, self.writer_factory, records, schema, attributes)


class MicroBatchProcessor(RecordProcessor):
    """A record processor that serves a micro-batch of FlowFiles with one Spark job per group
    (see the module docstring). Subclasses implement ``prepare`` (optional), ``job``, ``emit``
    and ``fail``, and call ``configure_batches`` from ``on_scheduled``."""

    abstract = True

    def configure_batches(self, context: ProcessContext) -> None:
        """Read the reader, writer and micro-batch properties."""
        self.configure_records(context)
        self.batch_count = context.property(MICRO_BATCH_SIZE).evaluate().as_int()
        self.batch_bytes = context.property(MICRO_BATCH_DATA_SIZE).evaluate().as_data_size()

    def prepare(self, context: ProcessContext, flowfile: FlowFile) -> Hashable:
        """What the processor works out for this FlowFile before reading it (evaluated
        properties), kept as ``Loaded.key``. Raise ValueError to send the FlowFile to failure."""
        return None

    def group_of(self, key: Hashable) -> Hashable:
        """The part of a FlowFile's key its job depends on: FlowFiles of one schema whose keys
        give equal groups share a job (the whole key by default)."""
        return key

    def job(self, runtime: Any, spark: Any, table: pa.Table, group: list[Loaded]) -> Any:
        """Run the Spark work of one group (``table`` holds all its records); returns what ``emit``
        takes. A ValueError (the job cannot be made for these records) sends the group to failure."""
        raise NotImplementedError

    def emit(self, context: ProcessContext, session: ProcessSession, group: list[Loaded], result: Any) -> None:
        """Write and route each FlowFile's outputs from the job's ``result``."""
        raise NotImplementedError

    def fail(self, context: ProcessContext, session: ProcessSession, flowfile: FlowFile, message: str) -> None:
        """Send ``flowfile`` (as it came in) to failure, saying why."""
        raise NotImplementedError

    def on_trigger(self, context, session):
        flowfiles = take_micro_batch(session, self.batch_count, self.batch_bytes)
        if not flowfiles:
            return
        try:
            loaded = []
            for position, flowfile in enumerate(flowfiles):
                item = self._load(context, session, position, flowfile)
                if item is not None:
                    loaded.append(item)
            for group in self._groups(loaded):
                table = _contiguous(pa.concat_tables([item.table for item in group]))
                try:
                    result = run_job(context, session, lambda runtime, spark: self.job(runtime, spark, table, group))
                except _query_error() as error:
                    self._fail_all(context, session, group, f"Spark could not run the job: {error}")
                    continue
                except ValueError as error:  # the job cannot be made for these records (a RecordPath...)
                    self._fail_all(context, session, group, f"the job cannot run on these records: {error}")
                    continue
                self.emit(context, session, group, result)
        except BatchRolledBack:
            return

    def _fail_all(self, context, session, group: list[Loaded], message: str) -> None:
        for item in group:
            self.fail(context, session, item.flowfile, message)

    def _groups(self, loaded: Iterable[Loaded]) -> list[list[Loaded]]:
        """The loaded FlowFiles by schema and group, in order of first appearance."""
        groups: dict[tuple[bytes, Hashable], list[Loaded]] = {}
        for item in loaded:
            schema = item.table.schema.serialize().to_pybytes()
            groups.setdefault((schema, self.group_of(item.key)), []).append(item)
        return list(groups.values())

    def _load(self, context, session, position: int, flowfile: FlowFile) -> Loaded | None:
        try:
            key = self.prepare(context, flowfile)
        except ValueError as error:
            self.fail(context, session, flowfile, str(error))
            return None
        try:
            with session.read(flowfile) as stream:
                reader = self.reader_factory.create_reader(stream, flowfile.attributes)
                with reader:
                    schema = reader.schema
                    table = reader.read_all()
        except (DamagedContentError, TaskTerminatedError):
            raise
        except Exception as error:
            self.fail(context, session, flowfile, f"cannot read its records: {error_text(error)}")
            return None
        taken = [name for name in table.column_names if reserved(name)]
        if taken:
            self.fail(context, session, flowfile, f"its records have a field named {taken[0]}, a name Flowsite "
                      "reserves")
            return None
        index = pa.array(np.full(table.num_rows, position, dtype=np.int32))
        return Loaded(position, flowfile, schema, table.append_column(INDEX_COLUMN, index), key)


def take_micro_batch(session: ProcessSession, max_count: int, max_bytes: int) -> list[FlowFile]:
    """Up to ``max_count`` FlowFiles, taken until their content reaches ``max_bytes`` (polled in
    chunks sized by the average FlowFile taken so far, so the bound is kept closely)."""
    taken: list[FlowFile] = []
    size = 0
    chunk = 1
    while len(taken) < max_count and size < max_bytes:
        polled = session.get_batch(min(chunk, max_count - len(taken)))
        if not polled:
            break
        taken.extend(polled)
        size += sum(flowfile.size for flowfile in polled)
        average = max(size // len(taken), 1)
        chunk = max(1, min(_TAKE, (max_bytes - size) // average))
    return taken


def _contiguous(table: pa.Table) -> pa.Table:
    """``table`` in a few large chunks: Spark takes Arrow data a chunk at a time, and a chunk per
    small FlowFile makes it several times slower."""
    chunks = table.column(0).num_chunks if table.num_columns else 0
    if chunks > 1 and table.num_rows < chunks * _LARGE_CHUNK:
        return table.combine_chunks()
    return table


def run_job(context: ProcessContext, session: ProcessSession, job: Callable[[Any, Any], Any]) -> Any:
    """``job(runtime, spark)`` run on the node's Spark runtime. When Spark is unavailable the
    session is rolled back (FlowFiles penalized), the processor yields and BatchRolledBack is
    raised; a SparkQueryError goes to the caller."""
    from engine.spark.runtime import SparkUnavailableError, node_runtime

    runtime = node_runtime()
    try:
        return runtime.run(lambda spark: job(runtime, spark))
    except SparkUnavailableError as error:
        context.logger.warning("Spark could not run a job (%s); rolling back %d FlowFile(s) and penalizing them",
                               error, session.counts.flowfiles_in)
        session.rollback(penalize=True)
        context.yield_processor()
        raise BatchRolledBack(str(error)) from error


def _query_error() -> type[Exception]:
    from engine.spark.runtime import SparkQueryError

    return SparkQueryError


def split_by_flowfile(table: pa.Table, positions: Sequence[int], keep: Sequence[str] = ()) -> list[pa.Table]:
    """``table``'s rows for the FlowFiles at ``positions`` (ascending) of a micro-batch, by the
    index column and in their order within each FlowFile, without Flowsite's columns (but those
    in ``keep``)."""
    index = table.column(INDEX_COLUMN).to_numpy(zero_copy_only=False)
    kept = table.drop_columns([name for name in table.column_names if reserved(name) and name not in keep])
    if len(index) and np.any(index[1:] < index[:-1]):
        order = np.argsort(index, kind="stable")
        kept, index = kept.take(pa.array(order)), index[order]
    starts = np.searchsorted(index, positions, side="left")
    ends = np.searchsorted(index, positions, side="right")
    return [kept.slice(int(start), int(end - start)) for start, end in zip(starts, ends)]


def write_records(session: ProcessSession, flowfile: FlowFile, writer_factory: RecordSetWriterFactory,
                  records: pa.Table | Iterable[pa.RecordBatch], schema: pa.Schema | RecordSchema,
                  attributes: Mapping[str, str]) -> tuple[FlowFile, WriteResult]:
    """Replace ``flowfile``'s content with ``records`` (of ``schema``, the records' own) written
    by the Record Writer, and give it the writer's attributes (mime.type, record.count, ...).
    ``attributes`` are those the writer's schema access evaluates (the input FlowFile's)."""
    if isinstance(schema, pa.Schema):
        schema = RecordSchema.from_arrow(schema)
    write_schema = writer_factory.get_schema(attributes, schema)
    written: list[WriteResult] = []

    def write(out) -> None:
        # The session's content writer has only ``write``; writers may want ``flush`` and ``tell``.
        writer = writer_factory.create_writer(OutputSink(out), write_schema, attributes)
        for batch in ([records] if isinstance(records, pa.Table) else records):
            if batch.num_rows:
                writer.write_batch(batch)
        written.append(writer.finish())

    flowfile = session.write(flowfile, write)
    result = written[0]
    updates = {MIME_TYPE: writer_factory.mime_type, **result.attributes, RECORD_COUNT: str(result.record_count)}
    return session.put_all_attributes(flowfile, updates), result


# -- RecordPaths ----------------------------------------------------------------------------


def compile_path(text: str):
    """The compiled RecordPath ``text`` (``engine.record.path``); raises RecordPathError, a ValueError."""
    from engine.record.path import compile_record_path

    return compile_record_path(text)


def valid_path(value: str, context) -> str | None:
    """A validator of RecordPath values."""
    try:
        compile_path(value)
    except ValueError as error:
        return str(error)
    return None


class Compiled:
    """Texts compiled by ``compile`` (queries, RecordPaths), the most recent few hundred kept;
    safe to share between the tasks of a processor."""

    def __init__(self, compile: Callable[[str], Any]) -> None:
        self._compile = compile
        self._done: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> Any:
        """The compiled ``text`` (what ``compile`` raises, it raises)."""
        with self._lock:
            compiled = self._done.get(text)
        if compiled is None:
            compiled = self._compile(text)
            with self._lock:
                self._done[text] = compiled
                if len(self._done) > _COMPILED_KEPT:
                    self._done.popitem(last=False)
        return compiled


def evaluate_all(flowfile: FlowFile, properties: Mapping[str, Any], compiled: Compiled | None,
                 what: str) -> tuple[str | None, ...]:
    """Each of ``properties`` (PropertyValues by name) evaluated against ``flowfile``'s attributes
    and, with ``compiled``, compiled (cached); raises ValueError naming the property at fault."""
    texts = []
    for name, value in properties.items():
        text = value.evaluate(flowfile).value
        if compiled is not None:
            try:
                compiled.get(text or "")
            except ValueError as error:
                raise ValueError(f"the {what} of {name!r} is not usable: {error}") from None
        texts.append(text)
    return tuple(texts)


def record_schema(table: pa.Table) -> pa.Schema:
    """The schema of a micro-batch's records, without Flowsite's columns (what RecordPaths see)."""
    return pa.schema([field for field in table.schema if not reserved(field.name)])


def error_text(error: BaseException) -> str:
    """An error as one line for an attribute or a log: its message, else its type."""
    text = str(error).strip().split("\n")[0]
    return text or type(error).__name__

