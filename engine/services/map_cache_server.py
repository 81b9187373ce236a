"""MapCacheServer: a key/value cache served over TCP to MapCacheClientService instances."""

from __future__ import annotations

import heapq
import logging
import socket
import ssl
import struct
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgpack

from engine import fileops
from engine.components import ControllerService, ExpressionScope, PropertyDescriptor
from engine.components import validators as v
from engine.services.apis import SSLContextProvider
from engine.services.map_cache_protocol import (
    MAGIC,
    OPERATIONS,
    VERSIONS,
    read_frame,
    write_frame,
)

__all__ = ["MapCache", "MapCacheServer"]

log = logging.getLogger(__name__)

LFU = "Least Frequently Used"
LRU = "Least Recently Used"
FIFO = "First In, First Out"


@v.node_local
def _directory_usable(value: str, context) -> str | None:
    path = Path(value)
    if path.exists() and not path.is_dir():
        return f"{value!r} exists and is not a directory"
    return None


PORT = PropertyDescriptor(
    "Port", description="The TCP port the server listens on (every interface).", required=True, default="4557",
    validators=[v.PORT])
MAX_CACHE_ENTRIES = PropertyDescriptor(
    "Maximum Cache Entries", description="How many entries the cache holds; adding one more evicts an entry "
    "chosen by the Eviction Strategy.", required=True, default="10000", validators=[v.POSITIVE_INTEGER])
EVICTION_STRATEGY = PropertyDescriptor(
    "Eviction Strategy", description="Which entry makes room for a new one when the cache is full: the one read "
    "least often (ties: the oldest), the one read least recently, or the oldest.", required=True, default=LFU,
    allowed_values=[LFU, LRU, FIFO])
PERSISTENCE_DIRECTORY = PropertyDescriptor(
    "Persistence Directory", description="Where the cache keeps its entries across restarts (created when "
    "missing); without it the cache lives in memory only.", validators=[_directory_usable],
    expression_language=ExpressionScope.ENVIRONMENT)
SSL_CONTEXT_SERVICE = PropertyDescriptor(
    "SSL Context Service", description="When set, clients must connect with TLS, using the server context this "
    "service builds.", service=SSLContextProvider)
MAX_READ_SIZE = PropertyDescriptor(
    "maximum-read-size", display_name="Maximum Read Size", description="The largest key or value a request may "
    "carry; larger requests are refused.", default="1 MB", validators=[v.DATA_SIZE])

#: Frame bytes allowed on top of a key and a value of the maximum size.
_FRAME_OVERHEAD = 64 * 1024
_HANDSHAKE_TIMEOUT = 30.0


