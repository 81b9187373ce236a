"""DBCPConnectionPool against a real PostgreSQL: JDBC URLs, the pool's limits, the Validation
Query replacing a connection the server killed, why no connection came, and confinement (no
socket is opened to a refused address)."""

from __future__ import annotations

import sys

import pytest

from engine.components import ConfigurationContext, ServiceInitContext
from engine.components.validation import component_descriptors
from engine.confinement import ConfinementError, ConfinementSettings, NodeConfinement
from engine.flow import load_flow
from engine.services.dbcp import DBCPConnectionPool, parse_jdbc_url
from tests.databases import scratch_database
from tests.servers import free_port

_connects: list[tuple] = []


def _record(event, args):
    if event == "socket.connect":
        _connects.append(args[1])


sys.addaudithook(_record)


@pytest.fixture(scope="module")
def db():
    yield from scratch_database("dbcp")


def enable(properties, tmp_path, policy=None) -> DBCPConnectionPool:
    pool = DBCPConnectionPool()
    descriptors, _ = component_descriptors(DBCPConnectionPool, properties)
    init = ServiceInitContext("pool", "pool", str(tmp_path), confinement=policy)
    pool.on_enabled(ConfigurationContext(descriptors, properties), init)
    return pool


def tenant_policy(tenant: dict, settings: ConfinementSettings | None = None):
    node = NodeConfinement(settings or ConfinementSettings())
    node.set_flow(load_flow({"flowContents": {"identifier": "root", "name": "root",
                                              "processGroups": [{"identifier": "g", "name": "g"}]},
                             "tenants": {"acme": {**tenant, "group": "g"}}}))
    return node.policy("g")


def test_jdbc_urls_are_taken_apart():
    url = parse_jdbc_url("jdbc:postgresql://db.example:6543/sales?user=u&password=p%3Bw&ssl=true"
                         "&ApplicationName=nifi&currentSchema=s1&prepareThreshold=3")
    assert (url.host, url.port, url.database) == ("db.example", 6543, "sales")
    assert url.parameters == {"user": "u", "password": "p;w", "sslmode": "require", "application_name": "nifi",
                              "options": "-c search_path=s1"}
    assert parse_jdbc_url("jdbc:postgresql://[::1]/x").host == "::1"
    assert parse_jdbc_url("jdbc:postgresql:/x").display == "jdbc:postgresql://localhost:5432/x"
    for wrong, reason in (("jdbc:mysql://h/db", "must be a PostgreSQL JDBC URL"),
                          ("jdbc:postgresql://a:1,b:2/db", "several hosts"),
                          ("jdbc:postgresql://h:99999/db", "invalid port")):
        with pytest.raises(ValueError, match=reason):
            parse_jdbc_url(wrong)


def test_connections_work_and_are_reused(db, tmp_path):
    pool = enable(db.pool_properties(**{"Validation Query": "SELECT 1"}), tmp_path)
    try:
        with pool.connection() as conn:
            first = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            conn.rollback()
        with pool.connection() as conn:
            assert conn.execute("SELECT pg_backend_pid()").fetchone()[0] == first
            conn.rollback()
    finally:
        pool.on_disabled()


def test_the_validation_query_replaces_a_connection_the_server_killed(db, tmp_path):
    pool = enable(db.pool_properties(**{"Validation Query": "SELECT 1"}), tmp_path)
    try:
        with pool.connection() as conn:
            killed = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            conn.rollback()
        db.execute("SELECT pg_terminate_backend(%s)", (killed,))
        with pool.connection() as conn:
            assert conn.execute("SELECT pg_backend_pid()").fetchone()[0] != killed
            conn.rollback()
    finally:
        pool.on_disabled()


def test_a_pool_whose_connections_are_all_lent_says_so_after_the_max_wait_time(db, tmp_path):
    pool = enable(db.pool_properties(**{"Max Total Connections": "1", "Max Wait Time": "300 millis"}), tmp_path)
    try:
        with pool.connection():
            with pytest.raises(ConnectionError, match="all of the pool's connections are in use"):
                with pool.connection():
                    pass
    finally:
        pool.on_disabled()


def test_an_unreachable_database_is_named_with_the_reason(db, tmp_path):
    port = free_port()
    pool = enable(db.pool_properties("127.0.0.1", port), tmp_path)
    try:
        with pytest.raises(ConnectionError, match=f"cannot connect to jdbc:postgresql://127.0.0.1:{port}/"
                                                  f"{db.name}: .*Connection refused"):
            with pool.connection():
                pass
    finally:
        pool.on_disabled()


def test_a_tenant_without_the_grant_cannot_enable_a_pool_and_nothing_is_connected(db, tmp_path):
    _connects.clear()
    with pytest.raises(ConfinementError, match=f"refused {db.host}:{db.port}: .*tenant acme's network allowlist"):
        enable(db.pool_properties(), tmp_path, tenant_policy({}))
    assert _connects == []


def test_a_tenant_granted_the_database_reaches_it(db, tmp_path):
    pool = enable(db.pool_properties(), tmp_path, tenant_policy({"network": {"allow": [f"{db.host}:{db.port}"]}}))
    try:
        with pool.connection() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            conn.rollback()
    finally:
        pool.on_disabled()


def test_the_platforms_database_is_refused_to_every_tenant(db, tmp_path):
    settings = ConfinementSettings(platform_addresses=(f"{db.host}:{db.port}",))
    policy = tenant_policy({"network": {"allow": [f"{db.host}:{db.port}"]}}, settings)
    with pytest.raises(ConfinementError, match="one of the platform's own services"):
        enable(db.pool_properties(), tmp_path, policy)


def test_minimum_idle_connections_may_not_exceed_the_total():
    properties = {"Database Connection URL": "jdbc:postgresql://h/d", "Minimum Idle Connections": "9"}
    descriptors, _ = component_descriptors(DBCPConnectionPool, properties)
    problems = list(DBCPConnectionPool().validate(ConfigurationContext(descriptors, properties)))
    assert problems == ["'Minimum Idle Connections' must not exceed 'Max Total Connections'"]
