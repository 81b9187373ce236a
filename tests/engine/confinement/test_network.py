"""Network confinement with a real loopback HTTP server and a real Redis: each address is checked
before it is connected to; loopback is closed to a tenant unless its allowlist opens it; the
platform's services and metadata addresses are closed to everyone; a tenant listens only on its
ports. Each refusal is a bulletin, and nothing is sent."""

from __future__ import annotations

import socket
import sys

import pytest
import redis

from engine.components import ConfigurationContext, ServiceInitContext
from engine.components.validation import component_descriptors
from engine.confinement import ConfinementError, ConfinementSettings, NodeConfinement
from engine.flow import load_flow
from engine.services.map_cache_client import MapCacheClientService
from engine.services.redis_connection_pool import RedisConnectionPoolService
from engine.testing import ProcessorTestRunner
from tests.engine.httpserver import start_server
from tests.servers import RedisServer, free_port

_connects: list[tuple] = []


def _record(event, args):
    if event == "socket.connect":
        _connects.append(args[1])


sys.addaudithook(_record)


@pytest.fixture
def server():
    started = start_server()
    yield started
    started.close()


@pytest.fixture(scope="module")
def platform_redis(tmp_path_factory):
    started = RedisServer(tmp_path_factory.mktemp("redis"))
    started.start()
    yield started
    started.stop()


@pytest.fixture
def runners(tmp_path, platform_redis):
    made = []

    def make(processor_type, properties, tenant=None, **options):
        settings = ConfinementSettings(platform_addresses=(platform_redis.address,))
        runner = ProcessorTestRunner(processor_type, tmp_path, properties, tenant=tenant, confinement=settings,
                                     **options)
        made.append(runner)
        return runner

    yield make
    for runner in made:
        runner.close()


def invoke(runners, url, tenant=None):
    runner = runners("InvokeHTTP", {"HTTP URL": url, "HTTP Method": "GET"}, tenant=tenant)
    runner.enqueue(b"")
    runner.run()
    return runner


def refused(runner, text):
    (failed,) = runner.output("Failure")
    assert not runner.output("Response")
    assert any(text in message for message in runner.bulletins), runner.bulletins


def test_loopback_is_closed_to_a_tenant(runners, server):
    runner = invoke(runners, server.url("/"), tenant={})
    refused(runner, f"InvokeHTTP[processor-under-test] refused 127.0.0.1:{server.port}: 127.0.0.1 is this machine, "
                    f"which tenant acme's network allowlist does not open")
    assert server.requests == []


def test_loopback_is_open_to_the_operator(runners, server):
    runner = invoke(runners, server.url("/"))
    assert runner.output("Response") and len(server.requests) == 1


def test_the_allowlist_opens_a_host_and_port(runners, server):
    runner = invoke(runners, server.url("/"), tenant={"network": {"allow": [f"127.0.0.1:{server.port}"]}})
    assert runner.output("Response") and len(server.requests) == 1
    other = free_port()
    closed = invoke(runners, f"http://127.0.0.1:{other}/", tenant={"network": {"allow": [f"127.0.0.1:{server.port}"]}})
    refused(closed, f"refused 127.0.0.1:{other}: 127.0.0.1 is this machine")


def test_the_allowlist_never_opens_the_platforms_redis(runners, platform_redis):
    before = _connections_received(platform_redis)
    runner = invoke(runners, f"http://{platform_redis.address}/", tenant={"network": {"allow": ["127.0.0.0/8"]}})
    refused(runner, f"refused {platform_redis.address}: {platform_redis.address} is one of the platform's own services")
    operator = invoke(runners, f"http://{platform_redis.address}/")
    refused(operator, "is one of the platform's own services")
    assert _connections_received(platform_redis) == before + 1  # only this test's own INFO


@pytest.mark.parametrize("host", ["169.254.169.254", "[fd00:ec2::254]", "100.100.100.200", "[::ffff:169.254.169.254]"])
def test_metadata_addresses_are_refused_without_network_io(runners, host):
    _connects.clear()
    runner = invoke(runners, f"http://{host}/latest/meta-data/", tenant={"network": {"allow": ["0.0.0.0/0", "::/0"]}})
    refused(runner, "is a link-local or cloud metadata address")
    operator = invoke(runners, f"http://{host}/latest/meta-data/")
    refused(operator, "is a link-local or cloud metadata address")
    assert _connects == []


def test_the_unspecified_address_is_refused(runners):
    runner = invoke(runners, "http://0.0.0.0:9/")
    refused(runner, "0.0.0.0 is the unspecified address")


