"""DBCPConnectionPool: pooled PostgreSQL connections (psycopg 3 and psycopg_pool) for the SQL processors."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote

import psycopg
import psycopg_pool

from engine.components import (
    AllowableValue,
    ControllerService,
    DynamicProperties,
    ExpressionScope,
    PropertyDescriptor,
)
from engine.components import validators as v
from engine.confinement import ConfinementError, Policy
from engine.services.apis import DBCPService

__all__ = ["DBCPConnectionPool", "JdbcUrl", "libpq_settings", "parse_jdbc_url"]

POSTGRESQL_DRIVER = "org.postgresql.Driver"
DEFAULT_PORT = 5432
#: pgjdbc URL parameters and the libpq settings they become; others are ignored (pgjdbc tuning).
_PARAMETERS = {"user": "user", "password": "password", "sslmode": "sslmode", "ApplicationName": "application_name",
               "applicationName": "application_name", "connectTimeout": "connect_timeout", "options": "options"}
_FILE_PARAMETERS = {"sslrootcert": "sslrootcert", "sslcert": "sslcert", "sslkey": "sslkey"}
#: The driver properties that have a libpq equivalent (dynamic properties may name only these).
DRIVER_PROPERTIES = (*_PARAMETERS, *_FILE_PARAMETERS, "ssl", "currentSchema")
SENSITIVE_PREFIX = "SENSITIVE."
#: Authentication a connection may use: never the node's own Kerberos or SSPI identity.
_REQUIRE_AUTH = "password,md5,scram-sha-256,none"


@dataclass(frozen=True)
class JdbcUrl:
    """A ``jdbc:postgresql://host:port/database?...`` URL, taken apart."""

    host: str
    port: int
    database: str
    parameters: dict[str, str] = field(default_factory=dict)
    file_parameters: dict[str, str] = field(default_factory=dict)
    #: The URL's pgjdbc properties as written, in order.
    settings: tuple[tuple[str, str], ...] = ()

    @property
    def display(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"


def parse_jdbc_url(text: str) -> JdbcUrl:
    """Take a pgjdbc URL apart; raises ValueError saying what is wrong with it."""
    prefix = "jdbc:postgresql:"
    if not text.startswith(prefix):
        raise ValueError(f"must be a PostgreSQL JDBC URL (jdbc:postgresql://host:port/database), not {text!r}")
    rest = text[len(prefix):]
    rest, _, query = rest.partition("?")
    if rest.startswith("//"):
        authority, _, database = rest[2:].partition("/")
    else:
        authority, database = "", rest.lstrip("/")
    if "," in authority:
        raise ValueError("lists several hosts; Flowsite connects to one PostgreSQL server per pool")
    host, port = authority or "localhost", DEFAULT_PORT
    if host.startswith("["):
        address, _, tail = host[1:].partition("]")
        host, port_text = address, tail.removeprefix(":")
    elif host.count(":") == 1:
        host, port_text = host.split(":")
    else:
        port_text = ""
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"has an invalid port {port_text!r}")
        port = int(port_text)
    settings = tuple(parse_qsl(query, keep_blank_values=True))
    parameters, files = libpq_settings(setting for setting in settings if setting[0] in DRIVER_PROPERTIES)
    return JdbcUrl(unquote(host), port, unquote(database) or "", parameters, files, settings)


def libpq_settings(settings: Iterable[tuple[str, str]]) -> tuple[dict[str, str], dict[str, str]]:
    """The libpq parameters and the file paths (to check) that pgjdbc properties become, a later
    one winning; raises ValueError for a property without a libpq equivalent."""
    parameters: dict[str, str] = {}
    files: dict[str, str] = {}
    schema = None
    for name, value in settings:
        if name in _PARAMETERS:
            parameters[_PARAMETERS[name]] = value
        elif name in _FILE_PARAMETERS:
            files[_FILE_PARAMETERS[name]] = value
        elif name == "ssl":
            if value.lower() in ("", "true") and "sslmode" not in parameters:
                parameters["sslmode"] = "verify-full"  # pgjdbc's meaning of ssl=true
        elif name == "currentSchema":
            schema = value
        else:
            raise ValueError(f"'{name}' is not a PostgreSQL driver property Flowsite can apply")
    if schema is not None:
        parameters["options"] = f"{parameters.get('options', '')} -c search_path={schema}".strip()
    return parameters, files


def _jdbc_url(value: str, context) -> str | None:
    try:
        parse_jdbc_url(value)
    except ValueError as error:
        return str(error)
    return None


