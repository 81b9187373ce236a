"""MergeRecord: merges the records of many FlowFiles of one schema into one FlowFile, binning
them as MergeContent does (by count, size and age, optionally per correlation value)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from engine.components import (
    AllowableValue,
    InputRequirement,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.processors._bins import (
    FRAGMENT_COUNT,
    FRAGMENT_ID,
    FRAGMENT_INDEX,
    REASON_BIN_MANAGER_FULL,
    REASON_MIN_THRESHOLDS,
    REASON_TIMEOUT,
    Bin,
    BinningProcessor,
    Member,
    Thresholds,
    defragment_problem,
    keep_common,
    keep_unique,
    roll_back,
)
from engine.processors._records import RECORD_ERROR, RECORD_READER, RECORD_WRITER, RecordProcessor, error_text
from engine.processors.merge_content import DEFRAGMENT, MERGE_BIN_AGE, MERGE_COUNT, MERGE_STRATEGY, MERGE_UUID
from engine.session.damaged import DamagedContentError
from engine.session.guard import TaskTerminatedError

if TYPE_CHECKING:
    import pyarrow as pa

    from engine.flowfile import FlowFile

MERGE_COMPLETION_REASON = "merge.completion.reason"
KEEP_COMMON = "Keep Only Common Attributes"
KEEP_UNIQUE = "Keep All Unique Attributes"

CORRELATION_ATTRIBUTE = PropertyDescriptor(
    "Correlation Attribute Name", description="If set, two FlowFiles are binned together only if they have the "
    "same value for this attribute (and the same schema); unset, FlowFiles of one schema are binned in the order "
    "they are taken from the queue.", validators=[v.ATTRIBUTE_NAME])
ATTRIBUTE_STRATEGY = PropertyDescriptor(
    "Attribute Strategy", description="Which attributes of the merged FlowFiles the merged FlowFile gets.",
    required=True, default=KEEP_COMMON, allowed_values=[
        AllowableValue(KEEP_COMMON, description="Only the attributes every FlowFile has, with the same value"),
        AllowableValue(KEEP_UNIQUE, description="Every attribute whose FlowFiles do not disagree on its value (a "
                       "FlowFile without the attribute does not disagree)")])
MIN_RECORDS = PropertyDescriptor(
    "Minimum Number of Records", description="The fewest records a bin may be merged with (unless it reaches the "
    "Max Bin Age).", required=True, default="1", validators=[v.POSITIVE_INTEGER])
MAX_RECORDS = PropertyDescriptor(
    "Maximum Number of Records", description="A bin is merged once it holds this many records. A soft limit: a "
    "FlowFile's records all go into one bin, so the last FlowFile may carry it past.", default="1000",
    validators=[v.POSITIVE_INTEGER])
MIN_SIZE = PropertyDescriptor(
    "Minimum Bin Size", description="The least content (of the incoming FlowFiles) a bin may be merged with "
    "(unless it reaches the Max Bin Age).", required=True, default="0 B", validators=[v.DATA_SIZE])
MAX_SIZE = PropertyDescriptor(
    "Maximum Bin Size", description="A bin is merged once its incoming FlowFiles' content reaches this size (no "
    "limit when unset). A soft limit, like Maximum Number of Records.", validators=[v.DATA_SIZE])
MAX_BIN_AGE = PropertyDescriptor(
    "Max Bin Age", description="How long a bin may wait for more FlowFiles: older bins are merged whatever their "
    "size (incomplete Defragment bins go to failure). Unset, bins wait indefinitely.", validators=[v.TIME_PERIOD])
MAX_BINS = PropertyDescriptor(
    "Maximum Number of Bins", description="The most bins kept open at once; when a FlowFile needs one more, the "
    "oldest bin is merged to make room.", required=True, default="10", validators=[v.POSITIVE_INTEGER])

MERGED = Relationship("merged", "The FlowFile holding the merged records")
ORIGINAL = Relationship("original", "The FlowFiles that were merged, each with merge.uuid naming the merged one")
FAILURE = Relationship("failure", "FlowFiles whose records cannot be read, and the FlowFiles of a bin that "
                       "could not be merged")

# merge.completion.reason: NiFi's texts for the reasons a bin is merged.
_REASONS = {REASON_MIN_THRESHOLDS: "Bin is full enough", REASON_TIMEOUT: "Bin has reached Max Bin Age",
            REASON_BIN_MANAGER_FULL: "Maximum number of bins has been exceeded"}
_FULL = "Bin is completely full"


class MergeRecord(BinningProcessor, RecordProcessor):
    """Merges the records of many FlowFiles into one FlowFile: FlowFiles whose records have the
    same schema (as the Record Reader tells it) and, if Correlation Attribute Name is set, the
    same value of that attribute, are put into bins, and a bin's records are written by the
    Record Writer into one merged FlowFile. Bins fill and are merged as in MergeContent: once
    full (Maximum Number of Records or Maximum Bin Size reached; both soft limits, since a
    FlowFile's records stay together), once the minimums are reached when no more FlowFiles
    wait, when older than Max Bin Age, or, the oldest, when one more bin is needed than Maximum
    Number of Bins allows. With the Defragment strategy the FlowFiles sharing a
    fragment.identifier are merged once all fragment.count of them are there (in fragment.index
    order when they have one); an incomplete group that ages out goes to failure.

    Bin sizes count the incoming FlowFiles' content (NiFi counts what the writer wrote so far).
    Records are read when a FlowFile is binned (to know its schema and record count) and again,
    streaming, when its bin is merged: no bin is held in memory. Merging needs no query, so it
    runs without Spark. The merged FlowFile is a child of all its FlowFiles (JOIN); each
    original gets merge.uuid and goes to original. A FlowFile whose records cannot be read goes
    to failure alone, with record.error.message; a bin that cannot be written goes to failure
    whole.
    """

    nifi_type = "org.apache.nifi.processors.standard.MergeRecord"
    nifi_bundle = {"group": "org.apache.nifi", "artifact": "nifi-standard-nar"}
    tags = ("merge", "record", "content", "correlation", "stream", "event")
    properties = (RECORD_READER, RECORD_WRITER, MERGE_STRATEGY, CORRELATION_ATTRIBUTE, ATTRIBUTE_STRATEGY,
                  MIN_RECORDS, MAX_RECORDS, MIN_SIZE, MAX_SIZE, MAX_BIN_AGE, MAX_BINS)
    migrated_properties = {"record-reader": "Record Reader", "record-writer": "Record Writer",
                           "merge-strategy": "Merge Strategy", "correlation-attribute-name": "Correlation Attribute Name",
                           "min-bin-size": "Minimum Bin Size", "max-bin-size": "Maximum Bin Size",
                           "min-records": "Minimum Number of Records", "max-records": "Maximum Number of Records",
                           "max.bin.count": "Maximum Number of Bins", "max-bin-age": "Max Bin Age"}
    relationships = (ORIGINAL, FAILURE, MERGED)
    input_requirement = InputRequirement.REQUIRED
    reads_attributes = (
        WrittenAttribute(FRAGMENT_ID, "Defragment: the FlowFiles to merge together"),
        WrittenAttribute(FRAGMENT_COUNT, "Defragment: how many FlowFiles the group has"),
        WrittenAttribute(FRAGMENT_INDEX, "Defragment: the order of the FlowFiles' records, when present"),
    )
    writes_attributes = (
        WrittenAttribute("record.count", "The number of records merged"),
        WrittenAttribute("mime.type", "The Record Writer's MIME type"),
        WrittenAttribute(MERGE_COUNT, "How many FlowFiles were merged"),
        WrittenAttribute(MERGE_BIN_AGE, "How long the bin waited, in milliseconds"),
        WrittenAttribute(MERGE_UUID, "On each original: the uuid of the merged FlowFile"),
        WrittenAttribute(MERGE_COMPLETION_REASON, "Why the bin was merged: 'Bin is completely full', 'Bin is full "
                         "enough', 'Bin has reached Max Bin Age' or 'Maximum number of bins has been exceeded'"),
        WrittenAttribute(RECORD_ERROR, "On a FlowFile sent to failure: why"),
    )
    see_also = ("MergeContent", "PartitionRecord", "ConvertRecord")

    def validate(self, context):
        max_records = context.property(MAX_RECORDS).as_int()
        if max_records is not None and context.property(MIN_RECORDS).as_int() > max_records:
            yield "'Minimum Number of Records' must not be larger than 'Maximum Number of Records'"
        max_size = context.property(MAX_SIZE).as_data_size()
        if max_size is not None and context.property(MIN_SIZE).as_data_size() > max_size:
            yield "'Minimum Bin Size' must not be larger than 'Maximum Bin Size'"

    def on_scheduled(self, context):
        self.configure_records(context)
        defragment = context.property(MERGE_STRATEGY).value == DEFRAGMENT
        correlation = context.property(CORRELATION_ATTRIBUTE)
        self._correlation = correlation.value if correlation.is_set() and not defragment else None
        self._attribute_strategy = keep_unique if context.property(ATTRIBUTE_STRATEGY).value == KEEP_UNIQUE \
            else keep_common
        max_size = context.property(MAX_SIZE).as_data_size()
        max_records = context.property(MAX_RECORDS).as_int()
        thresholds = Thresholds(context.property(MIN_SIZE).as_data_size(),
                                float("inf") if max_size is None else max_size,
                                context.property(MIN_RECORDS).as_int(),
                                float("inf") if max_records is None else max_records)
        self.configure_bins(thresholds, context.property(MAX_BIN_AGE).as_duration(),
                            context.property(MAX_BINS).as_int(), defragment=defragment, soft=True,
                            require_index=False)

    # -- binning --------------------------------------------------------------------------

    def members(self, context, session, flowfiles):
        members = []
        for flowfile in flowfiles:
            try:
                with session.read(flowfile) as stream:
                    with self.reader_factory.create_reader(stream, flowfile.attributes) as reader:
                        schema = reader.schema
                        count = sum(batch.num_rows for batch in reader.batches())
            except (DamagedContentError, TaskTerminatedError):
                raise
            except Exception as error:
                message = f"cannot read its records: {error_text(error)}"
                context.logger.error("cannot bin %s: %s; routing it to failure", flowfile.uuid, message)
                session.transfer(session.put_attribute(flowfile, RECORD_ERROR, message), FAILURE)
                continue
            if self._defragment:
                group = flowfile.attributes.get(FRAGMENT_ID)
            else:
                correlation = flowfile.attributes.get(self._correlation) if self._correlation else None
                group = (schema.avro_text, correlation)
            members.append(Member(flowfile, group, count))
        return members

    # -- merging one bin ------------------------------------------------------------------

    def merge_bin(self, context, bin_: Bin) -> None:
        session = bin_.session
        contents = bin_.contents
        try:
            if self._defragment:
                problem = defragment_problem(contents, require_index=False)
                if problem is not None:
                    self._fail(context, session, contents, problem)
                    return
                if all(flowfile.attributes.get(FRAGMENT_INDEX, "").isdigit() for flowfile in contents):
                    contents.sort(key=lambda flowfile: int(flowfile.attributes[FRAGMENT_INDEX]))
            try:
                merged = self._merge(context, bin_, contents)
            except (DamagedContentError, TaskTerminatedError):
                raise
            except Exception as error:
                self._fail(context, session, contents, f"cannot merge their records: {error_text(error)}")
                return
            session.transfer(merged, MERGED)
            for flowfile in contents:
                session.transfer(session.put_attribute(flowfile, MERGE_UUID, merged.uuid), ORIGINAL)
            session.commit()
            context.logger.info("merged %s record(s) of %d FlowFile(s) into %s (%s)",
                                merged.attributes.get("record.count"), len(contents), merged.uuid, bin_.reason)
        except TaskTerminatedError:
            return
        except Exception as error:
            context.logger.error("failed to merge a bin of %d FlowFile(s): %s: %s; rolling it back",
                                 len(contents), type(error).__name__, error)
            roll_back(session, context, penalize=True)

    def _merge(self, context, bin_: Bin, contents: list[FlowFile]) -> FlowFile:
        """Write the merged FlowFile (attributes included)."""
        session = bin_.session
        first = contents[0]
        with session.read(first) as stream:
            with self.reader_factory.create_reader(stream, first.attributes) as reader:
                schema = reader.schema
        merged = session.create(contents)
        attributes = self._attribute_strategy(contents)
        attributes.setdefault("filename", merged.uuid)
        merged = session.put_all_attributes(merged, attributes)
        try:
            merged, _ = self.write(session, merged, self._records(session, contents), schema, first.attributes)
        except BaseException:
            session.remove(merged)
            raise
        return session.put_all_attributes(merged, {
            MERGE_COUNT: str(len(contents)),
            MERGE_BIN_AGE: str(int((context.clock.monotonic() - bin_.created) * 1000)),
            MERGE_COMPLETION_REASON: _REASONS.get(bin_.reason, _FULL),
        })

    def _records(self, session, contents: list[FlowFile]) -> Iterator[pa.RecordBatch]:
        for flowfile in contents:
            with session.read(flowfile) as stream:
                with self.reader_factory.create_reader(stream, flowfile.attributes) as reader:
                    yield from reader.batches()

    @staticmethod
    def _fail(context, session, contents: list[FlowFile], message: str) -> None:
        context.logger.error("%s; routing %d FlowFile(s) to failure", message, len(contents))
        for flowfile in contents:
            session.transfer(session.put_attribute(flowfile, RECORD_ERROR, message), FAILURE)
        session.commit()
