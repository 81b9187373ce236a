"""ConvertRecord: rewrites each FlowFile's records from the Record Reader's format to the Record
Writer's, streaming (no Spark: the records pass through unchanged)."""

from __future__ import annotations

from engine.components import InputRequirement, Relationship, WrittenAttribute
from engine.processors._records import (
    INCLUDE_ZERO_RECORDS,
    RECORD_ERROR,
    RECORD_READER,
    RECORD_WRITER,
    RecordProcessor,
    error_text,
)
from engine.session.damaged import DamagedContentError
from engine.session.guard import TaskTerminatedError

SUCCESS = Relationship("success", "FlowFiles whose records were converted")
FAILURE = Relationship("failure", "FlowFiles whose records could not be read or written, unchanged (with "
                       "record.error.message)")

_BATCH = 100


class ConvertRecord(RecordProcessor):
    """Converts records from one format to another: each FlowFile's records are read with the
    Record Reader and written with the Record Writer, whose schema may differ in types (a value
    is converted where it can be, as a double written as a string) and leave fields out.

    The records stream from reader to writer a batch at a time, so a FlowFile of any size is
    converted in bounded memory; the conversion needs no query, so it runs without Spark. The
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
        for flowfile in session.get_batch(_BATCH):
            attributes = flowfile.attributes
            try:
                with session.read(flowfile) as stream:
                    reader = self.reader_factory.create_reader(stream, attributes)
                    with reader:
                        converted, result = self.write(session, flowfile, reader.batches(), reader.schema,
                                                       attributes)
            except (DamagedContentError, TaskTerminatedError):
                raise
            except Exception as error:
                message = error_text(error)
                context.logger.error("cannot convert %s: %s; routing it to failure", flowfile.uuid, message)
                session.transfer(session.put_attribute(flowfile, RECORD_ERROR, message), FAILURE)
                continue
            if not result.record_count and not self._include_zero:
                session.remove(converted)
            else:
                session.transfer(converted, SUCCESS)

