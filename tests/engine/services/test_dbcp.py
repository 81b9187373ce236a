"""DBCPConnectionPool against a real PostgreSQL: JDBC URLs, the pool's limits, the Validation
Query replacing a connection the server killed, why no connection came, and confinement (no
socket is opened to a refused address)."""

from __future__ import annotations

import sys

import pytest

from engine.components import ConfigurationContext, ServiceInitContext
from engine.components.validation import component_descriptors, validate_properties
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
    assert url.parameters == {"user": "u", "password": "p;w", "sslmode": "verify-full", "application_name": "nifi",
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


def test_driver_properties_given_as_user_added_properties_reach_the_connection(db, tmp_path):
    properties = db.pool_properties(**{"ApplicationName": "nightly-load", "currentSchema": "audit",
                                       "connectTimeout": "3", "options": "-c work_mem=5MB"})
    password = properties.pop("Password")
    properties["SENSITIVE.password"] = password
    assert validate_properties(DBCPConnectionPool, properties) == []
    pool = enable(properties, tmp_path)
    try:
        with pool.connection() as conn:
            settings = conn.execute("SELECT current_setting('application_name'), current_setting('search_path'), "
                                    "current_setting('work_mem')").fetchone()
            conn.rollback()
        assert settings == ("nightly-load", "audit", "5MB")
        assert pool._connect_options["connect_timeout"] == "3"
        assert pool._connect_options["password"] == password
    finally:
        pool.on_disabled()


def test_the_urls_parameters_win_over_driver_properties(db, tmp_path):
    properties = db.pool_properties(ApplicationName="from-property")
    properties["Database Connection URL"] += "?ApplicationName=from-url"
    pool = enable(properties, tmp_path)
    try:
        with pool.connection() as conn:
            assert conn.execute("SELECT current_setting('application_name')").fetchone() == ("from-url",)
            conn.rollback()
    finally:
        pool.on_disabled()


def test_a_sensitive_driver_property_is_sensitive_and_takes_no_expression_language():
    descriptor = DBCPConnectionPool.dynamic_property_descriptor("SENSITIVE.password")
    assert descriptor.sensitive and not descriptor.supports_expressions
    assert DBCPConnectionPool.is_sensitive("SENSITIVE.password")
    assert not DBCPConnectionPool.is_sensitive("ApplicationName")
    assert DBCPConnectionPool.dynamic_property_descriptor("ApplicationName").supports_expressions


def test_a_driver_property_without_a_libpq_equivalent_makes_the_pool_invalid_saying_which_are_accepted():
    properties = {"Database Connection URL": "jdbc:postgresql://h/d", "prepareThreshold": "3",
                  "SENSITIVE.sslfactory": "x", "sslmode": "require"}
    problems = [str(p) for p in validate_properties(DBCPConnectionPool, properties)]
    assert len(problems) == 2, problems
    assert problems[0].startswith("'prepareThreshold' is not a PostgreSQL driver property Flowsite can apply")
    assert "ApplicationName" in problems[0] and "currentSchema" in problems[0]
    assert problems[1].startswith("'SENSITIVE.sslfactory' is not a PostgreSQL driver property")


def test_a_tenant_without_the_file_grant_cannot_name_a_root_certificate_as_a_driver_property(db, tmp_path):
    policy = tenant_policy({"network": {"allow": [f"{db.host}:{db.port}"]}})
    properties = db.pool_properties(sslrootcert=str(tmp_path / "root.crt"))
    with pytest.raises(ConfinementError, match="root.crt"):
        enable(properties, tmp_path, policy)


def test_ssl_true_insists_on_a_verified_tls_connection_as_pgjdbc_does(db, tmp_path):
    """pgjdbc's ssl=true means sslmode=verify-full: a server without TLS (the suite's own) is not
    reached in clear text instead, and nothing of the node's ~/.postgresql is used."""
    pool = enable(db.pool_properties(**{"ssl": "true", "Max Wait Time": "2 sec"}), tmp_path)
    try:
        with pytest.raises(ConnectionError, match="SSL"):
            with pool.connection():
                pass
    finally:
        pool.on_disabled()
    plain = enable(db.pool_properties(), tmp_path)
    try:
        with plain.connection() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            conn.rollback()
    finally:
        plain.on_disabled()
