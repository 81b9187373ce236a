"""MapCacheServer and MapCacheClientService over real TCP connections."""

from __future__ import annotations

import socket
import ssl
import threading

import pytest

from engine.components import ControllerService, PropertyDescriptor, default_registry
from engine.services.apis import SSLContextProvider
from engine.services.map_cache_client import MapCacheClientService
from engine.services.map_cache_protocol import CacheServerError, read_frame, write_frame
from engine.services.map_cache_server import MapCache, MapCacheServer
from tests.engine.services.conftest import make_certificate
from tests.servers import free_port


def start(services, **server_properties):
    port = free_port()
    server = services.enable("server", MapCacheServer, {"Port": str(port), **server_properties})
    client = services.enable("client", MapCacheClientService,
                             {"Server Hostname": "127.0.0.1", "Server Port": str(port),
                              "Communications Timeout": "5 secs"})
    return server, client


def test_types_answer_to_nifi_names():
    registry = default_registry()
    assert registry.service("org.apache.nifi.distributed.cache.server.map.MapCacheServer") is MapCacheServer
    assert registry.service("org.apache.nifi.distributed.cache.server.map.DistributedMapCacheServer") is MapCacheServer
    assert registry.service("org.apache.nifi.distributed.cache.client.MapCacheClientService") is MapCacheClientService
    assert (registry.service("org.apache.nifi.distributed.cache.client.DistributedMapCacheClientService")
            is MapCacheClientService)


def test_defaults_match_nifi():
    assert {d.name: d.default for d in MapCacheServer.properties} == {
        "Port": "4557", "Maximum Cache Entries": "10000", "Eviction Strategy": "Least Frequently Used",
        "Persistence Directory": None, "SSL Context Service": None, "maximum-read-size": "1 MB"}
    assert {d.name: d.default for d in MapCacheClientService.properties} == {
        "Server Hostname": None, "Server Port": "4557", "SSL Context Service": None,
        "Communications Timeout": "30 secs"}


def test_each_operation(services):
    server, client = start(services)
    assert server.port is not None
    assert client.get("k") is None
    assert client.contains_key("k") is False
    assert client.put_if_absent("k", b"v1") is True
    assert client.put_if_absent("k", b"v2") is False
    assert client.get("k") == b"v1"
    assert client.get_and_put_if_absent("k", b"v3") == b"v1"
    assert client.get_and_put_if_absent("other", b"o") is None
    assert client.get("other") == b"o"
    client.put("k", b"replaced")
    assert client.get("k") == b"replaced"
    assert client.contains_key("k") is True
    assert client.remove("k") is True
    assert client.remove("k") is False
    assert client.get("k") is None
    client.put("empty", b"")
    assert client.get("empty") == b""
    client.put("ключ", b"\x00\xff")
    assert client.get("ключ") == b"\x00\xff"


