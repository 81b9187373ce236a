"""Component state: small key/value maps a processor keeps between runs (a lister's position).

State has a scope. ``LOCAL`` state lives on the node's disk; ``CLUSTER`` state is shared by
every node of a cluster (a new primary node continues where the old one stopped). A node that
is not part of a cluster keeps cluster-scoped state locally.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Mapping, Protocol

__all__ = ["Scope", "StateMap", "StateManager"]


class Scope(str, Enum):
    """Where a piece of component state lives."""

    LOCAL = "LOCAL"
    CLUSTER = "CLUSTER"


@dataclass(frozen=True)
class StateMap:
    """A component's state in one scope: its values and a version that grows with each change.

    ``version`` is -1 while no state was ever stored.
    """

    values: Mapping[str, str] = field(default_factory=dict)
    version: int = -1

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value stored under ``key``."""
        return self.values.get(key, default)


class StateManager(Protocol):
    """A component's view of its state."""

    def get_state(self, scope: Scope) -> StateMap:
        """The current state in ``scope``."""

    def set_state(self, values: Mapping[str, str], scope: Scope) -> None:
        """Replace the state in ``scope`` with ``values``."""

    def replace(self, expected: StateMap, values: Mapping[str, str], scope: Scope) -> bool:
        """Replace the state only if it is still at ``expected.version``; True if replaced."""

    def clear(self, scope: Scope) -> None:
        """Remove the state in ``scope``."""
