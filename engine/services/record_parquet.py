"""ParquetReader and ParquetRecordSetWriter: Parquet content as records (NiFi's services of those names)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import BinaryIO

from engine.components import ControllerService, ExpressionScope, PropertyDescriptor
from engine.components import validators as v
from engine.record import access
from engine.record.api import MalformedRecordError, RecordReader, RecordSetWriter
from engine.record.parquet import PARQUET_MIME_TYPE, ParquetOptions, ParquetRecordReader, ParquetRecordWriter
from engine.record.schema import RecordSchema
from engine.services.apis import RecordReaderFactory, RecordSetWriterFactory
from engine.units import parse_data_size

__all__ = ["ParquetReader", "ParquetRecordSetWriter"]


def _accepted(name: str, description: str, default: str | None = "true") -> PropertyDescriptor:
    """A parquet-java (parquet-avro) setting NiFi offers that pyarrow has no use for."""
    return PropertyDescriptor(name, description=f"{description} Accepted for NiFi flows; pyarrow has no such "
                              f"setting, so it has no effect.", required=default is not None, default=default,
                              allowed_values=["true", "false"])


AVRO_READ_COMPATIBILITY = _accepted(
    "Avro Read Compatibility", "parquet-avro's 'parquet.avro.compatible' (how lists are read into Avro).")
AVRO_ADD_LIST_ELEMENT_RECORDS = _accepted(
    "Avro Add List Element Records", "parquet-avro's 'parquet.avro.add-list-element-records'.")
AVRO_WRITE_OLD_LIST_STRUCTURE = _accepted(
    "Avro Write Old List Structure", "parquet-avro's 'parquet.avro.write-old-list-structure' (two-level lists); "
    "pyarrow writes the standard three-level lists, which every Parquet reader reads.")

#: NiFi's Compression Type values (parquet-java's codec names) and pyarrow's for them; None: pyarrow cannot.
COMPRESSIONS = {"UNCOMPRESSED": "none", "SNAPPY": "snappy", "GZIP": "gzip", "LZO": None, "BROTLI": "brotli",
                "LZ4": "lz4", "ZSTD": "zstd", "LZ4_RAW": "lz4"}
COMPRESSION_TYPE = PropertyDescriptor(
    "Compression Type", description="How the pages are compressed. LZ4 and LZ4_RAW both write the Parquet "
    "format's LZ4_RAW codec (pyarrow writes no other LZ4); LZO cannot be written (pyarrow has no LZO).",
    required=True, default="UNCOMPRESSED", allowed_values=list(COMPRESSIONS))


def _size(name: str, description: str) -> PropertyDescriptor:
    return PropertyDescriptor(name, description=description, validators=[v.DATA_SIZE],
                              expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)


ROW_GROUP_SIZE = _size(
    "Row Group Size", "How much data each row group holds, measured as Arrow data before encoding, e.g. '64 MB'. "
    "The writer holds a row group and its encoding in memory, about twice this size; unset: 32 MB (NiFi's "
    "parquet-java default of 128 MB counts encoded bytes and would hold some 250 MB here).")
PAGE_SIZE = _size("Page Size", "The size of a data page, e.g. '1 MB' (unset: pyarrow's 1 MB).")
DICTIONARY_PAGE_SIZE = _size(
    "Dictionary Page Size", "The most a column chunk's dictionary page holds before the column falls back to plain "
    "encoding (unset: pyarrow's 1 MB).")
MAX_PADDING_SIZE = _size(
    "Max Padding Size", "Padding that aligns row groups with the blocks of a block file system such as HDFS. "
    "Accepted for NiFi flows; pyarrow does not pad, so it has no effect.")
ENABLE_DICTIONARY_ENCODING = PropertyDescriptor(
    "Enable Dictionary Encoding", description="Whether columns are dictionary-encoded (unset: they are).",
    allowed_values=["true", "false"])
ENABLE_VALIDATION = PropertyDescriptor(
    "Enable Validation", description="parquet-java's schema validation of each record. Accepted for NiFi flows; "
    "records are always checked against the schema here (a value that does not fit fails the write).",
    allowed_values=["true", "false"])
WRITER_VERSION = PropertyDescriptor(
    "Writer Version", description="The data page format: PARQUET_1_0 writes version 1 data pages, PARQUET_2_0 "
    "version 2 (unset: version 1).", allowed_values=["PARQUET_1_0", "PARQUET_2_0"])
INT96_FIELDS = PropertyDescriptor(
    "INT96 Fields", description="Fields to write as INT96 timestamps. Not available: pyarrow writes INT96 for all "
    "timestamps or none, so a flow setting this is reported invalid.", validators=[v.NON_EMPTY])
CACHE_SIZE = PropertyDescriptor(
    "Cache Size", description="Accepted for NiFi flows (the Java writer caches parsed schemas); schemas need no "
    "parsing here.", required=True, default="1000", validators=[v.NON_NEGATIVE_INTEGER])
WRITER_SCHEMA_ACCESS = access.schema_access_strategy(
    [access.INHERIT_RECORD_SCHEMA, access.SCHEMA_TEXT_PROPERTY], access.INHERIT_RECORD_SCHEMA)
SCHEMA_WRITE_STRATEGY = access.schema_write_strategy()

_OLD_NAMES = {"avro-read-compatibility": AVRO_READ_COMPATIBILITY.name,
              "avro-add-list-element-records": AVRO_ADD_LIST_ELEMENT_RECORDS.name}


class ParquetReader(ControllerService, RecordReaderFactory):
    """Reads Parquet content as records, with the schema of the Parquet file itself.

    The schema is the Avro schema the file keeps under ``parquet.avro.schema`` (NiFi's and
    Flowsite's writers store it) when it describes the file's columns, so record names, enums
    and unions come back; otherwise the columns' own types (Arrow's view of the Parquet types).
    The footer is read first, then one row group at a time in batches, its column chunks
    through 1 MB buffers, so memory holds about one row group's decoded data whatever the
    content's size. Content that is not Parquet, or whose footer or pages are damaged, fails
    with a message naming the row group, its records and its bytes. NiFi's ``record.offset``
    attributes (CalculateParquetOffsets) are not read: the whole file is read.
    """

    nifi_type = "org.apache.nifi.parquet.ParquetReader"
    tags = ("parquet", "parse", "record", "row", "reader")
    properties = (AVRO_READ_COMPATIBILITY, AVRO_ADD_LIST_ELEMENT_RECORDS)
    migrated_properties = _OLD_NAMES
    provides = (RecordReaderFactory,)
    see_also = ("ParquetRecordSetWriter",)

    def create_reader(self, stream: BinaryIO, attributes: Mapping[str, str]) -> RecordReader:
        return ParquetRecordReader(stream)


class ParquetRecordSetWriter(ControllerService, RecordSetWriterFactory):
    """Writes records as a Parquet file, with the records' own schema (Inherit Record Schema)
    or the Schema Text's.

    Records are gathered into row groups of Row Group Size and each is written when full, then
    the footer at the end: memory holds a row group and its encoding (about twice the Row Group
    Size), whatever the number of records. The file keeps the Arrow schema and, as parquet-avro
    does, the Avro schema (``parquet.avro.schema``), so ParquetReader, pyarrow and Spark read
    back the same types and ParquetReader the same Avro schema. Set 'avro.schema' Attribute
    also puts the Avro schema in the ``avro.schema`` attribute.
    """

    nifi_type = "org.apache.nifi.parquet.ParquetRecordSetWriter"
    tags = ("parquet", "result", "set", "writer", "serializer", "record", "recordset", "row")
    properties = (SCHEMA_WRITE_STRATEGY, WRITER_SCHEMA_ACCESS, access.SCHEMA_TEXT, CACHE_SIZE, COMPRESSION_TYPE,
                  ROW_GROUP_SIZE, PAGE_SIZE, DICTIONARY_PAGE_SIZE, MAX_PADDING_SIZE, ENABLE_DICTIONARY_ENCODING,
                  ENABLE_VALIDATION, WRITER_VERSION, AVRO_WRITE_OLD_LIST_STRUCTURE, AVRO_ADD_LIST_ELEMENT_RECORDS,
                  INT96_FIELDS)
    migrated_properties = {**_OLD_NAMES, **access.MIGRATED_PROPERTIES, "cache-size": CACHE_SIZE.name, "int96-fields": INT96_FIELDS.name,
                           "row-group-size": ROW_GROUP_SIZE.name, "page-size": PAGE_SIZE.name,
                           "dictionary-page-size": DICTIONARY_PAGE_SIZE.name,
                           "max-padding-size": MAX_PADDING_SIZE.name,
                           "enable-dictionary-encoding": ENABLE_DICTIONARY_ENCODING.name,
                           "enable-validation": ENABLE_VALIDATION.name, "writer-version": WRITER_VERSION.name,
                           "avro-write-old-list-structure": AVRO_WRITE_OLD_LIST_STRUCTURE.name}
    provides = (RecordSetWriterFactory,)
    see_also = ("ParquetReader",)

    def __init__(self) -> None:
        self._context = None
        self._access = access.SchemaAccess(access.INHERIT_RECORD_SCHEMA.value)

    @property
    def mime_type(self) -> str:
        return PARQUET_MIME_TYPE

    def validate(self, context):
        if COMPRESSIONS[context.property(COMPRESSION_TYPE).value] is None:
            yield f"'{COMPRESSION_TYPE.name}' LZO cannot be written: pyarrow has no LZO codec"
        if context.property(INT96_FIELDS).is_set():
            yield f"'{INT96_FIELDS.name}' is not available: pyarrow writes INT96 for all timestamps or none"

    def on_enabled(self, context, init) -> None:
        self._context = context
        self._access = access.SchemaAccess.from_context(context)

    def on_disabled(self) -> None:
        self._context = None

    def get_schema(self, attributes: Mapping[str, str], read_schema: RecordSchema | None) -> RecordSchema:
        return self._access.writer_schema(attributes, read_schema)

    def create_writer(self, stream: BinaryIO, schema: RecordSchema, attributes: Mapping[str, str]) -> RecordSetWriter:
        extra = access.schema_write_attributes(self._context.property(SCHEMA_WRITE_STRATEGY).value, schema)
        return ParquetRecordWriter(stream, schema, self._options(attributes), extra)

    def _options(self, attributes: Mapping[str, str]) -> ParquetOptions:
        context = self._context

        def size(descriptor: PropertyDescriptor) -> int | None:
            value = context.property(descriptor).evaluate(attributes=attributes).value
            if not value:
                return None
            try:
                return parse_data_size(value)
            except ValueError:
                raise MalformedRecordError(f"'{descriptor.name}' is {value!r}, not a data size") from None

        dictionary = context.property(ENABLE_DICTIONARY_ENCODING)
        version = context.property(WRITER_VERSION).value
        return ParquetOptions(
            compression=COMPRESSIONS[context.property(COMPRESSION_TYPE).value] or "none",
            row_group_bytes=size(ROW_GROUP_SIZE) or ParquetOptions.row_group_bytes,
            data_page_size=size(PAGE_SIZE), dictionary_pagesize_limit=size(DICTIONARY_PAGE_SIZE),
            use_dictionary=dictionary.as_bool() if dictionary.is_set() else True,
            data_page_version="2.0" if version == "PARQUET_2_0" else "1.0")
