"""CSVReader and CSVRecordSetWriter: CSV records as controller services (NiFi's names and properties).

The formats themselves are in ``engine.record.csv_format`` (pyarrow.csv for parsing, Arrow
kernels for writing). What NiFi offers and Flowsite does not:

- one parser and one writer: ``CSV Parser`` and ``CSV Writer`` are accepted, whatever they name;
- reading, line breaks are ``\\n``, ``\\r\\n`` or ``\\r`` whatever ``Record Separator`` says (as
  NiFi's parsers do); empty lines are skipped in every CSV Format; a row with fewer or more
  fields than the header is malformed (NiFi fills the missing ones with nulls);
- duplicate header names are refused (``Allow Duplicate Header Names`` is accepted but has no
  effect), and ``Trim Double Quote`` always behaves as ``true``;
- ``Comment Marker`` drops lines that start with the marker before parsing, so a quoted value
  whose continuation line starts with it is cut.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import BinaryIO

import pyarrow as pa

from engine.components import AllowableValue, ControllerService, ExpressionScope, PropertyDependency, \
    PropertyDescriptor
from engine.components import validators as v
from engine.record.access import (
    AVRO_SCHEMA_ATTRIBUTE,
    INFER_SCHEMA,
    INHERIT_RECORD_SCHEMA,
    MIGRATED_PROPERTIES,
    NO_SCHEMA,
    SCHEMA_TEXT,
    SCHEMA_TEXT_PROPERTY,
    SCHEMA_WRITE_STRATEGY,
    SchemaAccess,
    schema_access_strategy,
    schema_write_attributes,
    schema_write_strategy,
)
from engine.record.api import MalformedRecordError, RecordReader, RecordSetWriter, WriteResult
from engine.record.csv_batch import read_csv_contents
from engine.record.csv_format import DIALECTS, CsvDialect, CsvReader, CsvWriter, split_text
from engine.record.schema import RecordSchema
from engine.record.values import DATE_FORMAT, TIME_FORMAT, TIMESTAMP_FORMAT, TemporalFormats
from engine.services.apis import RecordReaderFactory, RecordSetWriterFactory

__all__ = ["CSVReader", "CSVRecordSetWriter", "unescape"]

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


def unescape(value: str) -> str:
    """Java escapes (``\\t``, ``\\n``, ``\\u0001``...) in a property value, as NiFi reads them."""
    if len(value) <= 1:
        return value
    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] == "u"
                  and len(m.group(1)) == 5 else _ESCAPES.get(m.group(1), m.group(0)), value)


def _single_character(empty_allowed: bool):
    def check(value: str, context) -> str | None:
        if "${" in value:
            return None
        character = unescape(value)
        if character == "" and empty_allowed:
            return None
        if len(character) != 1:
            return "must be a single character (escapes such as \\t are allowed)"
        return None
    return check


CUSTOM = AllowableValue("custom", "Custom Format", "The format of the CSV is configured by using the properties of "
                        "this Controller Service, such as Value Separator")
_FORMATS = (
    CUSTOM,
    AllowableValue("rfc-4180", "RFC 4180", "CSV data follows the RFC 4180 Specification defined at "
                   "https://tools.ietf.org/html/rfc4180"),
    AllowableValue("excel", "Microsoft Excel", "CSV data follows the format used by Microsoft Excel"),
    AllowableValue("tdf", "Tab-Delimited", "CSV data is Tab-Delimited instead of Comma Delimited"),
    AllowableValue("mysql", "MySQL Format", "CSV data follows the format used by MySQL"),
    AllowableValue("informix-unload", "Informix Unload", "The format used by Informix when issuing the UNLOAD TO "
                   "file_name command"),
    AllowableValue("informix-unload-csv", "Informix Unload Escape Disabled", "The format used by Informix when "
                   "issuing the UNLOAD TO file_name command with escaping disabled"),
)
_ONLY_CUSTOM = [PropertyDependency("CSV Format", ("custom",))]
_BOOLEAN = ("true", "false")

CSV_FORMAT = PropertyDescriptor(
    "CSV Format", description="Specifies which \"format\" the CSV data is in, or specifies if custom formatting "
    "should be used.", required=True, default="custom", allowed_values=_FORMATS)
VALUE_SEPARATOR = PropertyDescriptor(
    "Value Separator", description="The character that is used to separate values/fields in a CSV Record.",
    required=True, default=",", expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    validators=[_single_character(False)], depends_on=_ONLY_CUSTOM)
RECORD_SEPARATOR = PropertyDescriptor(
    "Record Separator", description="Specifies the characters to use in order to separate CSV Records (writing; "
    "reading accepts \\n, \\r\\n and \\r).", required=True, default="\\n", validators=[v.NON_EMPTY],
    depends_on=_ONLY_CUSTOM)
FIRST_LINE_IS_HEADER = PropertyDescriptor(
    "Treat First Line as Header", description="Specifies whether or not the first line of CSV should be considered "
    "a Header or a record. With 'Infer Schema' or 'Use String Fields From Header' the first line is always a "
    "header.", required=True, default="false", allowed_values=_BOOLEAN)
IGNORE_CSV_HEADER = PropertyDescriptor(
    "Ignore CSV Header Column Names", description="If the first line of a CSV is a header and a schema is "
    "configured: true maps the columns to the schema's fields by position, ignoring the header's names; false maps "
    "them by the header's names (columns the schema does not name are skipped).", default="false",
    allowed_values=_BOOLEAN)
QUOTE_CHAR = PropertyDescriptor(
    "Quote Character", description="The character that is used to quote values so that escape characters do not "
    "have to be used.", required=True, default='"', expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    validators=[_single_character(False)], depends_on=_ONLY_CUSTOM)
ESCAPE_CHAR = PropertyDescriptor(
    "Escape Character", description="The character that is used to escape characters that would otherwise have a "
    "specific meaning to the CSV Parser. Setting it to an empty string means no escape character should be used.",
    required=True, default="\\", expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    validators=[_single_character(True)], depends_on=_ONLY_CUSTOM)
COMMENT_MARKER = PropertyDescriptor(
    "Comment Marker", description="The character that is used to denote the start of a comment. Any line that "
    "begins with this comment will be ignored.", expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    validators=[_single_character(False)], depends_on=_ONLY_CUSTOM)
NULL_STRING = PropertyDescriptor(
    "Null String", description="Specifies a String that, if present as a value in the CSV, should be considered a "
    "null field instead of using the literal value (and that writers write for null values).",
    validators=[v.NON_EMPTY], depends_on=_ONLY_CUSTOM)
TRIM_FIELDS = PropertyDescriptor(
    "Trim Fields", description="Whether or not white space should be removed from the beginning and end of fields.",
    required=True, default="true", allowed_values=_BOOLEAN, depends_on=_ONLY_CUSTOM)
CHARSET = PropertyDescriptor(
    "Character Set", description="The Character Encoding that is used to encode/decode the CSV file",
    required=True, default="UTF-8", validators=[v.CHARACTER_SET])
ALLOW_DUPLICATE_HEADER_NAMES = PropertyDescriptor(
    "Allow Duplicate Header Names", description="Accepted for compatibility: a header that names a column twice is "
    "refused whatever this says.", default="true", allowed_values=_BOOLEAN, depends_on=_ONLY_CUSTOM)
CSV_PARSER = PropertyDescriptor(
    "CSV Parser", description="Accepted for compatibility: Flowsite parses with Apache Arrow whatever this names.",
    required=True, default="commons-csv", allowed_values=(
        AllowableValue("commons-csv", "Apache Commons CSV"), AllowableValue("jackson-csv", "Jackson CSV"),
        AllowableValue("fast-csv", "FastCSV")))
TRIM_DOUBLE_QUOTE = PropertyDescriptor(
    "Trim Double Quote", description="Accepted for compatibility: the quotes around a quoted value are always "
    "removed.", required=True, default="true", allowed_values=_BOOLEAN,
    depends_on=[PropertyDependency("CSV Format", ("rfc-4180",))])
_QUOTE_MODES = (
    AllowableValue("ALL", "Quote All Values", "All values will be quoted using the configured quote character."),
    AllowableValue("MINIMAL", "Quote Minimal", "Values will be quoted only if they are contain special characters "
                   "such as newline characters or field separators."),
    AllowableValue("NON_NUMERIC", "Quote Non-Numeric Values", "Values will be quoted unless the value is a number."),
    AllowableValue("NONE", "Do Not Quote Values", "Values will not be quoted. Instead, all special characters will "
                   "be escaped using the configured escape character."),
)
QUOTE_MODE = PropertyDescriptor(
    "Quote Mode", description="Specifies how fields should be quoted when they are written", required=True,
    default="MINIMAL", allowed_values=_QUOTE_MODES, depends_on=_ONLY_CUSTOM)
TRAILING_DELIMITER = PropertyDescriptor(
    "Include Trailing Delimiter", description="If true, a trailing delimiter will be added to each CSV Record that "
    "is written. If false, the trailing delimiter will be omitted.", required=True, default="false",
    allowed_values=_BOOLEAN, depends_on=_ONLY_CUSTOM)
INCLUDE_HEADER_LINE = PropertyDescriptor(
    "Include Header Line", description="Specifies whether or not the CSV column names should be written out as the "
    "first line.", required=True, default="true", allowed_values=_BOOLEAN)
CSV_WRITER = PropertyDescriptor(
    "CSV Writer", description="Accepted for compatibility: Flowsite writes with Apache Arrow whatever this names.",
    required=True, default="commons-csv", allowed_values=(
        AllowableValue("commons-csv", "Apache Commons CSV"), AllowableValue("fast-csv", "FastCSV")))

HEADER_DERIVED = AllowableValue(
    "csv-header-derived", "Use String Fields From Header", "The first non-comment line of the CSV file is a header "
    "line that contains the names of the columns. The schema will be derived by using the column names in the "
    "header and assuming that all columns are of type String.")

_MIGRATED = {**MIGRATED_PROPERTIES, "Skip Header Line": "Treat First Line as Header",
             "ignore-csv-header": "Ignore CSV Header Column Names", "csvutils-character-set": "Character Set",
             "csvutils-allow-duplicate-header-names": "Allow Duplicate Header Names"}


def _dialects(context, attributes: Sequence[Mapping[str, str]], with_quote_mode: bool) -> list[CsvDialect | None]:
    """``_dialect`` for each FlowFile's attributes (worked out once when no property refers to
    attributes), None where it cannot be had (a ``create_reader``/``create_writer`` then says why)."""
    def one(attrs: Mapping[str, str]) -> CsvDialect | None:
        try:
            return _dialect(context, attrs, with_quote_mode)
        except Exception:
            return None

    if not any("${" in (context.property(descriptor).value or "")
               for descriptor in (VALUE_SEPARATOR, QUOTE_CHAR, ESCAPE_CHAR, COMMENT_MARKER)):
        return [one({})] * len(attributes)
    return [one(attrs) for attrs in attributes]


def _dialect(context, attributes: Mapping[str, str], with_quote_mode: bool) -> CsvDialect:
    """The CSV dialect the properties describe, their expressions evaluated for ``attributes``."""
    preset = DIALECTS[context.property(CSV_FORMAT).value or "custom"]
    if (context.property(CSV_FORMAT).value or "custom") != "custom":
        return preset

    def char(descriptor: PropertyDescriptor) -> str | None:
        raw = context.property(descriptor).evaluate(attributes=attributes).value
        value = unescape(raw) if raw is not None else None
        return value if value else None

    separator = char(VALUE_SEPARATOR)
    quote = char(QUOTE_CHAR)
    if separator is None or len(separator) != 1:  # an expression that evaluated to nothing usable
        separator = ","
    if quote is not None and len(quote) != 1:
        quote = '"'
    null = context.property(NULL_STRING).value
    return replace(preset, delimiter=separator, quote=quote, escape=char(ESCAPE_CHAR), comment=char(COMMENT_MARKER),
                   null_string=unescape(null) if null is not None else None,
                   trim=context.property(TRIM_FIELDS).as_bool() is not False,
                   record_separator=unescape(context.property(RECORD_SEPARATOR).value or "\\n"),
                   quote_mode=(context.property(QUOTE_MODE).value or "MINIMAL") if with_quote_mode else "MINIMAL",
                   trailing_delimiter=bool(context.property(TRAILING_DELIMITER).as_bool()))


class CSVReader(ControllerService, RecordReaderFactory):
    """Parses CSV-formatted data, returning each row in the CSV file as a separate record.

    The schema comes from the header (inferred types, or every column a string) or from an Avro
    schema (Schema Text, by default the ``avro.schema`` attribute). Inference looks at the first
    blocks of the content, until it has 8,192 records (NiFi reads the whole content); a later
    value that does not fit the inferred type is reported as malformed. Content of any size is
    read in bounded memory, a block of 512 KB at a time (a longer record is refused).
    """

    nifi_type = "org.apache.nifi.csv.CSVReader"
    tags = ("csv", "parse", "record", "row", "reader", "delimited", "comma", "separated", "values")
    properties = (
        schema_access_strategy((SCHEMA_TEXT_PROPERTY, HEADER_DERIVED, INFER_SCHEMA), INFER_SCHEMA), SCHEMA_TEXT,
        CSV_PARSER, DATE_FORMAT, TIME_FORMAT, TIMESTAMP_FORMAT, CSV_FORMAT, VALUE_SEPARATOR, RECORD_SEPARATOR,
        FIRST_LINE_IS_HEADER, IGNORE_CSV_HEADER, QUOTE_CHAR, ESCAPE_CHAR, COMMENT_MARKER, NULL_STRING, TRIM_FIELDS,
        CHARSET, ALLOW_DUPLICATE_HEADER_NAMES, TRIM_DOUBLE_QUOTE,
    )
    migrated_properties = {**_MIGRATED, "csv-reader-csv-parser": "CSV Parser", "Trim double quote": "Trim Double Quote"}
    provides = (RecordReaderFactory,)

    def __init__(self) -> None:
        self._context = None
        self._access = SchemaAccess("")
        self._formats = TemporalFormats()

    def on_enabled(self, context, init) -> None:
        self._context = context
        self._access = SchemaAccess.from_context(context)
        self._formats = TemporalFormats.from_context(context)
        self._header = bool(context.property(FIRST_LINE_IS_HEADER).as_bool())
        self._ignore_header = bool(context.property(IGNORE_CSV_HEADER).as_bool())
        self._encoding = codecs.lookup(context.property(CHARSET).value or "UTF-8").name

    def on_disabled(self) -> None:
        self._context = None

    def create_reader(self, stream: BinaryIO, attributes: Mapping[str, str]) -> RecordReader:
        if self._context is None:
            raise MalformedRecordError("the CSVReader is not enabled")
        schema = self._access.explicit_schema(attributes)
        return CsvReader(stream, _dialect(self._context, attributes, False), schema=schema,
                               header=self._header, ignore_header_names=self._ignore_header,
                               strings=self._access.strategy == HEADER_DERIVED.value, formats=self._formats,
                               encoding=self._encoding)

    def read_contents(self, contents: Sequence[bytes], attributes: Sequence[Mapping[str, str]]):
        if self._context is None:
            return super().read_contents(contents, attributes)
        dialects = _dialects(self._context, attributes, False)
        schemas = []
        for number, attrs in enumerate(attributes):
            try:
                schemas.append(self._access.explicit_schema(attrs))
            except Exception:  # read alone below, which reports it
                schemas.append(None)
                dialects[number] = None
        together = [None] * len(contents)
        if self._encoding == "utf-8":
            usable = [number for number, dialect in enumerate(dialects) if dialect is not None]
            read = read_csv_contents([contents[n] for n in usable], [dialects[n] for n in usable],
                                     [schemas[n] for n in usable], header=self._header,
                                     ignore_header_names=self._ignore_header,
                                     strings=self._access.strategy == HEADER_DERIVED.value, formats=self._formats)
            for number, answer in zip(usable, read):
                together[number] = answer
        alone = [number for number, answer in enumerate(together) if answer is None]
        for number, answer in zip(alone, super().read_contents([contents[n] for n in alone],
                                                                [attributes[n] for n in alone])):
            together[number] = answer
        return together


class CSVRecordSetWriter(ControllerService, RecordSetWriterFactory):
    """Writes the contents of a RecordSet as CSV data.

    The first line written is the column names (unless 'Include Header Line' is false), even
    when there are no records; every other line is one record. Values are quoted and escaped
    as NiFi (Apache Commons CSV) does for the configured Quote Mode. Numbers are written as
    Java prints them (``2.0``), dates, times and timestamps with the configured formats or in
    ISO form (``2024-01-02``, ``03:04:05``, ``2024-01-02 03:04:05``).
    """

    nifi_type = "org.apache.nifi.csv.CSVRecordSetWriter"
    tags = ("csv", "result", "set", "recordset", "record", "writer", "serializer", "row", "tsv", "tab", "separated",
            "delimited")
    properties = (
        schema_write_strategy((NO_SCHEMA, AVRO_SCHEMA_ATTRIBUTE), NO_SCHEMA),
        schema_access_strategy((INHERIT_RECORD_SCHEMA, SCHEMA_TEXT_PROPERTY), INHERIT_RECORD_SCHEMA), SCHEMA_TEXT,
        DATE_FORMAT, TIME_FORMAT, TIMESTAMP_FORMAT, CSV_FORMAT, CSV_WRITER, VALUE_SEPARATOR, INCLUDE_HEADER_LINE,
        QUOTE_CHAR, ESCAPE_CHAR, COMMENT_MARKER, NULL_STRING, TRIM_FIELDS, QUOTE_MODE, RECORD_SEPARATOR,
        TRAILING_DELIMITER, CHARSET,
    )
    migrated_properties = {**_MIGRATED, "csv-writer": "CSV Writer"}
    provides = (RecordSetWriterFactory,)

    def __init__(self) -> None:
        self._context = None
        self._access = SchemaAccess("")
        self._formats = TemporalFormats()

    def validate(self, context):
        if (context.property(CSV_FORMAT).value or "custom") == "custom" \
                and context.property(QUOTE_MODE).value == "NONE" and not unescape(
                    context.property(ESCAPE_CHAR).value or ""):
            yield "'Quote Mode' 'Do Not Quote Values' needs an 'Escape Character' to escape special characters with"

    def on_enabled(self, context, init) -> None:
        self._context = context
        self._access = SchemaAccess.from_context(context)
        self._formats = TemporalFormats.from_context(context)
        self._write_strategy = context.property(SCHEMA_WRITE_STRATEGY).value
        self._include_header = context.property(INCLUDE_HEADER_LINE).as_bool() is not False
        self._encoding = codecs.lookup(context.property(CHARSET).value or "UTF-8").name

    def on_disabled(self) -> None:
        self._context = None

    @property
    def mime_type(self) -> str:
        return "text/csv"

    def get_schema(self, attributes: Mapping[str, str], read_schema: RecordSchema | None) -> RecordSchema:
        return self._access.writer_schema(attributes, read_schema)

    def create_writer(self, stream: BinaryIO, schema: RecordSchema, attributes: Mapping[str, str]) -> RecordSetWriter:
        if self._context is None:
            raise MalformedRecordError("the CSVRecordSetWriter is not enabled")
        dialect = _dialect(self._context, attributes, True)
        if dialect.quote_mode == "NONE" and not dialect.escape:
            raise MalformedRecordError("'Quote Mode' 'Do Not Quote Values' needs an 'Escape Character'")
        return CsvWriter(stream, schema, dialect, include_header=self._include_header,
                                  formats=self._formats, encoding=self._encoding,
                                  attributes=schema_write_attributes(self._write_strategy, schema))

    def write_contents(self, tables, schema, attributes):
        if self._context is None:
            return super().write_contents(tables, schema, attributes)
        answers: list = [None] * len(tables)
        groups: dict[tuple, list[int]] = {}
        for number, (attrs, dialect) in enumerate(zip(attributes, _dialects(self._context, attributes, True))):
            try:
                key = (dialect, self.get_schema(attrs, schema).avro_text)
            except Exception:  # written alone below, which reports it
                continue
            if dialect is not None:
                groups.setdefault(key, []).append(number)
        for members in groups.values():
            first = attributes[members[0]]
            try:
                writer = self.create_writer(None, self.get_schema(first, schema), first)
                if not writer.utf8:
                    continue
                header = writer.header_text()
                rows = writer.rendered_rows(pa.concat_tables([tables[n] for n in members]))
            except Exception:  # each written alone below, which says whose records are at fault
                continue
            written = writer.finish_attributes()
            counts = [tables[number].num_rows for number in members]
            for number, count, text in zip(members, counts, split_text(rows, counts)):
                answers[number] = (header + text, WriteResult(count, {**written, "record.count": str(count)}))
        alone = [number for number, answer in enumerate(answers) if answer is None]
        for number, answer in zip(alone, super().write_contents([tables[n] for n in alone], schema,
                                                                 [attributes[n] for n in alone])):
            answers[number] = answer
        return answers
