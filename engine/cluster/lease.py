"""Roles held as leases in Redis, with fencing tokens.

A role (coordinator, primary) is the key ``lock:<role>`` holding ``<node> <token>``, set with an
expiry. Taking a free role draws the next token from ``fence:<role>``, a counter that only
grows; renewing extends the expiry only while the key still holds this node's value. Each step
is one Lua script, so two nodes never both believe they took the role from Redis's point of
view. Writes made in a role (the coordinator's node records, the primary's cluster state)
check in the same script that the key still holds the writer's value, so a former holder that
wakes up late cannot overwrite its successor's work.
"""

from __future__ import annotations

import time

import redis

from engine.cluster.keys import ClusterKeys

__all__ = ["Lease"]

_ACQUIRE = """
local current = redis.call('GET', KEYS[1])
if current == false then
  local token = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. token, 'PX', ARGV[2])
  return token
end
local space = string.find(current, ' ', 1, true)
if space and string.sub(current, 1, space - 1) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return tonumber(string.sub(current, space + 1))
end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class Lease:
    """This node's claim on one role (see the module docstring).

    ``hold()`` takes or renews the lease and answers whether this node holds it; ``token`` is the
    fencing token of the current tenure. ``valid`` stays true only while the last successful
    renewal is recent enough that the lease cannot have expired in Redis (``ttl`` minus a safety
    margin), so a holder cut off from Redis steps down before anyone else can take over.
    """

    def __init__(self, client: redis.Redis, keys: ClusterKeys, role: str, node_id: str, ttl: float) -> None:
        self.client = client
        self.keys = keys
        self.role = role
        self.node_id = node_id
        self.ttl = ttl
        self.token = 0
        self._renewed_at = 0.0
        self._acquire = client.register_script(_ACQUIRE)
        self._release = client.register_script(_RELEASE)

    @property
    def value(self) -> str:
        """What ``lock:<role>`` holds while this node has the role."""
        return f"{self.node_id} {self.token}"

    @property
    def valid_until(self) -> float:
        """The ``time.monotonic()`` moment until which this node may act in the role."""
        return self._renewed_at + self.ttl * 0.75 if self.token else 0.0

    @property
    def valid(self) -> bool:
        """True while this node may act in the role (see the class docstring)."""
        return time.monotonic() < self.valid_until

    def hold(self) -> bool:
        """Take the role if it is free, renew it if this node has it; True when this node holds it.

        A Redis error leaves the lease to run out (``valid`` turns false in time) and propagates.
        """
        started = time.monotonic()
        token = int(self._acquire(keys=[self.keys.lock(self.role), self.keys.fence(self.role)],
                                  args=[self.node_id, int(self.ttl * 1000)]))
        if token:
            self.token = token
            self._renewed_at = started
            return True
        self.token = 0
        return False

    def release(self) -> None:
        """Give the role up now (when this node stops or leaves the cluster)."""
        if self.token:
            try:
                self._release(keys=[self.keys.lock(self.role)], args=[self.value])
            except redis.RedisError:
                pass
        self.token = 0
