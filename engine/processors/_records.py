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

A trigger takes up to four micro-batches, and their jobs run one at a time in a second thread:
while Spark runs one, the task reads the next micro-batch and writes the last one's outputs.

A FlowFile larger than Micro-Batch Data Size is worked on alone; processors that can (QueryRecord,
UpdateRecord: ``streams``) stage its records for Spark as the reader gives them and write the
answer as Spark gives it back, a batch at a time, so it is never held in memory.

When Spark cannot run a job (its JVM died, its master is unreachable) the whole session is
rolled back with its FlowFiles penalized and the processor yields: nothing is lost, and the
micro-batch is tried again once the penalty is over. When the job itself is wrong (a query
naming an unknown column) the FlowFiles of its group go to failure.
"""

from __future__ import annotations

import functools
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

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

__all__ = ["BatchRolledBack", "Compiled", "INCLUDE_ZERO_RECORDS", "Loaded", "MICRO_BATCH_DATA_SIZE",
           "MICRO_BATCH_SIZE", "MicroBatchProcessor", "RECORD_ERROR", "RECORD_READER", "RECORD_WRITER",
           "RecordProcessor", "SMALL_CONTENT", "compile_path", "error_text", "evaluate_all", "record_schema",
           "split_by_flowfile", "take_micro_batch", "valid_path", "write_many", "write_records"]

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
    "reaches this size. A FlowFile larger than this is worked on alone (QueryRecord and UpdateRecord stream its "
    "records to and from Spark instead of holding them).", required=True,
    default="64 MB", validators=[v.DATA_SIZE], expression_language=ExpressionScope.ENVIRONMENT)

_TAKE = 100
#: Contents up to this size are read and written many at once (``read_contents``,
#: ``write_contents``); larger ones through a reader or writer of their own.
SMALL_CONTENT = 1 << 20
#: Micro-batches one trigger takes, so that their jobs and Python's work overlap (``_JobPipeline``).
_PIPELINED = 4
_SMALL_CHUNK = 1024
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

    waits_on_io = True

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

    #: True when the processor implements ``stream``: a FlowFile larger than Micro-Batch Data
    #: Size is then worked on a batch of records at a time, never held in memory.
    streams: ClassVar[bool] = False

    def stream(self, context: ProcessContext, session: ProcessSession, runtime: Any, spark: Any,
               flowfile: FlowFile, key: Hashable, frame: Any, schema: pa.Schema) -> None:
        """Do the work for one large FlowFile whose records (of ``schema``) are the staged
        DataFrame ``frame``: write its outputs a batch at a time and route them and it. On an
        error, remove the outputs made so far and raise."""
        raise NotImplementedError

    def on_trigger(self, context, session):
        batches = []
        for _ in range(_PIPELINED):
            flowfiles = take_micro_batch(session, self.batch_count, self.batch_bytes)
            if not flowfiles:
                break
            batches.append(flowfiles)
        if not batches:
            return
        try:
            for flowfile in (flowfile for flowfiles in batches for flowfile in flowfiles if self._large(flowfile)):
                self._stream(context, session, flowfile)
            with _JobPipeline(self, context, session) as pipeline:
                for flowfiles in batches:
                    loaded = self._load(context, session, [(position, flowfile) for position, flowfile
                                                           in enumerate(flowfiles) if not self._large(flowfile)])
                    for group in self._groups(loaded):
                        pipeline.submit(group, _contiguous(pa.concat_tables([item.table for item in group])))
        except BatchRolledBack:
            return

    def _large(self, flowfile: FlowFile) -> bool:
        """Whether ``flowfile`` is worked on alone, streamed."""
        return self.streams and flowfile.size > self.batch_bytes

    def _stream(self, context, session, flowfile: FlowFile) -> None:
        """A large FlowFile alone: its records staged for Spark as the reader gives them."""
        from engine.spark.jobs import staged_records

        try:
            key = self.prepare(context, flowfile)
        except ValueError as error:
            self.fail(context, session, flowfile, str(error))
            return

        def job(runtime, spark) -> None:
            with session.read(flowfile) as content:
                with self.reader_factory.create_reader(content, flowfile.attributes) as reader:
                    taken = [field.name for field in reader.schema.arrow if reserved(field.name)]
                    if taken:
                        raise ValueError(f"its records have a field named {taken[0]}, a name Flowsite reserves")
                    with staged_records(runtime, spark, reader.schema.arrow, reader.batches()) as (frame, schema):
                        self.stream(context, session, runtime, spark, flowfile, key, frame, schema)

        try:
            run_job(context, session, job)
        except (DamagedContentError, TaskTerminatedError, BatchRolledBack):
            raise
        except _query_error() as error:
            self.fail(context, session, flowfile, f"Spark could not run the job: {error}")
        except Exception as error:
            self.fail(context, session, flowfile, f"cannot work on its records: {error_text(error)}")

    def _groups(self, loaded: Iterable[Loaded]) -> list[list[Loaded]]:
        """The loaded FlowFiles by schema and group, in order of first appearance."""
        groups: dict[tuple[bytes, Hashable], list[Loaded]] = {}
        for item in loaded:
            schema = item.table.schema.serialize().to_pybytes()
            groups.setdefault((schema, self.group_of(item.key)), []).append(item)
        return list(groups.values())

    def _load(self, context, session, flowfiles: list[tuple[int, FlowFile]]) -> list[Loaded]:
        """The FlowFiles (with their places in the micro-batch) read, all through one call of the
        Record Reader (``read_contents``); those that cannot be read go to failure."""
        keys, taken = [], []
        for position, flowfile in flowfiles:
            try:
                keys.append(self.prepare(context, flowfile))
            except ValueError as error:
                self.fail(context, session, flowfile, str(error))
                continue
            taken.append((position, flowfile))
        small = [number for number, (_, flowfile) in enumerate(taken) if flowfile.size <= SMALL_CONTENT]
        read = self.reader_factory.read_contents([session.read_bytes(taken[number][1]) for number in small],
                                                 [taken[number][1].attributes for number in small])
        answers: list = [None] * len(taken)
        for number, answer in zip(small, read):
            answers[number] = answer
        for number, (_, flowfile) in enumerate(taken):
            if answers[number] is None:
                answers[number] = self._read_alone(session, flowfile)
        loaded = []
        for (position, flowfile), key, answer in zip(taken, keys, answers):
            if isinstance(answer, Exception):
                self.fail(context, session, flowfile, f"cannot read its records: {error_text(answer)}")
                continue
            schema, table = answer
            taken_names = [name for name in table.column_names if reserved(name)]
            if taken_names:
                self.fail(context, session, flowfile, f"its records have a field named {taken_names[0]}, a name "
                          "Flowsite reserves")
                continue
            index = pa.array(np.full(table.num_rows, position, dtype=np.int32))
            loaded.append(Loaded(position, flowfile, schema, table.append_column(INDEX_COLUMN, index), key))
        return loaded


    def _read_alone(self, session, flowfile: FlowFile) -> tuple[RecordSchema, pa.Table] | Exception:
        """A FlowFile too large to hold as bytes beside its records, read through a reader of its
        content: its schema and records, or the error reading them raised."""
        try:
            with session.read(flowfile) as stream:
                with self.reader_factory.create_reader(stream, flowfile.attributes) as reader:
                    return reader.schema, reader.read_all()
        except (DamagedContentError, TaskTerminatedError):
            raise
        except Exception as error:
            return error


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
    """``table`` in larger chunks when its chunks are small: Spark takes Arrow data a chunk at a
    time, and a chunk per small FlowFile makes the hand-over several times slower (the copy
    this costs is bounded by the micro-batch's size; readers' own batches are left alone)."""
    chunks = table.column(0).num_chunks if table.num_columns else 0
    if chunks > 1 and table.num_rows < chunks * _SMALL_CHUNK:
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
        raise _rolled_back(context, session, error) from error


def _rolled_back(context: ProcessContext, session: ProcessSession, error: Exception) -> BatchRolledBack:
    """Roll the session back with its FlowFiles penalized and yield, because Spark could not run
    a job; the BatchRolledBack to raise."""
    context.logger.warning("Spark could not run a job (%s); rolling back %d FlowFile(s) and penalizing them",
                           error, session.counts.flowfiles_in)
    session.rollback(penalize=True)
    context.yield_processor()
    return BatchRolledBack(str(error))


class _JobPipeline:
    """A trigger's Spark jobs, run one at a time in a second thread, so that the task's own
    thread reads the next micro-batch while Spark runs a job and writes a job's outputs while
    Spark runs the next: Python's work and Spark's overlap. Whatever touches the session stays
    in the task's thread; on leaving, the last job's outputs are written (or, on an error, its
    job is waited for and dropped)."""

    def __init__(self, processor: MicroBatchProcessor, context: ProcessContext, session: ProcessSession) -> None:
        self._processor = processor
        self._context = context
        self._session = session
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="spark-job")
        self._pending: tuple[list[Loaded], Future] | None = None

    def submit(self, group: list[Loaded], table: pa.Table) -> None:
        """Run ``group``'s job once the job before it has finished, then write that one's outputs."""
        from engine.spark.runtime import node_runtime

        finished = self._collect()
        runtime = node_runtime()
        processor = self._processor
        future = self._pool.submit(runtime.run, lambda spark: processor.job(runtime, spark, table, group))
        self._pending = (group, future)
        if finished is not None:
            processor.emit(self._context, self._session, *finished)

    def _collect(self) -> tuple[list[Loaded], Any] | None:
        """The pending job's group and answer; None when there is none or its group failed."""
        from engine.spark.runtime import SparkUnavailableError

        if self._pending is None:
            return None
        (group, future), self._pending = self._pending, None
        try:
            return group, future.result()
        except SparkUnavailableError as error:
            raise _rolled_back(self._context, self._session, error) from error
        except Exception as error:
            message = _job_error(error)
            if message is None:
                raise
            for item in group:
                self._processor.fail(self._context, self._session, item.flowfile, message)
            return None

    def __enter__(self) -> _JobPipeline:
        return self

    def __exit__(self, kind, error, trace) -> None:
        try:
            if kind is None:
                finished = self._collect()
                if finished is not None:
                    self._processor.emit(self._context, self._session, *finished)
            elif self._pending is not None:
                wait([self._pending[1]])
        finally:
            self._pool.shutdown(wait=True)


