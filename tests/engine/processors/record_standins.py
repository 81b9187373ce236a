"""Stand-ins for the record reader and writer services (JSON lines), used until the real
readers and writers (CSVReader, JsonTreeReader, ...) are merged into this branch."""

from __future__ import annotations

import io

import orjson
import pyarrow as pa
import pyarrow.json as pa_json

from engine.components import ControllerService, PropertyDescriptor
from engine.record.api import MalformedRecordError, RecordReader, RecordSetWriter, WriteResult
from engine.record.schema import RecordSchema
from engine.services.apis import RecordReaderFactory, RecordSetWriterFactory

SCHEMA_TEXT = PropertyDescriptor("Schema Text", description="An Avro schema; unset: inferred")


class _Reader(RecordReader):
    def __init__(self, stream, schema_text):
        data = stream.read()
        explicit = RecordSchema.from_avro(schema_text) if schema_text else None
        options = pa_json.ParseOptions(explicit_schema=explicit.arrow) if explicit else None
        try:
            self._table = (pa_json.read_json(io.BytesIO(data), parse_options=options) if data.strip()
                           else pa.table({}) if explicit is None else explicit.arrow.empty_table())
        except pa.ArrowInvalid as error:
            raise MalformedRecordError(str(error)) from None
        self._schema = explicit or RecordSchema.from_arrow(self._table.schema)

    @property
    def schema(self):
        return self._schema

    def batches(self):
        yield from self._table.cast(self._schema.arrow).to_batches(max_chunksize=8192)


class _Writer(RecordSetWriter):
    def __init__(self, stream, schema):
        self._stream = stream
        self._schema = schema
        self._count = 0

    @property
    def schema(self):
        return self._schema

    def write_batch(self, batch):
        for row in batch.to_pylist():
            self._stream.write(orjson.dumps(row, option=orjson.OPT_NAIVE_UTC) + b"\n")
            self._count += 1

    def finish(self):
        return WriteResult(self._count, {"mime.type": "application/json", "record.count": str(self._count)})


class StandInJsonLinesReader(ControllerService):
    """JSON lines in (stand-in)."""

    provides = (RecordReaderFactory,)
    properties = (SCHEMA_TEXT,)

    def on_enabled(self, context, init):
        self._schema_text = context.property(SCHEMA_TEXT).value

    def create_reader(self, stream, attributes):
        return _Reader(stream, self._schema_text)


class StandInJsonLinesWriter(ControllerService):
    """JSON lines out (stand-in)."""

    provides = (RecordSetWriterFactory,)

    mime_type = "application/json"

    def get_schema(self, attributes, read_schema):
        return read_schema

    def create_writer(self, stream, schema, attributes):
        return _Writer(stream, schema)
