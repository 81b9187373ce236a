"""Service APIs: what processors ask of a controller service, whatever class provides it.

A processor property names one of these classes (``PropertyDescriptor(service=SSLContextProvider)``);
a controller service lists those it implements in ``provides``.
"""

from __future__ import annotations

import ssl
from abc import ABC, abstractmethod

__all__ = ["DistributedMapCacheClient", "SSLContextProvider"]


class SSLContextProvider(ABC):
    """Gives TLS contexts built from configured key and trust material (NiFi's ``SSLContextProvider``)."""

    nifi_api = "org.apache.nifi.ssl.SSLContextProvider"

    @abstractmethod
    def create_context(self, server_side: bool = False) -> ssl.SSLContext:
        """A new context for a client (or, with ``server_side``, a server) connection."""


class DistributedMapCacheClient(ABC):
    """A key/value cache shared by the tasks of a node or of a cluster (NiFi's
    ``DistributedMapCacheClient``). Keys are text, values bytes; every method is atomic on the
    cache's side."""

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
