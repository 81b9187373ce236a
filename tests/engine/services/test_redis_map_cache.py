"""RedisConnectionPoolService and RedisDistributedMapCacheClientService against a real redis-server."""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import threading
import time

import pytest
import redis

from engine.components import default_registry
from engine.services.apis import DistributedMapCacheClient, RedisConnectionPool
from engine.services.redis_connection_pool import RedisConnectionPoolService
from engine.services.redis_map_cache_client import (
    _GET_AND_PUT_IF_ABSENT,
    RedisDistributedMapCacheClientService,
)
from tests.servers import RedisServer, free_port


def enable(services, address, ttl="0 secs", **pool_properties):
    pool = services.enable("pool", RedisConnectionPoolService, {"Connection String": address, **pool_properties})
    client = services.enable("cache", RedisDistributedMapCacheClientService,
                             {"redis-connection-pool": "pool", "redis-cache-ttl": ttl})
    return pool, client


def raw(server, db=0, **kwargs) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=server.port, db=db, **kwargs)


def test_types_answer_to_nifi_names_and_provide_their_apis():
    registry = default_registry()
    assert registry.service("org.apache.nifi.redis.service.RedisConnectionPoolService") is RedisConnectionPoolService
    assert (registry.service("org.apache.nifi.redis.service.RedisDistributedMapCacheClientService")
            is RedisDistributedMapCacheClientService)
    assert RedisConnectionPoolService.provides == (RedisConnectionPool,)
    assert RedisDistributedMapCacheClientService.provides == (DistributedMapCacheClient,)


def test_each_operation(services, redis_server):
    pool, client = enable(services, redis_server.address)
    assert pool.redis_type == "Standalone"
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
    client.put("ключ", b"\x00\xff")
    assert raw(redis_server).get("ключ".encode()) == b"\x00\xff"
    assert raw(redis_server).ttl("other") == -1  # no TTL: entries live forever


