"""Record formats for the record processors' tests: the reader and writer services of each
format, and how a test writes records in it and reads them back (with the formats' own
libraries, not Flowsite's services)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any, Callable

import fastavro
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from engine.record.schema import RecordSchema

__all__ = ["AVRO", "CSV", "FORMATS", "JSON", "PARQUET", "Format"]


@dataclass(frozen=True)
class Format:
    """One record format: its services and codecs."""

    name: str
    reader: tuple[str, dict[str, str]]
    writer: tuple[str, dict[str, str]]
    encode: Callable[[list[dict[str, Any]]], bytes]
    decode: Callable[[bytes], list[dict[str, Any]]]

    def services(self) -> dict[str, tuple[str, dict[str, str]]]:
        """The ``services`` of a ProcessorTestRunner: ``reader`` and ``writer``."""
        return {"reader": self.reader, "writer": self.writer}

    def __str__(self) -> str:
        return self.name


def _csv_encode(records):
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue().encode()


def _csv_decode(data):
    if not data.strip():
        return []
    return pa_csv.read_csv(io.BytesIO(data)).to_pylist()


def _json_encode(records):
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def _json_decode(data):
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def _avro_encode(records):
    schema = RecordSchema.from_arrow(pa.Table.from_pylist(records).schema)
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema.avro), records)
    return out.getvalue()


def _avro_decode(data):
    return list(fastavro.reader(io.BytesIO(data)))


def _parquet_encode(records):
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(records), out)
    return out.getvalue()


def _parquet_decode(data):
    return pq.read_table(io.BytesIO(data)).to_pylist()


CSV = Format("csv", ("CSVReader", {}), ("CSVRecordSetWriter", {}), _csv_encode, _csv_decode)
JSON = Format("json", ("JsonTreeReader", {}), ("JsonRecordSetWriter", {"Output Grouping": "output-oneline"}),
              _json_encode, _json_decode)
AVRO = Format("avro", ("AvroReader", {}), ("AvroRecordSetWriter", {}), _avro_encode, _avro_decode)
PARQUET = Format("parquet", ("ParquetReader", {}), ("ParquetRecordSetWriter", {}), _parquet_encode, _parquet_decode)
FORMATS = (CSV, JSON, AVRO, PARQUET)
