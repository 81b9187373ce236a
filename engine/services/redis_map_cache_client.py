"""RedisDistributedMapCacheClientService: a DistributedMapCacheClient kept in Redis."""

from __future__ import annotations

import redis

from engine.components import ControllerService, PropertyDescriptor
from engine.components import validators as v
from engine.services.apis import DistributedMapCacheClient, RedisConnectionPool

__all__ = ["RedisDistributedMapCacheClientService"]

REDIS_CONNECTION_POOL = PropertyDescriptor(
    "redis-connection-pool", display_name="Redis Connection Pool", description="The Redis connections to use.",
    required=True, service=RedisConnectionPool)
TTL = PropertyDescriptor(
    "redis-cache-ttl", display_name="TTL", description="How long an entry lives in Redis after it is written; "
    "'0 secs': forever.", required=True, default="0 secs", validators=[v.TIME_PERIOD])

# Returns the value under KEYS[1] when there is one; otherwise stores ARGV[1] (expiring after
# ARGV[2] milliseconds unless that is 0) and returns nil. A script runs atomically.
_GET_AND_PUT_IF_ABSENT = """
local current = redis.call('GET', KEYS[1])
if current then
    return current
end
if ARGV[2] == '0' then
    redis.call('SET', KEYS[1], ARGV[1])
else
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return false
"""


class RedisDistributedMapCacheClientService(ControllerService, DistributedMapCacheClient):
    """Gives processors a key/value cache kept in Redis, shared by every node that uses the same
    Redis.

    Each operation is one Redis command, so each is atomic: put-if-absent is ``SET NX``, and
    get-and-put-if-absent is a small Lua script (a ``GET`` then a ``SET`` when the key is
    absent, run atomically by Redis; ``SET NX GET`` would do the same but needs Redis 7).
    Keys are the UTF-8 bytes of the cache key, values the raw bytes. With a TTL, every write
    sets the entry to expire that long after it (read-only operations leave the expiry alone).
    Every command touches one key, so the service works with a Redis Cluster too. Redis
    failures raise an ``OSError``; processors route the FlowFile to failure.
    """

    nifi_type = "org.apache.nifi.redis.service.RedisDistributedMapCacheClientService"
    tags = ("redis", "distributed", "cache", "map")
    properties = (REDIS_CONNECTION_POOL, TTL)
    provides = (DistributedMapCacheClient,)
    see_also = ("RedisConnectionPoolService",)

    def __init__(self) -> None:
        self._pool: RedisConnectionPool | None = None
        self._ttl_ms = 0
        self._script = None

    def on_enabled(self, context, init) -> None:
        self._pool = context.property(REDIS_CONNECTION_POOL).as_service()
        self._ttl_ms = int(context.property(TTL).as_duration() * 1000)

    def on_disabled(self) -> None:
        self._pool = None
        self._script = None

    def put_if_absent(self, key: str, value: bytes) -> bool:
        return bool(self._run(lambda client: client.set(key, value, nx=True, px=self._ttl_ms or None)))

    def get_and_put_if_absent(self, key: str, value: bytes) -> bytes | None:
        def run(client):
            if self._script is None:
                self._script = client.register_script(_GET_AND_PUT_IF_ABSENT)
            return self._script(keys=[key], args=[value, self._ttl_ms], client=client)

        return self._run(run)

    def contains_key(self, key: str) -> bool:
        return bool(self._run(lambda client: client.exists(key)))

    def put(self, key: str, value: bytes) -> None:
        self._run(lambda client: client.set(key, value, px=self._ttl_ms or None))

    def get(self, key: str) -> bytes | None:
        return self._run(lambda client: client.get(key))

    def remove(self, key: str) -> bool:
        return bool(self._run(lambda client: client.delete(key)))

    def _run(self, operation):
        pool = self._pool
        if pool is None:
            raise ConnectionError("the Redis map cache client service is disabled")
        try:
            return operation(pool.client())
        except redis.TimeoutError as error:
            raise TimeoutError(f"Redis did not answer in time: {error}") from error
        except redis.ConnectionError as error:
            raise ConnectionError(f"cannot reach Redis: {error}") from error
        except (redis.RedisError, redis.exceptions.RedisClusterException) as error:
            raise OSError(f"Redis refused the operation: {type(error).__name__}: {error}") from error
