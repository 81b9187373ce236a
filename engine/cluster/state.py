"""Cluster-scoped component state in Redis (where NiFi keeps it in ZooKeeper).

A component's state is the hash ``state:<component>``: its values plus ``__version``. A write
made while this node holds the primary role carries the primary lease's value and is refused
when the lease has moved on, so a former primary cannot overwrite what its successor listed.
The node's agent points the provider at Redis once the node has joined a cluster; a node that
never reached Redis keeps cluster-scoped state in its local provider, as a standalone node does.
Every write to Redis is also kept locally, and a component with no state in Redis reads the
local copy: the state a node kept while it ran standalone, or before Redis restarted empty,
is where a listing continues instead of starting over.
"""

from __future__ import annotations

from typing import Callable, Mapping

import redis

from engine.cluster.keys import ClusterKeys
from engine.components.state import Scope, StateMap
from engine.runtime.state import LocalStateProvider

__all__ = ["ClusterStateProvider", "StaleStateWriteError"]

VERSION = "__version"

_SET = """
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return -2
end
local version = tonumber(redis.call('HGET', KEYS[1], '__version') or '-1')
if ARGV[2] ~= '' and tonumber(ARGV[2]) ~= version then
  return -1
end
redis.call('DEL', KEYS[1])
local fields = {'__version', version + 1}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], unpack(fields))
return version + 1
"""

_CLEAR = """
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return -2
end
redis.call('DEL', KEYS[1])
return 0
"""


class StaleStateWriteError(RuntimeError):
    """A write of cluster state by a node that no longer holds the primary role."""


class ClusterStateProvider:
    """Cluster-scoped state: in Redis while ``client`` is set, else in ``local``.

    ``fence()`` returns the primary lease's value while this node holds the role (writes are then
    conditional on it), or "" when it does not.
    """

    def __init__(self, local: LocalStateProvider, keys: ClusterKeys, fence: Callable[[], str] = lambda: "") -> None:
        self.local = local
        self.keys = keys
        self.fence = fence
        self.client: redis.Redis | None = None
        self._set_script = None
        self._clear_script = None

    def use(self, client: redis.Redis | None) -> None:
        """Keep state in Redis through ``client`` (None: locally)."""
        self.client = client
        if client is not None:
            self._set_script = client.register_script(_SET)
            self._clear_script = client.register_script(_CLEAR)

    def get(self, component_id: str, scope: Scope) -> StateMap:
        """The component's state."""
        if self.client is None:
            return self.local.get(component_id, scope)
        raw = self.client.hgetall(self.keys.state(component_id))
        if not raw:  # the local copy, at the version Redis has (none)
            return StateMap(self.local.get(component_id, scope).values)
        values = {k.decode(): v.decode() for k, v in raw.items()}
        version = int(values.pop(VERSION, -1))
        return StateMap(values, version)

    def set(self, component_id: str, values: Mapping[str, str], scope: Scope, expected_version: int | None = None) -> bool:
        """Store ``values``; with ``expected_version``, only if the state is still at that version.
        Raises StaleStateWriteError when this node lost the primary role meanwhile."""
        if self.client is None:
            return self.local.set(component_id, values, scope, expected_version)
        args = [self.fence(), "" if expected_version is None else str(expected_version)]
        for key, value in values.items():
            args += [str(key), str(value)]
        result = int(self._set_script(keys=[self.keys.state(component_id), self.keys.lock("primary")], args=args))
        if result == -2:
            raise StaleStateWriteError(f"state of {component_id} not saved: this node is no longer the primary node")
        if result >= 0:
            self.local.set(component_id, values, scope)
        return result >= 0

    def clear(self, component_id: str, scope: Scope) -> None:
        """Forget the component's state."""
        if self.client is None:
            self.local.clear(component_id, scope)
            return
        result = int(self._clear_script(keys=[self.keys.state(component_id), self.keys.lock("primary")],
                                        args=[self.fence()]))
        if result == -2:
            raise StaleStateWriteError(f"state of {component_id} not cleared: this node is no longer the primary node")
        self.local.clear(component_id, scope)