def _job_error(error: Exception) -> str | None:
    """Why a group goes to failure when its job raised ``error`` (a query Spark refuses, a
    RecordPath these records cannot take); None for any other error."""
    if isinstance(error, _query_error()):
        return f"Spark could not run the job: {error}"
    if isinstance(error, ValueError):
        return f"the job cannot run on these records: {error}"
    return None


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
        schema = _record_schema(schema)
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


def write_many(session: ProcessSession, writer_factory: RecordSetWriterFactory, flowfiles: Sequence[FlowFile],
               tables: Sequence[pa.Table], attributes: Sequence[Mapping[str, str]],
               added: Mapping[str, str] | None = None,
               schema: RecordSchema | None = None) -> list[tuple[FlowFile, WriteResult] | Exception]:
    """``write_records`` for many small outputs at once: each of ``flowfiles`` gets its
    ``tables``' records written by the Record Writer (``write_contents``: one rendering for all
    where the writer can), all contents in one write to the content repository, and the writer's
    attributes plus ``added``. ``attributes`` are those the writer's schema access evaluates for
    each; ``schema`` is the records' (by default, the one their Arrow schema maps to). An output
    the writer could not write gets the error instead (and is left unchanged)."""
    if schema is None and tables:
        schema = _record_schema(tables[0].schema)
    answers = writer_factory.write_contents(tables, schema, attributes) if tables else []
    contents = [(flowfile, answer[0]) for flowfile, answer in zip(flowfiles, answers)
                if not isinstance(answer, Exception)]
    updated = iter(session.write_all_bytes(contents))
    results: list[tuple[FlowFile, WriteResult] | Exception] = []
    for answer in answers:
        if isinstance(answer, Exception):
            results.append(answer)
            continue
        result = answer[1]
        attributes_out = {MIME_TYPE: writer_factory.mime_type, **result.attributes,
                          RECORD_COUNT: str(result.record_count), **(added or {})}
        results.append((session.put_all_attributes(next(updated), attributes_out), result))
    return results


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


@functools.lru_cache(maxsize=64)
def _record_schema(schema: pa.Schema) -> RecordSchema:
    """The record schema of Arrow records (the answers of one job all share theirs)."""
    return RecordSchema.from_arrow(schema)


def error_text(error: BaseException) -> str:
    """An error as one line for an attribute or a log: its message, else its type."""
    text = str(error).strip().split("\n")[0]
    return text or type(error).__name__