def test_put_email_to_loopback_is_refused(runners):
    port = free_port()
    runner = runners("PutEmail", {"SMTP Hostname": "127.0.0.1", "SMTP Port": str(port), "From": "a@example.com",
                                  "To": "b@example.com", "SMTP Socket Factory": "javax.net.SocketFactory"},
                     tenant={})
    _connects.clear()
    runner.enqueue(b"body")
    runner.run()
    assert runner.output("failure")
    assert any(f"PutEmail[processor-under-test] refused 127.0.0.1:{port}" in message for message in runner.bulletins)
    assert _connects == []


def _enable(cls, properties, policy, tmp_path):
    instance = cls()
    descriptors, _ = component_descriptors(cls, properties)
    instance.on_enabled(ConfigurationContext(descriptors, properties), ServiceInitContext(
        "service", "service", str(tmp_path), confinement=policy))
    return instance


def _policy(tenants: dict, settings: ConfinementSettings):
    node = NodeConfinement(settings)
    node.set_flow(load_flow({"flowContents": {"identifier": "root", "name": "root",
                                              "processGroups": [{"identifier": "g", "name": "g"}]},
                             "tenants": {slug: {**entry, "group": "g"} for slug, entry in tenants.items()}}))
    return node.policy("g" if tenants else None)


def test_the_redis_pool_refuses_the_platforms_redis(platform_redis, tmp_path):
    settings = ConfinementSettings(platform_addresses=(f"localhost:{platform_redis.port}",))
    before = _connections_received(platform_redis)
    for policy in (_policy({}, settings), _policy({"acme": {"network": {"allow": ["127.0.0.1"]}}}, settings)):
        pool = _enable(RedisConnectionPoolService, {"Connection String": platform_redis.address}, policy, tmp_path)
        try:
            with pytest.raises(redis.ConnectionError, match="one of the platform's own services"):
                pool.client().set("planted", "x")
        finally:
            pool.on_disabled()
    assert _connections_received(platform_redis) == before + 1


def test_the_redis_pool_reaches_a_redis_the_tenant_may(platform_redis, tmp_path):
    policy = _policy({"acme": {"network": {"allow": [platform_redis.address]}}}, ConfinementSettings())
    pool = _enable(RedisConnectionPoolService, {"Connection String": platform_redis.address}, policy, tmp_path)
    try:
        assert pool.client().ping()
    finally:
        pool.on_disabled()


def test_redis_sentinel_mode_is_not_for_tenants(platform_redis, tmp_path):
    policy = _policy({"acme": {"network": {"allow": ["127.0.0.1"]}}}, ConfinementSettings())
    with pytest.raises(ConfinementError, match="tenant acme may use Standalone mode"):
        _enable(RedisConnectionPoolService, {"Redis Mode": "Sentinel", "Sentinel Master": "m",
                                             "Connection String": platform_redis.address}, policy, tmp_path)


def test_the_map_cache_client_refuses_loopback_to_a_tenant(tmp_path):
    port = free_port()
    client = _enable(MapCacheClientService, {"Server Hostname": "127.0.0.1", "Server Port": str(port)},
                     _policy({"acme": {}}, ConfinementSettings()), tmp_path)
    _connects.clear()
    with pytest.raises(ConfinementError, match=f"refused 127.0.0.1:{port}: 127.0.0.1 is this machine"):
        client.put("k", b"v")
    assert _connects == []
    client.on_disabled()


def listen(runners, port, tenant):
    runner = runners("ListenHTTP", {"Listening Port": str(port), "Base Path": "contentListener"}, tenant=tenant,
                     input=False)
    runner.run(stop=False)
    return runner


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def test_listen_http_binds_only_the_tenants_ports(runners):
    low = free_port()
    outside = free_port()
    runner = listen(runners, outside, {"listenPorts": [low, low]})
    try:
        assert not _accepts(outside)
        assert any(f"refused listening on port {outside}: outside tenant acme's listen ports ({low}-{low})" in message
                   for message in runner.bulletins), runner.bulletins
    finally:
        runner.stop()
    inside = listen(runners, low, {"listenPorts": [low, low]})
    try:
        assert _accepts(low)
    finally:
        inside.stop()


def test_a_tenant_without_listen_ports_may_not_listen(runners):
    port = free_port()
    runner = listen(runners, port, {"listenPorts": None})
    try:
        assert not _accepts(port)
        assert any("tenant acme may not listen" in message for message in runner.bulletins), runner.bulletins
    finally:
        runner.stop()


def _connections_received(server: RedisServer) -> int:
    with socket.create_connection(("127.0.0.1", server.port), timeout=2) as sock:
        sock.sendall(b"INFO stats\r\n")
        data = b""
        while b"total_connections_received" not in data or not data.endswith(b"\r\n"):
            data += sock.recv(65536)
    line = next(line for line in data.decode().splitlines() if line.startswith("total_connections_received"))
    return int(line.split(":")[1])