DATABASE_URL = PropertyDescriptor(
    "Database Connection URL", description="The database's JDBC URL: jdbc:postgresql://host:port/database, "
    "optionally with pgjdbc parameters (?user=...&password=...&sslmode=...&ApplicationName=...&currentSchema=...). "
    "Parameters of pgjdbc's own tuning are ignored.", required=True, validators=[_jdbc_url],
    expression_language=ExpressionScope.ENVIRONMENT)
DRIVER_NAME = PropertyDescriptor(
    "Database Driver Class Name", description="The JDBC driver NiFi would load; Flowsite speaks to PostgreSQL "
    f"itself, so only {POSTGRESQL_DRIVER} is accepted.", required=True, default=POSTGRESQL_DRIVER,
    allowed_values=[POSTGRESQL_DRIVER], expression_language=ExpressionScope.ENVIRONMENT)
DRIVER_LOCATIONS = PropertyDescriptor(
    "Database Driver Locations", description="Accepted for NiFi flows (the driver's JAR files); not used.",
    expression_language=ExpressionScope.ENVIRONMENT)
USER = PropertyDescriptor(
    "Database User", description="The user to connect as.", expression_language=ExpressionScope.ENVIRONMENT)
PASSWORD_SOURCE = PropertyDescriptor(
    "Password Source", description="Where the password comes from: the Password property.", required=True,
    default="PASSWORD", allowed_values=[AllowableValue("PASSWORD", "Password", "The Password property.")])
PASSWORD = PropertyDescriptor(
    "Password", description="The user's password.", sensitive=True, expression_language=ExpressionScope.ENVIRONMENT)
MAX_WAIT_TIME = PropertyDescriptor(
    "Max Wait Time", description="How long a task waits for a connection (a free one, or a new one being "
    "opened) before failing; -1: wait as long as it takes.", required=True, default="500 millis",
    validators=[lambda value, context: None if value.strip() == "-1" else v.TIME_PERIOD(value, context)],
    expression_language=ExpressionScope.ENVIRONMENT)
MAX_TOTAL = PropertyDescriptor(
    "Max Total Connections", description="The most connections open at once.", required=True, default="8",
    validators=[v.POSITIVE_INTEGER], expression_language=ExpressionScope.ENVIRONMENT)
VALIDATION_QUERY = PropertyDescriptor(
    "Validation Query", description="A query run on a connection before it is lent (SELECT 1); a connection it "
    "fails on is thrown away and another taken. Unset: connections are lent unchecked.",
    expression_language=ExpressionScope.ENVIRONMENT)
MIN_IDLE = PropertyDescriptor(
    "Minimum Idle Connections", description="How many connections the pool keeps open while nothing uses them.",
    default="0", validators=[v.NON_NEGATIVE_INTEGER], expression_language=ExpressionScope.ENVIRONMENT)
MAX_IDLE = PropertyDescriptor(
    "Maximum Idle Connections", description="Accepted for NiFi flows; idle connections beyond the minimum are "
    "closed after the Minimum Evictable Idle Time instead.", default="8", validators=[v.INTEGER],
    expression_language=ExpressionScope.ENVIRONMENT)
MAX_LIFETIME = PropertyDescriptor(
    "Maximum Connection Lifetime", description="How long a connection lives before it is replaced; -1: "
    "for ever.", default="-1", validators=[lambda value, context: None if value.strip() == "-1"
                                            else v.TIME_PERIOD(value, context)],
    expression_language=ExpressionScope.ENVIRONMENT)
EVICTION_RUN_PERIOD = PropertyDescriptor(
    "Time Between Eviction Runs", description="Accepted for NiFi flows; the pool checks idle connections on "
    "its own schedule.", default="-1", expression_language=ExpressionScope.ENVIRONMENT)
MIN_EVICTABLE_IDLE_TIME = PropertyDescriptor(
    "Minimum Evictable Idle Time", description="How long a connection beyond the Minimum Idle Connections may "
    "stay idle before it is closed.", default="30 mins", validators=[v.TIME_PERIOD],
    expression_language=ExpressionScope.ENVIRONMENT)
SOFT_MIN_EVICTABLE_IDLE_TIME = PropertyDescriptor(
    "Soft Minimum Evictable Idle Time", description="Accepted for NiFi flows; not used.", default="-1",
    expression_language=ExpressionScope.ENVIRONMENT)


def _duration(context, descriptor: PropertyDescriptor, infinite: float) -> float:
    value = context.property(descriptor).evaluate()
    return infinite if (value.value or "").strip() == "-1" else value.as_duration()


