"""ConvertRecord: rewrites each FlowFile's records from the Record Reader's format to the Record
Writer's, streaming (no Spark: the records pass through unchanged)."""

from __future__ import annotations

from engine.components import InputRequirement, Relationship, WrittenAttribute
from engine.processors._records import (
    INCLUDE_ZERO_RECORDS,
    RECORD_ERROR,
    RECORD_READER,
    RECORD_WRITER,
    SMALL_CONTENT,
    RecordProcessor,
    error_text,
    take_micro_batch,
    write_many,
)
from engine.session.damaged import DamagedContentError
from engine.session.guard import TaskTerminatedError

SUCCESS = Relationship("success", "FlowFiles whose records were converted")
FAILURE = Relationship("failure", "FlowFiles whose records could not be read or written, unchanged (with "
                       "record.error.message)")

#: FlowFiles converted in one session, and how much content they may hold in all.
_BATCH = 1000
_BATCH_BYTES = 32 << 20


class ConvertRecord(RecordProcessor):
    """Converts records from one format to another: each FlowFile's records are read with the
    Record Reader and written with the Record Writer, whose schema may differ in types (a value
    is converted where it can be, as a double written as a string) and leave fields out.

    The records stream from reader to writer a batch at a time, so a FlowFile of any size is
    converted in bounded memory; small FlowFiles (up to 1 MB) are read and written a thousand at
    a time, which readers and writers that can (CSV) do in one pass. The conversion needs no
    query, so it runs without Spark. The
    FlowFile keeps its identity (a CONTENT_MODIFIED event records the change). One that cannot
    be converted goes to failure unchanged, with record.error.message saying why.
    """

    nifi_type = "org.apache.nifi.processors.standard.ConvertRecord"
    nifi_bundle = {"group": "org.apache.nifi", "artifact": "nifi-standard-nar"}
    tags = ("convert", "record", "generic", "schema", "json", "csv", "avro", "parquet", "log", "logs", "freeform",
            "text")
    properties = (RECORD_READER, RECORD_WRITER, INCLUDE_ZERO_RECORDS)
    migrated_properties = {"record-reader": "Record Reader", "record-writer": "Record Writer",
                           "include-zero-record-flowfiles": "Include Zero Record FlowFiles"}
    relationships = (SUCCESS, FAILURE)
    input_requirement = InputRequirement.REQUIRED
    writes_attributes = (
        WrittenAttribute("mime.type", "The Record Writer's MIME type"),
        WrittenAttribute("record.count", "The number of records in the FlowFile"),
        WrittenAttribute(RECORD_ERROR, "On failure: the error the reader or writer met"),
    )
    see_also = ("QueryRecord", "UpdateRecord")

    def on_scheduled(self, context):
        self.configure_records(context)
        self._include_zero = context.property(INCLUDE_ZERO_RECORDS).as_bool()

    def on_trigger(self, context, session):
        flowfiles = take_micro_batch(session, _BATCH, _BATCH_BYTES)
        self._convert_small(context, session, [flowfile for flowfile in flowfiles if flowfile.size <= SMALL_CONTENT])
        for flowfile in flowfiles:
            if flowfile.size > SMALL_CONTENT:
                self._convert_large(context, session, flowfile)

    def _convert_small(self, context, session, flowfiles) -> None:
        """Small FlowFiles, read all at once and written all at once."""
        contents = [session.read_bytes(flowfile) for flowfile in flowfiles]
        read = self.reader_factory.read_contents(contents, [flowfile.attributes for flowfile in flowfiles])
        by_schema: dict[str, list] = {}
        for flowfile, answer in zip(flowfiles, read):
            if isinstance(answer, Exception):
                self._fail(context, session, flowfile, answer)
            else:
                by_schema.setdefault(answer[0].avro_text, []).append((flowfile, *answer))
        for members in by_schema.values():
            written = write_many(session, self.writer_factory, [flowfile for flowfile, _, _ in members],
                                 [table for _, _, table in members],
                                 [flowfile.attributes for flowfile, _, _ in members], schema=members[0][1])
            for (flowfile, _, _), outcome in zip(members, written):
                if isinstance(outcome, Exception):
                    self._fail(context, session, flowfile, outcome)
                else:
                    self._route(session, *outcome)

    def _convert_large(self, context, session, flowfile) -> None:
        """A large FlowFile, its records streamed from the reader to the writer."""
        attributes = flowfile.attributes
        try:
            with session.read(flowfile) as stream:
                reader = self.reader_factory.create_reader(stream, attributes)
                with reader:
                    converted, result = self.write(session, flowfile, reader.batches(), reader.schema, attributes)
        except (DamagedContentError, TaskTerminatedError):
            raise
        except Exception as error:
            self._fail(context, session, flowfile, error)
            return
        self._route(session, converted, result)

    def _route(self, session, converted, result) -> None:
        if not result.record_count and not self._include_zero:
            session.remove(converted)
        else:
            session.transfer(converted, SUCCESS)

    @staticmethod
    def _fail(context, session, flowfile, error: Exception) -> None:
        message = error_text(error)
        context.logger.error("cannot convert %s: %s; routing it to failure", flowfile.uuid, message)
        session.transfer(session.put_attribute(flowfile, RECORD_ERROR, message), FAILURE)
