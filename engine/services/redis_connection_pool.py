"""RedisConnectionPoolService: pooled connections to Redis for other components."""

from __future__ import annotations

import socket
import threading

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import RedisClusterException
from redis.sentinel import Sentinel

from engine.components import (
    AllowableValue,
    ControllerService,
    ExpressionScope,
    PropertyDescriptor,
)
from engine.components import validators as v
from engine.confinement import ConfinementError, Policy
from engine.services.apis import RedisConnectionPool

__all__ = ["RedisConnectionPoolService"]

STANDALONE = "Standalone"
SENTINEL = "Sentinel"
CLUSTER = "Cluster"


def _not_blank(value: str, context) -> str | None:
    return "must not be blank" if not value.strip() else None


def _boolean_values(name: str, default: str, description: str) -> PropertyDescriptor:
    return PropertyDescriptor(name, description=description, required=True, default=default,
                              allowed_values=["true", "false"])


REDIS_MODE = PropertyDescriptor(
    "Redis Mode", description="How Redis is deployed.", required=True, default=STANDALONE,
    allowed_values=[AllowableValue(STANDALONE, STANDALONE, "A single Redis server."),
                    AllowableValue(SENTINEL, SENTINEL, "Redis Sentinel finds the current master."),
                    AllowableValue(CLUSTER, CLUSTER, "A Redis Cluster: keys are spread over its masters.")])
CONNECTION_STRING = PropertyDescriptor(
    "Connection String", description="Standalone: host:port of the server. Sentinel: the sentinels, as "
    "host1:port1,host2:port2. Cluster: some of its masters, as host1:port1,host2:port2.", required=True,
    validators=[_not_blank],
    expression_language=ExpressionScope.ENVIRONMENT)
DATABASE_INDEX = PropertyDescriptor(
    "Database Index", description="The Redis database the connections select (0-15 on a default server).",
    required=True, default="0", validators=[v.NON_NEGATIVE_INTEGER], expression_language=ExpressionScope.ENVIRONMENT)
COMMUNICATION_TIMEOUT = PropertyDescriptor(
    "Communication Timeout", description="How long to wait to connect to Redis and for each answer.",
    required=True, default="10 seconds", validators=[v.TIME_PERIOD])
CLUSTER_MAX_REDIRECTS = PropertyDescriptor(
    "Cluster Max Redirects", description="How many times a command may be redirected to another node of a "
    "Cluster (MOVED, ASK) before it fails.", required=True, default="5", validators=[v.NON_NEGATIVE_INTEGER])
SENTINEL_MASTER = PropertyDescriptor(
    "Sentinel Master", description="The name of the master the sentinels watch (Sentinel mode).",
    validators=[_not_blank], expression_language=ExpressionScope.ENVIRONMENT)
USERNAME = PropertyDescriptor(
    "Username", description="The user to authenticate as (Redis 6 ACLs); unset: the default user.",
    validators=[_not_blank], expression_language=ExpressionScope.ENVIRONMENT)
PASSWORD = PropertyDescriptor(
    "Password", description="The password to authenticate with (requirepass or the user's ACL password).",
    validators=[_not_blank], sensitive=True, expression_language=ExpressionScope.ENVIRONMENT)
SENTINEL_USERNAME = PropertyDescriptor(
    "Sentinel Username", description="The user to authenticate to the sentinels as.", validators=[_not_blank],
    expression_language=ExpressionScope.ENVIRONMENT)
SENTINEL_PASSWORD = PropertyDescriptor(
    "Sentinel Password", description="The password to authenticate to the sentinels with.", validators=[_not_blank],
    sensitive=True, expression_language=ExpressionScope.ENVIRONMENT)
POOL_MAX_TOTAL = PropertyDescriptor(
    "Pool - Max Total", description="The most connections open at once; negative: no limit.", required=True,
    default="8", validators=[v.INTEGER])
POOL_MAX_IDLE = PropertyDescriptor(
    "Pool - Max Idle", description="Accepted for NiFi flows; idle connections stay open (at most Max Total).",
    required=True, default="8", validators=[v.INTEGER])
POOL_MIN_IDLE = PropertyDescriptor(
    "Pool - Min Idle", description="Accepted for NiFi flows; connections are opened on demand.", required=True,
    default="0", validators=[v.INTEGER])
POOL_BLOCK_WHEN_EXHAUSTED = _boolean_values(
    "Pool - Block When Exhausted", "true", "Whether a task wanting a connection while Max Total are in use waits "
    "for one (up to Max Wait Time) rather than failing at once (Standalone mode).")
POOL_MAX_WAIT_TIME = PropertyDescriptor(
    "Pool - Max Wait Time", description="How long a task waits for a free connection when Block When "
    "Exhausted is true.", required=True, default="10 seconds", validators=[v.TIME_PERIOD])
POOL_MIN_EVICTABLE_IDLE_TIME = PropertyDescriptor(
    "Pool - Min Evictable Idle Time", description="Accepted for NiFi flows; idle connections are not closed.",
    required=True, default="60 seconds", validators=[v.TIME_PERIOD])
