"""Service APIs: what processors ask of a controller service, whatever class provides it.

A processor property names one of these classes (``PropertyDescriptor(service=SSLContextProvider)``);
a controller service lists those it implements in ``provides``.
"""

from __future__ import annotations

import io
import ssl
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    import pyarrow as pa

    from engine.record.api import RecordReader, RecordSetWriter, WriteResult
    from engine.record.schema import RecordSchema

__all__ = ["DBCPService", "DistributedMapCacheClient", "RecordReaderFactory", "RecordSetWriterFactory", "RedisConnectionPool",
           "SSLContextProvider"]


class SSLContextProvider(ABC):
    """Gives TLS contexts built from configured key and trust material (NiFi's ``SSLContextProvider``)."""

    nifi_api = "org.apache.nifi.ssl.SSLContextProvider"

    @abstractmethod
    def create_context(self, server_side: bool = False) -> ssl.SSLContext:
        """A new context for a client (or, with ``server_side``, a server) connection."""


class DBCPService(ABC):
    """Pooled connections to a relational database (NiFi's ``DBCPService``). Flowsite's are
    psycopg 3 connections to PostgreSQL."""

    nifi_api = "org.apache.nifi.dbcp.DBCPService"

    @property
    @abstractmethod
    def url(self) -> str:
        """The database's address for provenance and messages (``jdbc:postgresql://host:port/db``, no secrets)."""

    @abstractmethod
    def connection(self) -> AbstractContextManager[Any]:
        """A context manager lending a pooled ``psycopg.Connection`` (in a transaction, not
        autocommit) and taking it back when the block ends. Raises ``OSError`` (a
        ``ConfinementError`` when the tenant may not reach the database, a ``ConnectionError``
        saying why otherwise) when no connection can be had within the Max Wait Time."""


class DistributedMapCacheClient(ABC):
    """A key/value cache shared by the tasks of a node or of a cluster (NiFi's
    ``DistributedMapCacheClient``). Keys are text, values bytes; every method is atomic on the
    cache's side. A method that cannot reach the cache, or that the cache refuses, raises an
    ``OSError`` (``ConnectionError``, ``TimeoutError``, ...), so callers catch that one type."""

    nifi_api = "org.apache.nifi.distributed.cache.client.DistributedMapCacheClient"

    @abstractmethod
    def put_if_absent(self, key: str, value: bytes) -> bool:
        """Store ``value`` under ``key`` unless the key is present; True if stored."""

    @abstractmethod
    def get_and_put_if_absent(self, key: str, value: bytes) -> bytes | None:
        """The value under ``key`` if present; otherwise store ``value`` and return None."""

    @abstractmethod
    def contains_key(self, key: str) -> bool:
        """True when ``key`` is present."""

    @abstractmethod
    def put(self, key: str, value: bytes) -> None:
        """Store ``value`` under ``key``, replacing what was there."""

    @abstractmethod
    def get(self, key: str) -> bytes | None:
        """The value under ``key``, or None."""

    @abstractmethod
    def remove(self, key: str) -> bool:
        """Remove ``key``; True if it was present."""


class RedisConnectionPool(ABC):
    """Connections to a Redis deployment (NiFi's ``RedisConnectionPool``)."""

    nifi_api = "org.apache.nifi.redis.RedisConnectionPool"

    @property
    @abstractmethod
    def redis_type(self) -> str:
        """How Redis is deployed: ``Standalone``, ``Sentinel`` or ``Cluster`` (NiFi's names)."""

    @abstractmethod
    def client(self) -> Any:
        """A redis-py client (``redis.Redis``; ``redis.cluster.RedisCluster`` in Cluster mode) backed
        by the service's connection pool. It is thread-safe and belongs to the service: use it,
        don't close it."""


class RecordReaderFactory(ABC):
    """Makes record readers of one format (NiFi's ``RecordReaderFactory``: CSVReader, JsonTreeReader, ...)."""

    nifi_api = "org.apache.nifi.serialization.RecordReaderFactory"

    @abstractmethod
    def create_reader(self, stream: BinaryIO, attributes: Mapping[str, str]) -> RecordReader:
        """A reader of ``stream`` (a FlowFile's content; seekable) whose schema comes from the
        service's schema access strategy, evaluated against ``attributes``. Raises
        ``engine.record.api.MalformedRecordError`` when the schema cannot be had (an invalid
        schema text, content whose first records cannot be read)."""

    def read_contents(self, contents: Sequence[bytes],
                      attributes: Sequence[Mapping[str, str]]) -> list[tuple[RecordSchema, pa.Table] | Exception]:
        """Many small contents (a micro-batch's), each read whole: its schema and records, or the
        error reading it raised. The answers are ``create_reader``'s; a service that can read
        many contents together faster than one by one (CSVReader) does so."""
        answers: list[tuple[RecordSchema, pa.Table] | Exception] = []
        for content, attrs in zip(contents, attributes):
            try:
                with self.create_reader(io.BytesIO(content), attrs) as reader:
                    answers.append((reader.schema, reader.read_all()))
            except Exception as error:
                answers.append(error)
        return answers


class RecordSetWriterFactory(ABC):
    """Makes record set writers of one format (NiFi's ``RecordSetWriterFactory``)."""

    nifi_api = "org.apache.nifi.serialization.RecordSetWriterFactory"

    @property
    @abstractmethod
    def mime_type(self) -> str:
        """The ``mime.type`` of what the writers write."""

    @abstractmethod
    def get_schema(self, attributes: Mapping[str, str], read_schema: RecordSchema | None) -> RecordSchema:
        """The schema to write with: the records' own (``read_schema``) under Inherit Record Schema,
        else the one the service's schema access strategy names for ``attributes``."""

    @abstractmethod
    def create_writer(self, stream: BinaryIO, schema: RecordSchema, attributes: Mapping[str, str]) -> RecordSetWriter:
        """A writer of records of ``schema`` to ``stream`` (which it does not close)."""

    def write_contents(self, tables: Sequence[pa.Table], schema: RecordSchema,
                       attributes: Sequence[Mapping[str, str]]) -> list[tuple[bytes, WriteResult] | Exception]:
        """Many small outputs (a micro-batch's), each written whole: ``tables`` hold records of
        ``schema`` (their own, what Inherit Record Schema takes), ``attributes`` each output's
        FlowFile's. Gives each output's content and what its writer reported, or the error
        writing it raised; a service that can write many outputs together faster than one by
        one (CSVRecordSetWriter) does so."""
        answers: list[tuple[bytes, WriteResult] | Exception] = []
        for table, attrs in zip(tables, attributes):
            try:
                buffer = io.BytesIO()
                writer = self.create_writer(buffer, self.get_schema(attrs, schema), attrs)
                if table.num_rows:
                    writer.write_batch(table)
                result = writer.finish()
                answers.append((buffer.getvalue(), result))
            except Exception as error:
                answers.append(error)
        return answers
