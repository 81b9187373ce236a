"""AvroReader and AvroRecordSetWriter: Avro content as records (NiFi's services of those names)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import BinaryIO

from engine.components import ControllerService, ExpressionScope, PropertyDescriptor
from engine.components import validators as v
from engine.record import access
from engine.record.api import RecordReader, RecordSetWriter
from engine.record.avro import AVRO_MIME_TYPE, AvroRecordReader, AvroRecordWriter, ParsedSchemas
from engine.record.schema import RecordSchema
from engine.services.apis import RecordReaderFactory, RecordSetWriterFactory

__all__ = ["AvroReader", "AvroRecordSetWriter"]

CACHE_SIZE = PropertyDescriptor(
    "Cache Size", description="How many parsed schemas are kept, so content of a schema seen before does not "
    "have it parsed again.", required=True, default="1000", validators=[v.NON_NEGATIVE_INTEGER])
FAST_READER_ENABLED = PropertyDescriptor(
    "Fast Reader Enabled", description="Accepted for NiFi flows: it chooses an implementation of the Java Avro "
    "library; Flowsite's reader (fastavro) is the same either way.", required=True, default="true",
    allowed_values=["true", "false"])
READER_SCHEMA_ACCESS = access.schema_access_strategy(
    [access.EMBEDDED_AVRO_SCHEMA, access.SCHEMA_TEXT_PROPERTY], access.EMBEDDED_AVRO_SCHEMA)

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
WRITER_SCHEMA_ACCESS = access.schema_access_strategy(
    [access.INHERIT_RECORD_SCHEMA, access.SCHEMA_TEXT_PROPERTY], access.INHERIT_RECORD_SCHEMA)
SCHEMA_WRITE_STRATEGY = access.schema_write_strategy(
    [access.AVRO_EMBEDDED, access.NO_SCHEMA, access.AVRO_SCHEMA_ATTRIBUTE], access.AVRO_EMBEDDED)

_MIGRATED = {**access.MIGRATED_PROPERTIES, "cache-size": CACHE_SIZE.name}


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
        self._access = access.SchemaAccess(access.EMBEDDED_AVRO_SCHEMA.value)
        self._schemas = ParsedSchemas(0)

    def on_enabled(self, context, init) -> None:
        self._access = access.SchemaAccess.from_context(context)
        self._schemas = ParsedSchemas(context.property(CACHE_SIZE).as_int())

    def create_reader(self, stream: BinaryIO, attributes: Mapping[str, str]) -> RecordReader:
        schema = self._access.explicit_schema(attributes)
        if schema is None:
            return AvroRecordReader(stream)
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
        self._access = access.SchemaAccess(access.INHERIT_RECORD_SCHEMA.value)
        self._write_strategy = access.AVRO_EMBEDDED.value
        self._codec = "null"
        self._schemas = ParsedSchemas(0)

    @property
    def mime_type(self) -> str:
        return AVRO_MIME_TYPE

    def validate(self, context):
        strategy = context.property(SCHEMA_WRITE_STRATEGY).value
        if strategy != access.AVRO_EMBEDDED.value and context.property(COMPRESSION_FORMAT).value != "NONE":
            yield (f"'{COMPRESSION_FORMAT.name}' must be NONE unless '{SCHEMA_WRITE_STRATEGY.name}' is "
                   f"'{access.AVRO_EMBEDDED.display_name}': the codec is named in the Avro header")

    def on_enabled(self, context, init) -> None:
        self._access = access.SchemaAccess.from_context(context)
        self._write_strategy = context.property(SCHEMA_WRITE_STRATEGY).value
        self._codec = CODECS[context.property(COMPRESSION_FORMAT).value]
        self._schemas = ParsedSchemas(context.property(CACHE_SIZE).as_int())

    def get_schema(self, attributes: Mapping[str, str], read_schema: RecordSchema | None) -> RecordSchema:
        return self._access.writer_schema(attributes, read_schema)

    def create_writer(self, stream: BinaryIO, schema: RecordSchema, attributes: Mapping[str, str]) -> RecordSetWriter:
        extra = access.schema_write_attributes(self._write_strategy, schema)
        embed = self._write_strategy == access.AVRO_EMBEDDED.value
        return AvroRecordWriter(stream, schema, self._schemas.get(schema), embed=embed,
                                codec=self._codec if embed else "null", attributes=extra)