POOL_TIME_BETWEEN_EVICTION_RUNS = PropertyDescriptor(
    "Pool - Time Between Eviction Runs", description="With Test While Idle: a connection idle this long is "
    "checked with PING before it is used again.", required=True, default="30 seconds", validators=[v.TIME_PERIOD])
POOL_NUM_TESTS_PER_EVICTION_RUN = PropertyDescriptor(
    "Pool - Num Tests Per Eviction Run", description="Accepted for NiFi flows; every idle connection is checked.",
    required=True, default="-1", validators=[v.INTEGER])
POOL_TEST_ON_CREATE = _boolean_values(
    "Pool - Test On Create", "false", "Accepted for NiFi flows; a new connection is checked by its handshake.")
POOL_TEST_ON_BORROW = _boolean_values(
    "Pool - Test On Borrow", "false", "Whether every connection is checked with PING before each use.")
POOL_TEST_ON_RETURN = _boolean_values(
    "Pool - Test On Return", "false", "Accepted for NiFi flows; connections are checked before use instead.")
POOL_TEST_WHILE_IDLE = _boolean_values(
    "Pool - Test While Idle", "true", "Whether a connection idle for Time Between Eviction Runs is checked with "
    "PING before it is used again.")


class RedisConnectionPoolService(ControllerService, RedisConnectionPool):
    """Provides pooled connections to a Redis server, to the master a set of Redis Sentinels
    points at, or to a Redis Cluster, for other components (``client()`` gives a redis-py
    client).

    Connections open on demand, so enabling succeeds while Redis is down; operations fail
    until it is up. In Sentinel mode the sentinels are asked for the master's address and the
    connections follow a failover. In Cluster mode the client learns which master holds which
    keys from the nodes listed (the Database Index must be 0 there) and follows redirections up
    to Cluster Max Redirects. The pool honours Max Total (per node in Cluster mode), Block When
    Exhausted and Max Wait Time (Standalone mode; other pools fail at once when exhausted), and
    Test On Borrow or Test While Idle with Time Between Eviction Runs as PING checks before
    use. The other commons-pool tuning properties of NiFi are accepted so NiFi flows load, and
    have no effect. TLS (NiFi's SSL Context Service) is not offered: a flow using it is
    reported invalid.

    Connections are confined (``engine.confinement``): in Standalone mode every connection is
    checked when it is made; a refused address fails the operation with the reason. Sentinel
    and Cluster modes connect to servers they discover, which cannot be checked: tenants may
    not use them (enabling fails, saying why) and the operator's listed servers are checked
    when the service is enabled.
    """

    nifi_type = "org.apache.nifi.redis.service.RedisConnectionPoolService"
    tags = ("redis", "cache")
    properties = (REDIS_MODE, CONNECTION_STRING, DATABASE_INDEX, COMMUNICATION_TIMEOUT, CLUSTER_MAX_REDIRECTS,
                  SENTINEL_MASTER, USERNAME, PASSWORD, SENTINEL_USERNAME, SENTINEL_PASSWORD, POOL_MAX_TOTAL,
                  POOL_MAX_IDLE, POOL_MIN_IDLE, POOL_BLOCK_WHEN_EXHAUSTED, POOL_MAX_WAIT_TIME,
                  POOL_MIN_EVICTABLE_IDLE_TIME, POOL_TIME_BETWEEN_EVICTION_RUNS, POOL_NUM_TESTS_PER_EVICTION_RUN,
                  POOL_TEST_ON_CREATE, POOL_TEST_ON_BORROW, POOL_TEST_ON_RETURN, POOL_TEST_WHILE_IDLE)
    provides = (RedisConnectionPool,)
    see_also = ("RedisDistributedMapCacheClientService",)

    def __init__(self) -> None:
        self._client: redis.Redis | RedisCluster | None = None
        self._cluster_options: dict | None = None
        self._lock = threading.Lock()
        self._mode = STANDALONE

    @property
    def redis_type(self) -> str:
        return self._mode

    def client(self) -> redis.Redis | RedisCluster:
        client = self._client
        if client is not None:
            return client
        with self._lock:
            if self._client is None and self._cluster_options is not None:
                self._client = _cluster(self._cluster_options)
            if self._client is None:
                raise redis.ConnectionError("the Redis connection pool service is disabled")
            return self._client

    def validate(self, context):
        if context.property(POOL_MAX_TOTAL).as_int() == 0:
            yield f"'{POOL_MAX_TOTAL.name}' must not be 0 (negative: no limit)"
        mode = context.property(REDIS_MODE).value
        text = context.property(CONNECTION_STRING).evaluate().value or ""
        addresses = [part.strip() for part in text.split(",")]
        if mode == STANDALONE and (len(addresses) != 1 or _address(addresses[0]) is None):
            yield f"'{CONNECTION_STRING.name}' must be host:port in Standalone mode, not {text!r}"
        if mode in (SENTINEL, CLUSTER):
            wrong = [address for address in addresses if _address(address) is None]
            if wrong:
                yield f"'{CONNECTION_STRING.name}' must be host:port,host:port,... ({', '.join(map(repr, wrong))})"
        if mode == SENTINEL and not context.property(SENTINEL_MASTER).is_set():
            yield f"'{SENTINEL_MASTER.name}' is required in Sentinel mode"
        if mode == CLUSTER and (context.property(DATABASE_INDEX).evaluate().value or "0").strip() != "0":
            yield f"'{DATABASE_INDEX.name}' must be 0 in Cluster mode"

    def on_enabled(self, context, init) -> None:
        def value(descriptor):
            return context.property(descriptor).evaluate().value

        self._mode = context.property(REDIS_MODE).value
        timeout = context.property(COMMUNICATION_TIMEOUT).as_duration()
        max_total = context.property(POOL_MAX_TOTAL).as_int()
        if context.property(POOL_TEST_ON_BORROW).as_bool():
            health_check = 0.001
        elif context.property(POOL_TEST_WHILE_IDLE).as_bool():
            health_check = context.property(POOL_TIME_BETWEEN_EVICTION_RUNS).as_duration()
        else:
            health_check = 0
        options = {"db": int(value(DATABASE_INDEX)), "username": value(USERNAME), "password": value(PASSWORD),
                   "socket_timeout": timeout, "socket_connect_timeout": timeout,
                   "health_check_interval": health_check}
        max_connections = max_total if max_total >= 0 else None
        addresses = [_address(part.strip()) for part in value(CONNECTION_STRING).split(",")]
        policy = init.confinement
        if self._mode != STANDALONE:
            _check_discovering(policy, self._mode, addresses)
        if self._mode == CLUSTER:
            options.pop("db")
            self._cluster_options = {"startup_nodes": [ClusterNode(host, port) for host, port in addresses],
                                     "max_redirects": context.property(CLUSTER_MAX_REDIRECTS).as_int(),
                                     "max_connections": max_connections or 2 ** 31, **options}
            return
        if self._mode == SENTINEL:
            sentinels = Sentinel(addresses, socket_timeout=timeout, sentinel_kwargs={
                "username": value(SENTINEL_USERNAME), "password": value(SENTINEL_PASSWORD),
                "socket_timeout": timeout, "socket_connect_timeout": timeout})
            self._client = sentinels.master_for(value(SENTINEL_MASTER), max_connections=max_connections, **options)
            return
        host, port = addresses[0]
        options["connection_class"] = _confined_connection(policy)
        if max_connections is not None and context.property(POOL_BLOCK_WHEN_EXHAUSTED).as_bool():
            pool = redis.BlockingConnectionPool(host=host, port=port, max_connections=max_connections,
                                                timeout=context.property(POOL_MAX_WAIT_TIME).as_duration(), **options)
        else:
            pool = redis.ConnectionPool(host=host, port=port, max_connections=max_connections, **options)
        self._client = redis.Redis(connection_pool=pool)

    def on_disabled(self) -> None:
        with self._lock:
            client, self._client, self._cluster_options = self._client, None, None
        if isinstance(client, RedisCluster):
            client.close()
        elif client is not None:
            client.connection_pool.disconnect()