def test_get_and_put_if_absent_is_atomic_across_threads(services, redis_server):
    _, client = enable(services, redis_server.address)
    results: dict[tuple[int, int], bytes | None] = {}
    barrier = threading.Barrier(8)

    def contend(n: int) -> None:
        barrier.wait()
        for round_ in range(30):
            results[(n, round_)] = client.get_and_put_if_absent(f"key-{round_}", str(n).encode())

    threads = [threading.Thread(target=contend, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for round_ in range(30):
        seen = [results[(n, round_)] for n in range(8)]
        assert seen.count(None) == 1
        winner = client.get(f"key-{round_}")
        assert all(value == winner for value in seen if value is not None)


def test_ttl_makes_every_write_expire(services, redis_server):
    _, client = enable(services, redis_server.address, ttl="30 secs")
    client.put("put", b"1")
    assert client.put_if_absent("pia", b"1")
    assert client.get_and_put_if_absent("gapia", b"1") is None
    for key in ("put", "pia", "gapia"):
        assert 29_000 < raw(redis_server).pttl(key) <= 30_000
    raw(redis_server).persist("gapia")
    assert client.get_and_put_if_absent("gapia", b"2") == b"1"
    assert raw(redis_server).pttl("gapia") == -1  # an existing entry is left as it was


def test_entries_expire_after_the_ttl(services, redis_server):
    _, client = enable(services, redis_server.address, ttl="200 millis")
    client.put("k", b"v")
    assert client.contains_key("k")
    time.sleep(0.4)
    assert client.contains_key("k") is False
    assert client.get_and_put_if_absent("k", b"again") is None


def test_the_script_works_when_redis_has_not_seen_it(services, redis_server):
    _, client = enable(services, redis_server.address)
    assert client.get_and_put_if_absent("a", b"1") is None
    raw(redis_server).script_flush()
    assert client.get_and_put_if_absent("a", b"2") == b"1"
    assert raw(redis_server).script_exists(redis.Redis().register_script(_GET_AND_PUT_IF_ABSENT).sha) == [True]


def test_database_index_selects_the_database(services, redis_server):
    _, client = enable(services, redis_server.address, **{"Database Index": "3"})
    client.put("k", b"v")
    assert raw(redis_server, db=3).get("k") == b"v"
    assert raw(redis_server, db=0).get("k") is None


def test_password_authentication(services, tmp_path):
    if shutil.which("redis-server") is None:
        pytest.skip("the redis-server binary is not installed")
    server = RedisServer(tmp_path / "auth")
    server.start("--requirepass", "s3cret", "--user", "alice", "on", ">alicepw", "~*", "&*", "+@all")
    try:
        _, client = enable(services, server.address, Password="s3cret")
        client.put("k", b"v")
        assert client.get("k") == b"v"
        services.close()
        _, client = enable(services, server.address, Username="alice", Password="alicepw")
        assert client.get("k") == b"v"
        services.close()
        _, client = enable(services, server.address, Password="wrong")
        with pytest.raises(ConnectionError):
            client.get("k")
    finally:
        server.stop()


def test_errors_while_redis_is_down_and_recovery_after_it_restarts(services, redis_server):
    _, client = enable(services, redis_server.address, **{"Communication Timeout": "2 secs"})
    client.put("k", b"v")
    redis_server.stop()
    with pytest.raises(ConnectionError):
        client.get("k")
    with pytest.raises(OSError):
        client.put_if_absent("k", b"v")
    redis_server.start()
    assert client.get("k") is None  # the data went with the server (no persistence)
    assert client.put_if_absent("k", b"v") is True


def test_a_key_of_another_type_raises_an_oserror(services, redis_server):
    _, client = enable(services, redis_server.address)
    raw(redis_server).lpush("list", "x")
    with pytest.raises(OSError, match="WRONGTYPE"):
        client.get("list")
    with pytest.raises(OSError, match="WRONGTYPE"):
        client.get_and_put_if_absent("list", b"v")


def test_pool_limits_block_then_fail(services, redis_server):
    pool, client = enable(services, redis_server.address, **{
        "Pool - Max Total": "1", "Pool - Max Wait Time": "300 millis"})
    held = pool.client().connection_pool.get_connection()
    started = time.monotonic()
    with pytest.raises(ConnectionError):
        client.get("k")
    assert time.monotonic() - started >= 0.25
    pool.client().connection_pool.release(held)
    assert client.get("k") is None


def test_pool_without_blocking_fails_at_once(services, redis_server):
    pool, client = enable(services, redis_server.address, **{
        "Pool - Max Total": "1", "Pool - Block When Exhausted": "false", "Pool - Max Wait Time": "5 secs"})
    held = pool.client().connection_pool.get_connection()
    started = time.monotonic()
    with pytest.raises(ConnectionError, match="Too many connections"):
        client.get("k")
    assert time.monotonic() - started < 1
    pool.client().connection_pool.release(held)


def test_test_on_borrow_pings_before_use(services, redis_server):
    pool, client = enable(services, redis_server.address, **{"Pool - Test On Borrow": "true"})
    client.put("k", b"v")
    assert pool.client().connection_pool.connection_kwargs["health_check_interval"] > 0
    before = raw(redis_server).info("commandstats").get("cmdstat_ping", {}).get("calls", 0)
    time.sleep(0.01)
    client.get("k")
    after = raw(redis_server).info("commandstats").get("cmdstat_ping", {}).get("calls", 0)
    assert after > before


def test_disabled_services_raise(services, redis_server):
    pool, client = enable(services, redis_server.address)
    services.disable("cache")
    with pytest.raises(ConnectionError, match="disabled"):
        client.get("k")
    services.disable("pool")
    with pytest.raises(redis.ConnectionError, match="disabled"):
        pool.client()


def test_sentinel_mode_finds_the_master(services, redis_server, tmp_path):
    sentinel_port = free_port()
    config = tmp_path / "sentinel.conf"
    config.write_text(f"port {sentinel_port}\nbind 127.0.0.1\ndir {tmp_path}\n"
                      f"sentinel monitor main 127.0.0.1 {redis_server.port} 1\n")
    sentinel = subprocess.Popen(["redis-server", str(config), "--sentinel"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        probe = redis.Redis(host="127.0.0.1", port=sentinel_port)
        while True:
            try:
                if probe.execute_command("SENTINEL", "get-master-addr-by-name", "main"):
                    break
            except redis.ConnectionError:
                pass
            assert time.monotonic() < deadline, "the sentinel did not start"
            time.sleep(0.05)
        pool, client = enable(services, f"127.0.0.1:{sentinel_port}", **{
            "Redis Mode": "Sentinel", "Sentinel Master": "main"})
        assert pool.redis_type == "Sentinel"
        client.put("k", b"through the sentinel")
        assert raw(redis_server).get("k") == b"through the sentinel"
    finally:
        sentinel.terminate()
        sentinel.wait(timeout=10)


def test_validation_reports_bad_configurations(services):
    assert any("must be host:port in Standalone mode" in p
               for p in services.problems(RedisConnectionPoolService, {"Connection String": "localhost"}))
    assert any("must be host:port in Standalone mode" in p
               for p in services.problems(RedisConnectionPoolService, {"Connection String": "a:1,b:2"}))
    sentinel = services.problems(RedisConnectionPoolService, {"Connection String": "a:1,b", "Redis Mode": "Sentinel"})
    assert any("host:port,host:port" in p for p in sentinel)
    assert any("'Sentinel Master' is required" in p for p in sentinel)
    cluster = services.problems(RedisConnectionPoolService, {"Connection String": "a:1,b", "Redis Mode": "Cluster",
                                                             "Database Index": "2"})
    assert any("host:port,host:port" in p for p in cluster)
    assert any("'Database Index' must be 0 in Cluster mode" in p for p in cluster)
    assert any("not one of the allowed values" in p for p in services.problems(
        RedisConnectionPoolService, {"Connection String": "a:1", "Redis Mode": "Replicated"}))
    assert any("must not be 0" in p for p in services.problems(
        RedisConnectionPoolService, {"Connection String": "a:1", "Pool - Max Total": "0"}))
    assert any("is not a property" in p for p in services.problems(
        RedisConnectionPoolService, {"Connection String": "a:1", "SSL Context Service": "ssl"}))
    assert services.problems(RedisConnectionPoolService, {"Connection String": "a:1", "SSL Context Service": None}) == []
    assert services.problems(RedisDistributedMapCacheClientService, {"redis-connection-pool": "nothing"}) == [
        "'redis-connection-pool' references controller service 'nothing', which does not exist"]


def test_nifi_flow_properties_with_every_default_are_valid(services):
    defaults = {d.name: d.default for d in RedisConnectionPoolService.properties}
    defaults["Connection String"] = "localhost:6379"
    assert services.problems(RedisConnectionPoolService, defaults) == []


def cluster_port() -> int:
    """A free port whose cluster bus port (the port + 10000) is free and valid too."""
    for port in random.sample(range(20000, 30000), 200):
        try:
            for candidate in (port, port + 10000):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


@pytest.fixture
def redis_cluster(tmp_path):
    """Three redis-server masters joined into a Redis Cluster."""
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        pytest.skip("redis-server or redis-cli is not installed (apt-get install redis-server)")
    nodes = [RedisServer(tmp_path / f"node-{n}", cluster_port()) for n in range(3)]
    try:
        for node in nodes:
            node.start("--cluster-enabled", "yes", "--cluster-config-file", str(node.directory / "nodes.conf"),
                       "--cluster-node-timeout", "2000")
        subprocess.run(["redis-cli", "--cluster", "create", *(node.address for node in nodes),
                        "--cluster-replicas", "0", "--cluster-yes"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        deadline = time.monotonic() + 30
        while any(b"cluster_state:ok" not in raw(node).execute_command("CLUSTER", "INFO") for node in nodes):
            assert time.monotonic() < deadline, "the cluster did not form"
            time.sleep(0.1)
        yield nodes
    finally:
        for node in nodes:
            node.stop()


def test_cluster_mode_spreads_keys_over_the_masters(services, redis_cluster):
    pool, client = enable(services, ",".join(node.address for node in redis_cluster[:2]), ttl="1 min",
                          **{"Redis Mode": "Cluster"})
    assert pool.redis_type == "Cluster"
    keys = [f"key-{n}" for n in range(30)]
    for key in keys:
        assert client.get_and_put_if_absent(key, key.encode()) is None
        assert client.put_if_absent(key, b"other") is False
    assert all(client.get(key) == key.encode() for key in keys)
    assert sum(raw(node).dbsize() for node in redis_cluster) == 30
    assert all(raw(node).dbsize() > 0 for node in redis_cluster)
    assert client.remove("key-0") and not client.contains_key("key-0")
    assert pool.client().RedisClusterRequestTTL == 5


def test_cluster_mode_enables_while_the_cluster_is_down(services):
    port = free_port()
    _, client = enable(services, f"127.0.0.1:{port}", **{"Redis Mode": "Cluster", "Communication Timeout": "1 sec"})
    with pytest.raises(ConnectionError, match="Redis Cluster"):
        client.get("k")