class DBCPConnectionPool(ControllerService, DBCPService):
    """Keeps a pool of connections to a PostgreSQL database that the SQL processors (ExecuteSQL,
    QueryDatabaseTable, PutDatabaseRecord) borrow for a task and give back.

    The database is named by its JDBC URL, as in NiFi; Flowsite connects with psycopg 3 (libpq),
    so the driver class must be PostgreSQL's and the driver locations are not used. The pool
    (psycopg_pool) opens connections on demand and in the background, so enabling succeeds
    while the database is down; a task that cannot get a connection within the Max Wait Time
    fails with the reason the last attempt gave. Max Total Connections, Minimum Idle
    Connections, Maximum Connection Lifetime, Minimum Evictable Idle Time and the Validation
    Query are honoured; the other commons-pool tuning properties are accepted so NiFi flows
    load. User-added properties are JDBC driver properties, as in NiFi (``SENSITIVE.name`` for
    a secret one): those of pgjdbc that libpq has too are used (ssl, sslmode, sslrootcert,
    sslcert, sslkey, connectTimeout, ApplicationName, options, currentSchema, user, password;
    the URL's parameters win over them, Database User and Password over both); any other makes
    the service invalid, saying which are accepted.

    Connections are confined (``engine.confinement``): the host is resolved and each address
    checked before libpq connects to exactly that address; a tenant's pool refuses the
    platform's own database and, unless its allowlist opens it, this machine. Connections never
    authenticate with the node's own Kerberos identity, password file or client certificate.
    """

    nifi_type = "org.apache.nifi.dbcp.DBCPConnectionPool"
    tags = ("dbcp", "jdbc", "database", "connection", "pooling", "store")
    properties = (DATABASE_URL, DRIVER_NAME, DRIVER_LOCATIONS, USER, PASSWORD_SOURCE, PASSWORD, MAX_WAIT_TIME,
                  MAX_TOTAL, VALIDATION_QUERY, MIN_IDLE, MAX_IDLE, MAX_LIFETIME, EVICTION_RUN_PERIOD,
                  MIN_EVICTABLE_IDLE_TIME, SOFT_MIN_EVICTABLE_IDLE_TIME)
    provides = (DBCPService,)
    migrated_properties = {"database-driver-locations": "Database Driver Locations",
                           "Validation-query": "Validation Query", "dbcp-min-idle-conns": "Minimum Idle Connections",
                           "dbcp-max-idle-conns": "Maximum Idle Connections",
                           "dbcp-max-conn-lifetime": "Maximum Connection Lifetime",
                           "dbcp-time-between-eviction-runs": "Time Between Eviction Runs",
                           "dbcp-min-evictable-idle-time": "Minimum Evictable Idle Time",
                           "dbcp-soft-min-evictable-idle-time": "Soft Minimum Evictable Idle Time"}
    see_also = ("ExecuteSQL", "QueryDatabaseTable", "PutDatabaseRecord")
    dynamic_properties = DynamicProperties(
        "JDBC property name", "JDBC property value", "A pgjdbc driver property applied to the pool's connections: "
        + ", ".join(DRIVER_PROPERTIES) + ".", expression_language=ExpressionScope.ENVIRONMENT,
        sensitive_prefix=SENSITIVE_PREFIX)

    def __init__(self) -> None:
        self._pool: psycopg_pool.ConnectionPool | None = None
        self._url: JdbcUrl | None = None
        self._connect_options: dict = {}
        self._policy: Policy | None = None
        self._wait = 0.5

    @property
    def url(self) -> str:
        return self._url.display if self._url is not None else "jdbc:postgresql://(disabled)"

    def validate(self, context):
        if context.property(MIN_IDLE).as_int() > context.property(MAX_TOTAL).as_int():
            yield f"'{MIN_IDLE.name}' must not exceed '{MAX_TOTAL.name}'"

    @classmethod
    def dynamic_property_descriptor(cls, name: str) -> PropertyDescriptor | None:
        descriptor = super().dynamic_property_descriptor(name)
        if name.removeprefix(SENSITIVE_PREFIX) in DRIVER_PROPERTIES:
            return descriptor
        return dataclasses.replace(descriptor, validators=[_unknown_driver_property])

    def on_enabled(self, context, init) -> None:
        url = parse_jdbc_url(context.property(DATABASE_URL).evaluate().value)
        policy = init.confinement
        parameters, files = libpq_settings([*_driver_properties(context),
                                            *(s for s in url.settings if s[0] in DRIVER_PROPERTIES)])
        files = {name: policy.check_path(path) for name, path in files.items()}
        _resolve(policy, url.host, url.port)  # a refused destination fails enabling, saying why
        user = context.property(USER).evaluate().value
        password = context.property(PASSWORD).evaluate().value
        nowhere = os.path.join(init.data_dir or "/nonexistent", "none")
        # Never the node's own files (~/.postgresql): no client certificate and no root certificate
        # unless named; verify-full without one trusts the system's authorities (libpq allows that
        # only in verify-full).
        trust = "system" if parameters.get("sslmode") == "verify-full" else nowhere
        options = {"sslcert": nowhere, "sslkey": nowhere, "sslrootcert": trust, "passfile": nowhere,
                   "gssencmode": "disable",
                   "require_auth": _REQUIRE_AUTH, "connect_timeout": "10", **parameters, **files,
                   "host": url.host, "port": str(url.port), "dbname": url.database}
        if user:
            options["user"] = user
        if password:
            options["password"] = password
        validation = context.property(VALIDATION_QUERY).evaluate().value
        self._url, self._policy, self._connect_options = url, policy, options
        self._wait = _duration(context, MAX_WAIT_TIME, 24 * 3600.0)
        max_total = context.property(MAX_TOTAL).evaluate().as_int()
        self._pool = psycopg_pool.ConnectionPool(
            kwargs=options, connection_class=_confined_connection(policy),
            min_size=min(context.property(MIN_IDLE).evaluate().as_int(), max_total), max_size=max_total,
            max_lifetime=_duration(context, MAX_LIFETIME, 10.0 ** 9),
            max_idle=context.property(MIN_EVICTABLE_IDLE_TIME).evaluate().as_duration(),
            check=_validator(validation) if validation else None, timeout=self._wait,
            reconnect_timeout=0, name=f"DBCPConnectionPool[{init.identifier}]", open=False)
        self._pool.open(wait=False)

    def on_disabled(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close(timeout=5)

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        pool = self._pool
        if pool is None:
            raise ConnectionError("the DBCPConnectionPool is disabled")
        try:
            conn = pool.getconn(timeout=self._wait)
        except psycopg_pool.PoolTimeout:
            raise self._diagnose() from None
        try:
            yield conn
        finally:
            pool.putconn(conn)

    def _diagnose(self) -> OSError:
        """Why no connection came within the Max Wait Time: a direct attempt's refusal or error."""
        try:
            _confined_connection(self._policy).connect(**self._connect_options).close()
        except ConfinementError as error:
            return error
        except psycopg.OperationalError as error:
            return ConnectionError(f"cannot connect to {self.url}: {_first_line(error)}")
        return ConnectionError(f"no connection to {self.url} became free within {self._wait:g} s "
                               f"(all of the pool's connections are in use)")


def _unknown_driver_property(value: str, context) -> str:
    return ("is not a PostgreSQL driver property Flowsite can apply (it has no libpq equivalent); remove it or "
            f"use one of: {', '.join(DRIVER_PROPERTIES)}")


def _driver_properties(context) -> list[tuple[str, str]]:
    """The user-added driver properties by their pgjdbc name (a sensitive one's value as written,
    the others' evaluated)."""
    settings = []
    for name, value in context.dynamic_properties.items():
        sensitive = name.startswith(SENSITIVE_PREFIX)
        text = value.value if sensitive else value.evaluate().value
        if text is not None:
            settings.append((name.removeprefix(SENSITIVE_PREFIX), text))
    return settings


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _resolve(policy: Policy, host: str, port: int) -> str:
    """The first address of ``host`` the policy allows; raises ConfinementError when none is."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise ConnectionError(f"cannot resolve {host}: {error}") from error
    refusals = []
    for *_, sockaddr in infos:
        reason = policy.address_refusal(host, sockaddr[0], port)
        if reason is None:
            return sockaddr[0]
        refusals.append(reason)
    raise ConfinementError(f"{host}:{port}", "; ".join(dict.fromkeys(refusals)))


def _confined_connection(policy: Policy) -> type[psycopg.Connection]:
    """A connection class that resolves the host itself, checks the address with ``policy`` and
    makes libpq connect to that very address (``hostaddr``), so a DNS answer cannot change between
    the check and the connection."""

    class ConfinedConnection(psycopg.Connection):
        @classmethod
        def connect(cls, conninfo: str = "", **kwargs):
            kwargs["hostaddr"] = _resolve(policy, kwargs["host"], int(kwargs["port"]))
            return super().connect(conninfo, **kwargs)

    return ConfinedConnection


def _validator(query: str):
    def check(conn: psycopg.Connection) -> None:
        conn.execute(query)
        conn.rollback()

    return check