def _confined_connection(policy: Policy) -> type[redis.Connection]:
    """A redis-py connection class whose sockets go through ``policy`` (checked at connect time)."""

    class ConfinedConnection(redis.Connection):
        def _connect(self):
            sock = policy.connect(self.host, self.port, timeout=self.socket_connect_timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.socket_keepalive:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            sock.settimeout(self.socket_timeout)
            return sock

    return ConfinedConnection


def _check_discovering(policy: Policy, mode: str, addresses: list[tuple[str, int]]) -> None:
    """Sentinel and Cluster clients connect to servers they discover, which redis-py connects to
    without a policy: a tenant may not use them, the operator's configured servers are checked."""
    if policy.tenant is not None:
        raise ConfinementError(f"Redis {mode} mode", f"it reaches servers it discovers, which confinement cannot "
                               f"check; tenant {policy.tenant.slug} may use {STANDALONE} mode")
    for host, port in addresses:
        policy.check_destination(host, port)


def _cluster(options: dict) -> RedisCluster:
    """A cluster client; it asks the nodes for the slot map at once, so it is made on first use."""
    options = dict(options)
    max_redirects = options.pop("max_redirects")
    try:
        client = RedisCluster(**options)
    except RedisClusterException as error:
        raise redis.ConnectionError(f"cannot reach the Redis Cluster: {error}") from error
    # redis-py reads its redirection limit from this attribute for each command.
    client.RedisClusterRequestTTL = max_redirects
    return client


def _address(text: str) -> tuple[str, int] | None:
    host, _, port = text.rpartition(":")
    if not host.strip() or not port.strip().isdigit():
        return None
    return host.strip(), int(port)