class MapCacheServer(ControllerService):
    """Serves a key/value cache over TCP to MapCacheClientService instances on this node or others.

    Enabling the service starts the server on the configured port of every network interface
    (with an SSL Context Service, clients must use TLS); disabling it stops the server and
    closes every client connection (clients reconnect when it is back). Each
    operation is atomic: put-if-absent and get-and-put-if-absent from many clients at once
    never both see the key absent.

    When the cache holds Maximum Cache Entries and a new key arrives, one entry is evicted:
    with 'Least Frequently Used' the one read the fewest times (the oldest among equals), with
    'Least Recently Used' the one read or written longest ago, with 'First In, First Out' the
    one written longest ago. Writing a key anew counts as a new entry.

    With a Persistence Directory every change is appended to a journal there (flushed to the
    operating system, not synced to disk: a process crash loses nothing, a power failure may
    lose the last changes), and the journal is folded into a snapshot, written to a temporary
    file and renamed into place, when the service is enabled, disabled, or the journal grows
    long. Read counts since the last snapshot are not persisted. The protocol is Flowsite's
    own (see ``map_cache_protocol``): NiFi clients cannot talk to this server. In a tenant's
    group the port must be one of the tenant's listen ports and the Persistence Directory in its
    file roots (``engine.confinement``); enabling fails otherwise, saying why.
    """

    nifi_type = "org.apache.nifi.distributed.cache.server.map.MapCacheServer"
    aliases = ("org.apache.nifi.distributed.cache.server.map.DistributedMapCacheServer", "DistributedMapCacheServer")
    tags = ("distributed", "cluster", "map", "cache", "server", "key/value")
    properties = (PORT, MAX_CACHE_ENTRIES, EVICTION_STRATEGY, PERSISTENCE_DIRECTORY, SSL_CONTEXT_SERVICE,
                  MAX_READ_SIZE)
    see_also = ("MapCacheClientService",)

    def __init__(self) -> None:
        self._server: _Server | None = None

    @property
    def port(self) -> int | None:
        """The port the running server listens on (None while disabled)."""
        return self._server.port if self._server is not None else None

    def on_enabled(self, context, init) -> None:
        provider = context.property(SSL_CONTEXT_SERVICE).as_service()
        tls = provider.create_context(server_side=True) if provider is not None else None
        directory = context.property(PERSISTENCE_DIRECTORY).evaluate().value
        init.confinement.check_listen(context.property(PORT).as_int())
        store = _Store(Path(init.confinement.check_path(directory))) if directory else None
        cache = MapCache(context.property(MAX_CACHE_ENTRIES).as_int(), context.property(EVICTION_STRATEGY).value,
                         store)
        try:
            self._server = _Server(cache, context.property(PORT).as_int(), tls,
                                   context.property(MAX_READ_SIZE).as_data_size(), init.name)
        except BaseException:
            cache.close()
            raise

    def on_disabled(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None


# -- the cache ---------------------------------------------------------------------------------

@dataclass
class _Entry:
    value: bytes
    entered: int
    touched: int
    hits: int = 0


_PRIORITIES: dict[str, Callable[[_Entry], tuple[int, ...]]] = {
    LFU: lambda entry: (entry.hits, entry.entered),
    LRU: lambda entry: (entry.touched,),
    FIFO: lambda entry: (entry.entered,),
}


class MapCache:
    """The cache itself: bytes keys to bytes values, bounded, thread-safe, optionally persisted.

    Eviction keeps a heap of (priority, key) pairs; a pair whose priority no longer matches its
    entry is stale and skipped when it surfaces, and the heap is rebuilt when stale pairs pile up.
    """

    def __init__(self, max_entries: int, strategy: str, store: _Store | None = None) -> None:
        self._max = max_entries
        self._priority = _PRIORITIES[strategy]
        self._entries: dict[bytes, _Entry] = {}
        self._heap: list[tuple[tuple[int, ...], bytes]] = []
        self._clock = 0
        self._lock = threading.Lock()
        self._store = store
        if store is not None:
            for key, value, hits, entered, touched in store.load():
                self._clock = max(self._clock, entered, touched)
                self._insert(key, _Entry(value, entered, touched, hits), journal=False)
            for op, key, value in store.replay():
                if op == "put":
                    self._write(key, value, journal=False)
                else:
                    self._entries.pop(key, None)
            store.checkpoint(self._snapshot())

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[bytes]:
        """The keys present (for inspection)."""
        with self._lock:
            return list(self._entries)

    def execute(self, operation: str, key: bytes, value: bytes | None):
        """Run one protocol operation atomically and return its result."""
        with self._lock:
            entry = self._entries.get(key)
            if operation == "get":
                return self._hit(key, entry).value if entry is not None else None
            if operation == "contains_key":
                if entry is None:
                    return False
                self._hit(key, entry)
                return True
            if operation == "put_if_absent":
                if entry is not None:
                    self._hit(key, entry)
                    return False
                self._write(key, value)
                return True
            if operation == "get_and_put_if_absent":
                if entry is not None:
                    return self._hit(key, entry).value
                self._write(key, value)
                return None
            if operation == "put":
                self._write(key, value)
                return None
            if operation == "remove":
                if entry is None:
                    return False
                del self._entries[key]
                self._journal("del", key, None)
                return True
        raise ValueError(f"unknown operation {operation!r}")

    def close(self) -> None:
        """Write a final snapshot (when persisted) and release the files."""
        with self._lock:
            if self._store is not None:
                self._store.checkpoint(self._snapshot())
                self._store.close()
                self._store = None

    def _tick(self) -> int:
        self._clock += 1
        return self._clock

    def _hit(self, key: bytes, entry: _Entry) -> _Entry:
        before = self._priority(entry)
        entry.hits += 1
        entry.touched = self._tick()
        if self._priority(entry) != before:
            self._push(key, entry)
        return entry

    def _write(self, key: bytes, value: bytes, journal: bool = True) -> None:
        now = self._tick()
        self._insert(key, _Entry(value, now, now), journal)
        if journal:
            self._journal("put", key, value)

    def _insert(self, key: bytes, entry: _Entry, journal: bool) -> None:
        if key not in self._entries:
            while len(self._entries) >= self._max:
                self._evict(journal)
        self._entries[key] = entry
        self._push(key, entry)

    def _push(self, key: bytes, entry: _Entry) -> None:
        heapq.heappush(self._heap, (self._priority(entry), key))
        if len(self._heap) > 2 * len(self._entries) + 1024:
            self._heap = [(self._priority(e), k) for k, e in self._entries.items()]
            heapq.heapify(self._heap)

    def _evict(self, journal: bool) -> None:
        while True:
            priority, key = heapq.heappop(self._heap)
            entry = self._entries.get(key)
            if entry is not None and self._priority(entry) == priority:
                del self._entries[key]
                if journal:
                    self._journal("del", key, None)
                return

    def _journal(self, op: str, key: bytes, value: bytes | None) -> None:
        if self._store is None:
            return
        self._store.append(op, key, value)
        if self._store.appended > max(1000, 2 * len(self._entries)):
            self._store.checkpoint(self._snapshot())

    def _snapshot(self) -> list[list]:
        return [[key, e.value, e.hits, e.entered, e.touched] for key, e in self._entries.items()]


# -- persistence -------------------------------------------------------------------------------

_RECORD = struct.Struct(">II")  # length, crc32 of the msgpack body


class _Store:
    """A snapshot file plus a journal of the changes made since it was written."""

    SNAPSHOT = "map-cache.snapshot"
    JOURNAL = "map-cache.journal"

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._journal = None
        self.appended = 0

    def load(self) -> list[list]:
        """The entries of the last snapshot."""
        path = self.directory / self.SNAPSHOT
        if not path.exists():
            return []
        document = msgpack.unpackb(path.read_bytes(), raw=False)
        if document.get("version") != 1:
            raise ValueError(f"{path} has an unknown format version {document.get('version')!r}")
        return document["entries"]

    def replay(self) -> list[tuple[str, bytes, bytes | None]]:
        """The changes journaled after the snapshot, up to the first torn or damaged record."""
        path = self.directory / self.JOURNAL
        if not path.exists():
            return []
        data = path.read_bytes()
        changes, offset = [], 0
        while offset + _RECORD.size <= len(data):
            length, crc = _RECORD.unpack_from(data, offset)
            body = data[offset + _RECORD.size:offset + _RECORD.size + length]
            if len(body) < length or zlib.crc32(body) != crc:
                log.warning("journal %s ends with a damaged record at byte %d; ignoring the rest", path, offset)
                break
            op, key, value = msgpack.unpackb(body, raw=False)
            changes.append((op, key, value))
            offset += _RECORD.size + length
        return changes

    def checkpoint(self, entries: list[list]) -> None:
        """Write a snapshot of ``entries`` atomically, then start an empty journal."""
        fileops.write_atomically(
            self.directory / self.SNAPSHOT, msgpack.packb({"version": 1, "entries": entries}, use_bin_type=True)
        )
        if self._journal is not None:
            self._journal.close()
        self._journal = open(self.directory / self.JOURNAL, "wb")  # noqa: SIM115 - kept open for appends
        self.appended = 0

    def append(self, op: str, key: bytes, value: bytes | None) -> None:
        """Journal one change (flushed to the operating system)."""
        body = msgpack.packb([op, key, value], use_bin_type=True)
        self._journal.write(_RECORD.pack(len(body), zlib.crc32(body)) + body)
        self._journal.flush()
        self.appended += 1

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None


# -- the network server ------------------------------------------------------------------------

class _Server:
    """Accepts connections and serves each on a thread of its own."""

    def __init__(self, cache: MapCache, port: int, tls: ssl.SSLContext | None, max_item: int, name: str) -> None:
        self.cache = cache
        self._tls = tls
        self._max_item = max_item
        self._max_frame = 2 * max_item + _FRAME_OVERHEAD
        if socket.has_dualstack_ipv6():
            self._listener = socket.create_server(("", port), family=socket.AF_INET6, dualstack_ipv6=True)
        else:
            self._listener = socket.create_server(("", port))
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._acceptor = threading.Thread(target=self._accept, name=f"map-cache-server-{name}", daemon=True)
        self._acceptor.start()

    def stop(self) -> None:
        """Stop accepting, close every connection, wait for the handlers, persist the cache."""
        self._stopping.set()
        self._acceptor.join()
        self._listener.close()
        with self._lock:
            connections, threads = list(self._connections), list(self._threads)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in threads:
            thread.join(timeout=5)
        self.cache.close()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                connection, address = self._listener.accept()
            except TimeoutError:
                continue
            except OSError as error:
                if not self._stopping.is_set():
                    log.error("map cache server on port %d stopped accepting: %s", self.port, error)
                return
            thread = threading.Thread(target=self._serve, args=(connection, address), daemon=True,
                                      name=f"map-cache-connection-{address[0]}:{address[1]}")
            with self._lock:
                self._connections.add(connection)
                self._threads.add(thread)
            thread.start()

    def _serve(self, connection: socket.socket, address) -> None:
        raw = connection
        try:
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            connection.settimeout(_HANDSHAKE_TIMEOUT)
            if self._tls is not None:
                connection = self._tls.wrap_socket(connection, server_side=True)
            if not self._handshake(connection):
                return
            connection.settimeout(None)
            while not self._stopping.is_set():
                request = read_frame(connection, self._max_frame)
                if request is None:
                    return
                write_frame(connection, self._answer(request))
        except (OSError, ValueError) as error:
            if not self._stopping.is_set():
                log.debug("map cache connection from %s ended: %s", address, error)
        finally:
            with self._lock:
                self._connections.discard(raw)
                self._threads.discard(threading.current_thread())
            connection.close()

    def _handshake(self, connection: socket.socket) -> bool:
        hello = read_frame(connection, 1024)
        if not (isinstance(hello, list) and len(hello) == 2 and hello[0] == MAGIC and isinstance(hello[1], list)):
            write_frame(connection, ["error", "not a map cache client"])
            return False
        common = [version for version in VERSIONS if version in hello[1]]
        if not common:
            write_frame(connection, ["error", f"no common protocol version; the server speaks {list(VERSIONS)}"])
            return False
        write_frame(connection, ["ok", common[0]])
        return True

    def _answer(self, request) -> list:
        if not (isinstance(request, list) and len(request) == 3 and request[0] in OPERATIONS):
            return ["error", f"malformed request {str(request)[:100]!r}"]
        operation, key, value = request
        if not isinstance(key, bytes) or (OPERATIONS[operation] and not isinstance(value, bytes)):
            return ["error", f"{operation} needs a bytes key{' and value' if OPERATIONS[operation] else ''}"]
        if len(key) > self._max_item or (value is not None and len(value) > self._max_item):
            return ["error", f"the key or value exceeds the Maximum Read Size of {self._max_item} bytes"]
        try:
            return ["ok", self.cache.execute(operation, key, value if OPERATIONS[operation] else None)]
        except OSError as error:
            log.error("map cache could not persist a change: %s", error)
            return ["error", f"the server could not persist the change: {error}"]