def test_put_if_absent_is_atomic_across_threads(services):
    _, client = start(services)
    winners: list[int] = []
    originals: dict[int, bytes | None] = {}
    barrier = threading.Barrier(8)

    def contend(n: int) -> None:
        barrier.wait()
        for round_ in range(50):
            if client.put_if_absent(f"key-{round_}", str(n).encode()):
                winners.append(round_)
            originals[(n, round_)] = client.get_and_put_if_absent(f"shared-{round_}", str(n).encode())

    threads = [threading.Thread(target=contend, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(winners) == list(range(50))
    for round_ in range(50):
        seen = [originals[(n, round_)] for n in range(8)]
        assert seen.count(None) == 1
        stored = client.get(f"shared-{round_}")
        assert all(value == stored for value in seen if value is not None)


@pytest.mark.parametrize(("strategy", "evicted"), [
    ("Least Frequently Used", "b"),   # a read twice, c once, b never
    ("Least Recently Used", "a"),     # a read before c, b written after a was last read
    ("First In, First Out", "a"),     # a written first
])
def test_eviction_strategies(services, strategy, evicted):
    _, client = start(services, **{"Maximum Cache Entries": "3", "Eviction Strategy": strategy})
    client.put("a", b"1")
    assert client.get("a") == b"1"
    assert client.get("a") == b"1"
    client.put("b", b"2")
    client.put("c", b"3")
    assert client.contains_key("c")
    client.put("d", b"4")
    present = {key for key in "abcd" if client.get(key) is not None}
    assert present == set("abcd") - {evicted}


def test_lfu_breaks_ties_by_age_and_replacing_a_key_evicts_nothing():
    cache = MapCache(2, "Least Frequently Used")
    cache.execute("put", b"old", b"1")
    cache.execute("put", b"new", b"2")
    cache.execute("put", b"old", b"1b")  # a rewrite is a new entry, now the youngest
    assert len(cache) == 2
    cache.execute("put", b"third", b"3")
    assert sorted(cache.keys()) == [b"old", b"third"]


def test_eviction_keeps_the_cache_bounded_under_many_reads():
    cache = MapCache(100, "Least Recently Used")
    for n in range(1000):
        cache.execute("put", str(n).encode(), b"x")
        for _ in range(5):
            cache.execute("get", str(n).encode(), None)
    assert len(cache) == 100
    assert sorted(cache.keys(), key=int) == [str(n).encode() for n in range(900, 1000)]
    assert len(cache._heap) <= 2 * 100 + 1024


def test_persistence_survives_a_restart_of_the_service(services, tmp_path):
    directory = tmp_path / "persisted"
    _, client = start(services, **{"Persistence Directory": str(directory)})
    for n in range(20):
        client.put(f"key-{n}", f"value-{n}".encode())
    client.remove("key-3")
    assert client.put_if_absent("key-4", b"no") is False
    services.disable("client")
    services.disable("server")
    assert (directory / "map-cache.snapshot").exists()
    services.reenable("server")
    client = services.reenable("client")
    assert client.get("key-3") is None
    assert client.get("key-4") == b"value-4"
    assert client.get("key-19") == b"value-19"


def test_persisted_journal_is_replayed_after_a_crash(tmp_path):
    directory = tmp_path / "persisted"
    from engine.services.map_cache_server import _Store
    cache = MapCache(10, "First In, First Out", _Store(directory))
    cache.execute("put", b"a", b"1")
    cache.execute("put", b"b", b"2")
    cache.execute("remove", b"a", None)
    # no close(): the process "crashes"; the journal holds the changes
    with open(directory / "map-cache.journal", "ab") as journal:
        journal.write(b"\x00\x00\x00\x10torn")
    reloaded = MapCache(10, "First In, First Out", _Store(directory))
    assert reloaded.keys() == [b"b"]
    assert reloaded.execute("get", b"b", None) == b"2"
    reloaded.close()


def test_persisted_cache_evicts_when_reloaded_with_fewer_entries(tmp_path):
    from engine.services.map_cache_server import _Store
    directory = tmp_path / "persisted"
    cache = MapCache(10, "First In, First Out", _Store(directory))
    for key in (b"a", b"b", b"c"):
        cache.execute("put", key, b"x")
    cache.close()
    smaller = MapCache(2, "First In, First Out", _Store(directory))
    assert sorted(smaller.keys()) == [b"b", b"c"]
    smaller.close()


def test_client_reconnects_after_the_server_restarts(services):
    _, client = start(services)
    client.put("k", b"v")
    services.disable("server")
    with pytest.raises(OSError):
        client.get("k")
    services.reenable("server")
    # the pooled connections died with the old server; the client notices and reconnects
    assert client.get("k") is None
    assert client.put_if_absent("k", b"again") is True


def test_pooled_connections_are_reused_and_survive_a_restart(services):
    _, client = start(services)
    for _ in range(5):
        client.put("k", b"v")
    assert len(client._idle) == 1
    services.disable("server")
    services.reenable("server")
    assert client.get("k") is None


def test_server_down_raises_an_oserror(services):
    port = free_port()
    client = services.enable("client", MapCacheClientService,
                             {"Server Hostname": "127.0.0.1", "Server Port": str(port)})
    with pytest.raises(ConnectionRefusedError):
        client.put("k", b"v")


def test_disabled_client_raises(services):
    _, client = start(services)
    services.disable("client")
    with pytest.raises(ConnectionError, match="disabled"):
        client.get("k")


def test_values_larger_than_the_maximum_read_size_are_refused(services):
    _, client = start(services, **{"maximum-read-size": "10 B"})
    with pytest.raises(CacheServerError, match="Maximum Read Size"):
        client.put("k", b"x" * 11)
    client.put("k", b"x" * 10)
    assert client.get("k") == b"x" * 10


def test_a_stranger_is_refused_at_the_handshake(services):
    server, _ = start(services)
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        write_frame(sock, ["HTTP", [1]])
        assert read_frame(sock, 1024) == ["error", "not a map cache client"]
        assert read_frame(sock, 1024) is None
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        write_frame(sock, ["FSMC", [99]])
        status, message = read_frame(sock, 1024)
        assert status == "error" and "no common protocol version" in message


def test_malformed_requests_get_an_error_and_the_connection_stays_usable(services):
    server, _ = start(services)
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        write_frame(sock, ["FSMC", [1]])
        assert read_frame(sock, 1024) == ["ok", 1]
        write_frame(sock, ["explode", b"k", None])
        assert read_frame(sock, 1024)[0] == "error"
        write_frame(sock, ["put", "text-key", b"v"])
        assert read_frame(sock, 1024)[0] == "error"
        write_frame(sock, ["put", b"k", b"v"])
        assert read_frame(sock, 1024) == ["ok", None]


def test_validation_reports_bad_values(services, tmp_path):
    afile = tmp_path / "file"
    afile.write_text("x")
    problems = services.problems(MapCacheServer, {
        "Port": "70000", "Maximum Cache Entries": "0", "Eviction Strategy": "Random",
        "Persistence Directory": str(afile)})
    assert len(problems) == 4
    assert any("Eviction Strategy" in p and "allowed values" in p for p in problems)
    assert any("Persistence Directory" in p and "not a directory" in p for p in problems)
    assert services.problems(MapCacheClientService, {"Server Port": "4557"}) == ["'Server Hostname' is required"]


def test_port_in_use_fails_enabling(services):
    server, _ = start(services)
    with pytest.raises(OSError):
        services.enable("second", MapCacheServer, {"Port": str(server.port)})


class PemSSLContextService(ControllerService, SSLContextProvider):
    """Contexts from one PEM certificate and key (a small stand-in for an SSL context service)."""

    properties = (PropertyDescriptor("Certificate", required=True), PropertyDescriptor("Key", required=True))
    provides = (SSLContextProvider,)

    def on_enabled(self, context, init) -> None:
        self.certificate = context.property("Certificate").value
        self.key = context.property("Key").value

    def create_context(self, server_side: bool = False) -> ssl.SSLContext:
        if server_side:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(self.certificate, self.key)
            return context
        return ssl.create_default_context(cafile=self.certificate)


def test_tls_between_server_and_client(services, tmp_path):
    certificate, key = make_certificate(tmp_path)
    services.enable("tls", PemSSLContextService, {"Certificate": str(certificate), "Key": str(key)})
    port = free_port()
    services.enable("server", MapCacheServer, {"Port": str(port), "SSL Context Service": "tls"})
    client = services.enable("client", MapCacheClientService, {
        "Server Hostname": "localhost", "Server Port": str(port), "SSL Context Service": "tls",
        "Communications Timeout": "5 secs"})
    assert client.put_if_absent("k", b"secret") is True
    assert client.get("k") == b"secret"
    plain = services.enable("plain", MapCacheClientService, {
        "Server Hostname": "localhost", "Server Port": str(port), "Communications Timeout": "2 secs"})
    with pytest.raises(OSError):
        plain.get("k")
