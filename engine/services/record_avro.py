"""AvroReader and AvroRecordSetWriter: Avro content as records (NiFi's services of those names)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import BinaryIO

from engine.components import AllowableValue, ControllerService, ExpressionScope, PropertyDescriptor
from engine.components import validators as v
from engine.record import _standin_access as access
from engine.record.api import MalformedRecordError, RecordReader, RecordSetWriter
from engine.record.avro import AVRO_MIME_TYPE, AvroRecordReader, AvroRecordWriter, ParsedSchemas
from engine.record.schema import RecordSchema
from engine.services.apis import RecordReaderFactory, RecordSetWriterFactory

__all__ = ["AvroReader", "AvroRecordSetWriter"]

EMBEDDED_AVRO_SCHEMA = AllowableValue(
    "embedded-avro-schema", "Use Embedded Avro Schema",
    "The content is an Avro object container file, whose header holds the schema.")
AVRO_EMBEDDED = AllowableValue(
    "avro-embedded", "Embed Avro Schema",
    "The content is an Avro object container file: a header with the schema, then blocks of records.")

CACHE_SIZE = PropertyDescriptor(
    "Cache Size", description="How many parsed schemas are kept, so content of a schema seen before does not "
    "have it parsed again.", required=True, default="1000", validators=[v.NON_NEGATIVE_INTEGER])
FAST_READER_ENABLED = PropertyDescriptor(
    "Fast Reader Enabled", description="Accepted for NiFi flows: it chooses an implementation of the Java Avro "
    "library; Flowsite's reader (fastavro) is the same either way.", required=True, default="true",
    allowed_values=["true", "false"])
READER_SCHEMA_ACCESS = access.strategy_property(
    [EMBEDDED_AVRO_SCHEMA, access.SCHEMA_TEXT_PROPERTY], EMBEDDED_AVRO_SCHEMA.value)

#: NiFi's codec names and the fastavro codec each writes (NiFi writes xz for LZO).
CODECS = {"BZIP2": "bzip2", "DEFLATE": "deflate", "NONE": "null", "SNAPPY": "snappy", "LZO": "xz"}
COMPRESSION_FORMAT = PropertyDescriptor(
    "Compression Format", description="How the blocks of the Avro file are compressed. LZO writes the xz codec, "
    "as NiFi does. Only with Embed Avro Schema: bare datums are not compressed.", required=True, default="NONE",
    allowed_values=list(CODECS))
ENCODER_POOL_SIZE = PropertyDescriptor(
    "Encoder Pool Size", description="Accepted for NiFi flows (the Java writer pools its encoders); it has no "
    "effect here.", required=True, default="32", validators=[v.POSITIVE_INTEGER],
    expression_language=ExpressionScope.ENVIRONMENT)
WRITER_SCHEMA_ACCESS = access.strategy_property(
    [access.INHERIT_RECORD_SCHEMA, access.SCHEMA_TEXT_PROPERTY], access.INHERIT_RECORD_SCHEMA.value)
SCHEMA_WRITE_STRATEGY = access.write_strategy_property(
    [AVRO_EMBEDDED, access.NO_SCHEMA, access.AVRO_SCHEMA_ATTRIBUTE], AVRO_EMBEDDED.value)

_MIGRATED = {"cache-size": CACHE_SIZE.name}


class AvroReader(ControllerService, RecordReaderFactory):
    """Reads Avro content as records: an Avro object container file, with the schema of its
    header (Use Embedded Avro Schema) or with the schema of the Schema Text property.

    Under Use 'Schema Text' Property the content may also be bare binary datums, one record
    after the other with no header (what AvroRecordSetWriter writes when it does not embed the
    schema); a container file's records are resolved to the Schema Text (Avro schema resolution:
    fields it lacks take their defaults, fields it does not name are dropped). Every codec of the
    Avro specification is read: null, deflate, bzip2, snappy, xz, zstandard, lz4.

    Reading goes block by block, so memory holds one block and one batch of records whatever
    the content's size. Content that is not Avro, or is truncated or damaged, fails with a
    message naming the block, the record and the byte offset where reading stopped.
    """

    nifi_type = "org.apache.nifi.avro.AvroReader"
    tags = ("avro", "parse", "record", "row", "reader")
    properties = (READER_SCHEMA_ACCESS, access.SCHEMA_TEXT, CACHE_SIZE, FAST_READER_ENABLED)
    migrated_properties = _MIGRATED
    provides = (RecordReaderFactory,)
    see_also = ("AvroRecordSetWriter",)

    def __init__(self) -> None:
        self._context = None
        self._embedded = True
        self._schemas = ParsedSchemas(0)

    def on_enabled(self, context, init) -> None:
        self._context = context
        self._embedded = context.property(READER_SCHEMA_ACCESS).value == EMBEDDED_AVRO_SCHEMA.value
        self._schemas = ParsedSchemas(context.property(CACHE_SIZE).as_int())

    def on_disabled(self) -> None:
        self._context = None

    def create_reader(self, stream: BinaryIO, attributes: Mapping[str, str]) -> RecordReader:
        if self._embedded:
            return AvroRecordReader(stream)
        schema = access.schema_from_text(self._context, attributes)
        return AvroRecordReader(stream, schema, self._schemas.get(schema))


class AvroRecordSetWriter(ControllerService, RecordSetWriterFactory):
    """Writes records as Avro: an Avro object container file (Embed Avro Schema, the default),
    or bare binary datums one after the other with no header (Do Not Write Schema; Set
    'avro.schema' Attribute also puts the schema in the ``avro.schema`` attribute).

    The schema is the records' own (Inherit Record Schema) or the Schema Text. A container
    file's blocks (about 16 KB of records each) are compressed with the Compression Format;
    BZIP2, DEFLATE, SNAPPY and LZO (xz, as NiFi writes it) are available. Records are written
    as they come, so memory holds one batch. A record that does not fit the schema (a value out
    of an enum's symbols, a null in a field that takes none) fails naming the record.
    """

    nifi_type = "org.apache.nifi.avro.AvroRecordSetWriter"
    tags = ("avro", "result", "set", "writer", "serializer", "record", "recordset", "row")
    properties = (SCHEMA_WRITE_STRATEGY, WRITER_SCHEMA_ACCESS, access.SCHEMA_TEXT, COMPRESSION_FORMAT, CACHE_SIZE,
                  ENCODER_POOL_SIZE)
    migrated_properties = {**_MIGRATED, "compression-format": COMPRESSION_FORMAT.name,
                           "encoder-pool-size": ENCODER_POOL_SIZE.name}
    provides = (RecordSetWriterFactory,)
    see_also = ("AvroReader",)

    def __init__(self) -> None:
        self._context = None
        self._inherit = True
        self._write_strategy = AVRO_EMBEDDED.value
        self._codec = "null"
        self._schemas = ParsedSchemas(0)

    @property
    def mime_type(self) -> str:
        return AVRO_MIME_TYPE

    def validate(self, context):
        strategy = context.property(SCHEMA_WRITE_STRATEGY).value
        if strategy != AVRO_EMBEDDED.value and context.property(COMPRESSION_FORMAT).value != "NONE":
            yield (f"'{COMPRESSION_FORMAT.name}' must be NONE unless '{SCHEMA_WRITE_STRATEGY.name}' is "
                   f"'{AVRO_EMBEDDED.display_name}': the codec is named in the Avro header")

    def on_enabled(self, context, init) -> None:
        self._context = context
        self._inherit = context.property(WRITER_SCHEMA_ACCESS).value == access.INHERIT_RECORD_SCHEMA.value
        self._write_strategy = context.property(SCHEMA_WRITE_STRATEGY).value
        self._codec = CODECS[context.property(COMPRESSION_FORMAT).value]
        self._schemas = ParsedSchemas(context.property(CACHE_SIZE).as_int())

    def on_disabled(self) -> None:
        self._context = None

    def get_schema(self, attributes: Mapping[str, str], read_schema: RecordSchema | None) -> RecordSchema:
        if not self._inherit:
            return access.schema_from_text(self._context, attributes)
        if read_schema is None:
            raise MalformedRecordError("Inherit Record Schema: there are no records whose schema could be inherited")
        return read_schema

    def create_writer(self, stream: BinaryIO, schema: RecordSchema, attributes: Mapping[str, str]) -> RecordSetWriter:
        extra = {"avro.schema": schema.avro_text} if self._write_strategy == access.AVRO_SCHEMA_ATTRIBUTE.value else {}
        embed = self._write_strategy == AVRO_EMBEDDED.value
        return AvroRecordWriter(stream, schema, self._schemas.get(schema), embed=embed,
                                codec=self._codec if embed else "null", attributes=extra)
