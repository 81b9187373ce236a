"""What a record reader and a record set writer are, whatever the format.

A reader turns a FlowFile's content into Arrow record batches of a known schema, a bounded
number of records at a time, so that content of any size is read in bounded memory. A writer
takes Arrow batches of one schema and writes them as it gets them. Record processors see only
these two classes (their factories are the controller services of ``engine.services.apis``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa

from engine.record.schema import RecordSchema

__all__ = ["MalformedRecordError", "RecordReader", "RecordSetWriter", "WriteResult", "BATCH_RECORDS"]

#: The most records a reader puts in one batch (the memory bound of reading).
BATCH_RECORDS = 8192


class MalformedRecordError(ValueError):
    """The content is not records of the reader's format (or not of the schema): names what and where."""


@dataclass(frozen=True)
class WriteResult:
    """What a finished writer wrote: the record count and the attributes the output gets
    (``mime.type``, ``record.count``, ``avro.schema`` where the writer sets it, ...)."""

    record_count: int
    attributes: dict[str, str] = field(default_factory=dict)


class RecordReader(ABC):
    """Reads the records of one content stream."""

    @property
    @abstractmethod
    def schema(self) -> RecordSchema:
        """The schema of every batch (known before the first batch is read)."""

    @abstractmethod
    def batches(self) -> Iterator[pa.RecordBatch]:
        """The records, at most ``BATCH_RECORDS`` per batch, each batch of ``schema.arrow``.
        Raises MalformedRecordError for content that is not records of the format."""

    def read_all(self) -> pa.Table:
        """Every record as one table (for content known to be small)."""
        return pa.Table.from_batches(list(self.batches()), schema=self.schema.arrow)

    def close(self) -> None:
        """Release what the reader holds (not the stream, which belongs to the caller)."""

    def __enter__(self) -> RecordReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RecordSetWriter(ABC):
    """Writes records of one schema to one output stream."""

    @property
    @abstractmethod
    def schema(self) -> RecordSchema:
        """The schema the records are written with."""

    @abstractmethod
    def write_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Write records; a batch whose columns are in another order or of castable types is cast
        to ``schema``. Raises MalformedRecordError for records that do not fit the schema."""

    @abstractmethod
    def finish(self) -> WriteResult:
        """Write what the format puts at the end (a footer, a closing bracket) and flush; the
        stream stays open. Returns what was written."""
