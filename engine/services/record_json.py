"""JsonTreeReader and JsonRecordSetWriter: JSON records as controller services (NiFi's names
and properties).

The formats themselves are in ``engine.record.json_format`` (ijson and pyarrow.json for
reading, orjson for writing). What NiFi offers and Flowsite does not: ``Max String Length``,
``Allow Scientific Notation`` and ``Serialized JSON Input Handling`` are accepted but have no
effect (orjson writes numbers its own way: ``1e+20``); ``Compression Format`` offers none, gzip,
bzip2 and xz-lzma2 (not snappy or zstd); ``Suppress Missing Values`` writes nulls, as Arrow
records do not tell a missing field from a null one; pretty-printed JSON is indented by two
spaces (``"a": 1``, where NiFi's Jackson writes ``"a" : 1``).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Mapping
from typing import BinaryIO

from engine.components import AllowableValue, ControllerService, PropertyDependency, PropertyDescriptor
from engine.components import validators as v
from engine.record.access import (
    AVRO_SCHEMA_ATTRIBUTE,
    INFER_SCHEMA,
    INHERIT_RECORD_SCHEMA,
    MIGRATED_PROPERTIES,
    NO_SCHEMA,
    SCHEMA_ACCESS_STRATEGY,
    SCHEMA_TEXT,
    SCHEMA_TEXT_PROPERTY,
    SCHEMA_WRITE_STRATEGY,
    SchemaAccess,
    schema_access_strategy,
    schema_write_attributes,
    schema_write_strategy,
)
from engine.record.api import MalformedRecordError, RecordReader, RecordSetWriter
from engine.record.json_format import JsonReader, JsonWriter, nested_schema
from engine.record.schema import RecordSchema
from engine.record.values import DATE_FORMAT, TIME_FORMAT, TIMESTAMP_FORMAT, TemporalFormats
from engine.services.apis import RecordReaderFactory, RecordSetWriterFactory

__all__ = ["JsonRecordSetWriter", "JsonTreeReader"]

STARTING_FIELD_STRATEGY = PropertyDescriptor(
    "Starting Field Strategy", description="Start processing from the root node or from a specified nested node.",
    required=True, default="ROOT_NODE", allowed_values=(
        AllowableValue("ROOT_NODE", "Root Node", "Begins processing from the root node."),
        AllowableValue("NESTED_FIELD", "Nested Field", "Skips forward to the given nested field (array or object) "
                       "to begin processing.")))
STARTING_FIELD_NAME = PropertyDescriptor(
    "Starting Field Name", description="Skips forward to the given nested field (array or object) to begin "
    "processing: the first field of that name, at any depth.", validators=[v.NON_EMPTY],
    depends_on=[PropertyDependency("Starting Field Strategy", ("NESTED_FIELD",))])
SCHEMA_APPLICATION_STRATEGY = PropertyDescriptor(
    "Schema Application Strategy", description="Specifies whether the schema is defined for the whole document or "
    "for the selected part starting from \"Starting Field Name\".", required=True, default="SELECTED_PART",
    allowed_values=(AllowableValue("WHOLE_JSON", "Whole JSON", "Applies the schema for the whole JSON."),
                    AllowableValue("SELECTED_PART", "Selected Part", "Applies the schema for the selected part "
                                   "starting from the \"Starting Field Name\".")),
    depends_on=[PropertyDependency("Starting Field Strategy", ("NESTED_FIELD",)),
                PropertyDependency(SCHEMA_ACCESS_STRATEGY, (SCHEMA_TEXT_PROPERTY.value,))])
MAX_STRING_LENGTH = PropertyDescriptor(
    "Max String Length", description="Accepted for compatibility: strings of any length are read.", required=True,
    default="20 MB", validators=[v.DATA_SIZE])
PARSING_STRATEGY = PropertyDescriptor(
    "Parsing Strategy", description="Set the strategy for the level of JSON specification conformity required",
    required=True, default="STANDARD", allowed_values=(
        AllowableValue("STANDARD", "Standard", "Parse JSON per the JSON specification"),
        AllowableValue("LENIENT", "Lenient", "Allow comments in the JSON (/* */ and //)")))

_SUPPRESS = (
    AllowableValue("never-suppress", "Never Suppress", "Fields that are missing (present in the schema but not in the "
                   "record), or that have a value of null, will be written out as a null value"),
    AllowableValue("always-suppress", "Always Suppress", "Fields that are missing (present in the schema but not in "
                   "the record), or that have a value of null, will not be written out"),
    AllowableValue("suppress-missing", "Suppress Missing Values", "When a field has a value of null, it will be "
                   "written out. (Flowsite's records do not tell a missing field from a null one: nulls are written.)"),
)
SUPPRESS_NULLS = PropertyDescriptor(
    "Suppress Null Values", description="Specifies how the writer should handle a null field", required=True,
    default="never-suppress", allowed_values=_SUPPRESS)
PRETTY_PRINT = PropertyDescriptor(
    "Pretty Print JSON", description="Specifies whether or not the JSON should be pretty printed", required=True,
    default="false", allowed_values=("true", "false"))
ALLOW_SCIENTIFIC_NOTATION = PropertyDescriptor(
    "Allow Scientific Notation", description="Accepted for compatibility: numbers are written as orjson writes them.",
    required=True, default="false", allowed_values=("true", "false"))
OUTPUT_GROUPING = PropertyDescriptor(
    "Output Grouping", description="Specifies how the writer should output the JSON records (as an array or one "
    "object per line, e.g.) Note that if 'One Line Per Object' is selected, then Pretty Print JSON must be false.",
    required=True, default="output-array", allowed_values=(
        AllowableValue("output-array", "Array", "Output records as a JSON array"),
        AllowableValue("output-oneline", "One Line Per Object", "Output records with one JSON object per line, "
                       "delimited by a newline character")))
_COMPRESSION = {"none": ("application/json", None), "gzip": ("application/gzip", gzip),
                "bzip2": ("application/x-bzip2", bz2), "xz-lzma2": ("application/x-xz", lzma)}
COMPRESSION_FORMAT = PropertyDescriptor(
    "Compression Format", description="The compression format to use: none, gzip, bzip2 or xz-lzma2.",
    required=True, default="none", allowed_values=tuple(_COMPRESSION))
COMPRESSION_LEVEL = PropertyDescriptor(
    "Compression Level", description="The compression level to use; this is valid only when using GZIP compression. "
    "A lower value results in faster processing but less compression; a value of 0 indicates no compression but "
    "simply archiving", required=True, default="1", allowed_values=tuple(str(n) for n in range(10)),
    depends_on=[PropertyDependency("Compression Format", ("gzip",))])
SERIALIZED_INPUT_HANDLING = PropertyDescriptor(
    "Serialized JSON Input Handling", description="Accepted for compatibility: every record is written from its "
    "values, so the formats and Suppress Null Values always apply.", required=True, default="ENABLED",
    allowed_values=(AllowableValue("ENABLED", "Enabled"), AllowableValue("DISABLED", "Disabled")))
TIMESTAMP_REPRESENTATION = PropertyDescriptor(
    "Timestamp Representation", description="Specifies how Timestamp logical fields are represented in JSON. Date "
    "and Time logical fields are not affected.", required=True, default="AUTO", allowed_values=(
        AllowableValue("AUTO", "Automatic", "Uses the configured Timestamp Format when present, otherwise writes "
                       "epoch milliseconds"),
        AllowableValue("FORMATTED_STRING", "Formatted String", "Writes timestamps as strings using the configured "
                       "Timestamp Format"),
        AllowableValue("EPOCH_MILLISECONDS", "Epoch Milliseconds", "Writes timestamps as integer JSON numbers "
                       "containing milliseconds since the Unix epoch"),
        AllowableValue("EPOCH_SECONDS", "Epoch Seconds", "Writes timestamps as decimal JSON numbers containing seconds "
                       "since the Unix epoch with millisecond precision")))


class JsonTreeReader(ControllerService, RecordReaderFactory):
    """Parses JSON into individual records: a top-level array of objects (each element a
    record), one object, or many objects one after the other such as JSON lines.

    If the schema names a field the JSON lacks, the field is null; fields the schema does not
    name are skipped. Inferred schemas come from the first 8,192 records (NiFi reads the whole
    content); a later value that does not fit is reported as malformed. Arrays are streamed,
    so content of any size is read in bounded memory.
    """

    nifi_type = "org.apache.nifi.json.JsonTreeReader"
    tags = ("json", "tree", "record", "reader", "parser")
    properties = (
        schema_access_strategy((INFER_SCHEMA, SCHEMA_TEXT_PROPERTY), INFER_SCHEMA), SCHEMA_TEXT,
        STARTING_FIELD_STRATEGY, STARTING_FIELD_NAME, SCHEMA_APPLICATION_STRATEGY, MAX_STRING_LENGTH, PARSING_STRATEGY,
        DATE_FORMAT, TIME_FORMAT, TIMESTAMP_FORMAT,
    )
    migrated_properties = {**MIGRATED_PROPERTIES, "starting-field-strategy": "Starting Field Strategy",
                           "starting-field-name": "Starting Field Name",
                           "schema-application-strategy": "Schema Application Strategy"}
    provides = (RecordReaderFactory,)

    def __init__(self) -> None:
        self._enabled = False
        self._access = SchemaAccess("")
        self._formats = TemporalFormats()

    def validate(self, context):
        if context.property(STARTING_FIELD_STRATEGY).value == "NESTED_FIELD" \
                and not context.property(STARTING_FIELD_NAME).value:
            yield "'Starting Field Name' is required when 'Starting Field Strategy' is 'Nested Field'"

    def on_enabled(self, context, init) -> None:
        self._access = SchemaAccess.from_context(context)
        self._formats = TemporalFormats.from_context(context)
        nested = context.property(STARTING_FIELD_STRATEGY).value == "NESTED_FIELD"
        self._starting_field = context.property(STARTING_FIELD_NAME).value if nested else None
        self._whole_schema = nested and context.property(SCHEMA_APPLICATION_STRATEGY).value == "WHOLE_JSON"
        self._lenient = context.property(PARSING_STRATEGY).value == "LENIENT"
        self._enabled = True

    def on_disabled(self) -> None:
        self._enabled = False

    def create_reader(self, stream: BinaryIO, attributes: Mapping[str, str]) -> RecordReader:
        if not self._enabled:
            raise MalformedRecordError("the JsonTreeReader is not enabled")
        schema = self._access.explicit_schema(attributes)
        if schema is not None and self._whole_schema:
            part = nested_schema(schema, self._starting_field)
            if part is None:
                raise MalformedRecordError(f"'Schema Text' has no record field {self._starting_field!r} (the "
                                           f"'Starting Field Name') to apply to the selected part")
            schema = part
        return JsonReader(stream, schema=schema, starting_field=self._starting_field, formats=self._formats,
                                allow_comments=self._lenient)


class JsonRecordSetWriter(ControllerService, RecordSetWriterFactory):
    """Writes the results of a RecordSet as either a JSON Array or one JSON object per line.

    With Array output, even a single record is written as an array with one element (and no
    records as ``[]``). Dates and times are written as text (the configured formats, else ISO);
    timestamps as the Timestamp Representation says (by default epoch milliseconds unless a
    Timestamp Format is set, as NiFi does); decimals as exact JSON numbers.
    """

    nifi_type = "org.apache.nifi.json.JsonRecordSetWriter"
    tags = ("json", "resultset", "writer", "serialize", "record", "recordset", "row")
    properties = (
        schema_write_strategy((NO_SCHEMA, AVRO_SCHEMA_ATTRIBUTE), NO_SCHEMA),
        schema_access_strategy((INHERIT_RECORD_SCHEMA, SCHEMA_TEXT_PROPERTY), INHERIT_RECORD_SCHEMA), SCHEMA_TEXT,
        DATE_FORMAT, TIME_FORMAT, TIMESTAMP_FORMAT, PRETTY_PRINT, SUPPRESS_NULLS, ALLOW_SCIENTIFIC_NOTATION,
        OUTPUT_GROUPING, COMPRESSION_FORMAT, COMPRESSION_LEVEL, SERIALIZED_INPUT_HANDLING, TIMESTAMP_REPRESENTATION,
    )
    migrated_properties = {**MIGRATED_PROPERTIES, "suppress-nulls": "Suppress Null Values",
                           "output-grouping": "Output Grouping", "compression-format": "Compression Format",
                           "compression-level": "Compression Level"}
    provides = (RecordSetWriterFactory,)

    def __init__(self) -> None:
        self._enabled = False
        self._access = SchemaAccess("")
        self._formats = TemporalFormats()
        self._compression = "none"

    def validate(self, context):
        if context.property(PRETTY_PRINT).as_bool() and context.property(OUTPUT_GROUPING).value == "output-oneline":
            yield "'Pretty Print JSON' must be false when 'Output Grouping' is set to 'One Line Per Object'"
        if context.property(TIMESTAMP_REPRESENTATION).value == "FORMATTED_STRING" \
                and not context.property(TIMESTAMP_FORMAT).value:
            yield "'Timestamp Format' must be configured when 'Timestamp Representation' is set to 'Formatted String'"

    def on_enabled(self, context, init) -> None:
        self._access = SchemaAccess.from_context(context)
        self._formats = TemporalFormats.from_context(context)
        self._write_strategy = context.property(SCHEMA_WRITE_STRATEGY).value
        self._one_line = context.property(OUTPUT_GROUPING).value == "output-oneline"
        self._pretty = bool(context.property(PRETTY_PRINT).as_bool())
        self._suppress = context.property(SUPPRESS_NULLS).value == "always-suppress"
        self._timestamps = context.property(TIMESTAMP_REPRESENTATION).value or "AUTO"
        self._compression = context.property(COMPRESSION_FORMAT).value or "none"
        self._level = context.property(COMPRESSION_LEVEL).as_int() or 1
        self._enabled = True

    def on_disabled(self) -> None:
        self._enabled = False

    @property
    def mime_type(self) -> str:
        return _COMPRESSION[self._compression][0]

    def get_schema(self, attributes: Mapping[str, str], read_schema: RecordSchema | None) -> RecordSchema:
        return self._access.writer_schema(attributes, read_schema)

    def create_writer(self, stream: BinaryIO, schema: RecordSchema, attributes: Mapping[str, str]) -> RecordSetWriter:
        if not self._enabled:
            raise MalformedRecordError("the JsonRecordSetWriter is not enabled")
        compressor = None
        if self._compression == "gzip":
            compressor = gzip.GzipFile(fileobj=stream, mode="wb", compresslevel=self._level)
        elif self._compression == "bzip2":
            compressor = bz2.BZ2File(stream, "wb")
        elif self._compression == "xz-lzma2":
            compressor = lzma.LZMAFile(stream, "wb", format=lzma.FORMAT_XZ)
        return JsonWriter(stream, schema, one_line_per_object=self._one_line, pretty=self._pretty,
                          suppress_nulls=self._suppress, formats=self._formats, timestamps=self._timestamps,
                          compressor=compressor, mime_type=self.mime_type,
                          attributes=schema_write_attributes(self._write_strategy, schema))
