"""Settings of a node's clustering (the ``cluster`` section of the node's settings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from engine.settings import as_duration, as_int, settings_from_mapping

__all__ = ["ClusterConfig"]


@dataclass(frozen=True)
class ClusterConfig:
    """How a node takes part in a cluster (NiFi's defaults, durations in seconds).

    A node heartbeats every ``heartbeat_interval`` and is disconnected once it missed
    ``missed_heartbeats`` of them. A role's lease lasts ``lease_factor`` heartbeat intervals and
    is renewed (or tried for) every half interval, so a dead holder is replaced within one and a
    half intervals (two at most, ``lease_factor`` 1.5). The flow election ends after ``election_max_wait`` or as soon as
    ``election_max_candidates`` nodes (0: no such limit) have voted.
    """

    heartbeat_interval: float = 5.0
    missed_heartbeats: int = 8
    lease_factor: float = 1.0
    election_max_wait: float = 300.0
    election_max_candidates: int = 0

    def __post_init__(self) -> None:
        if self.heartbeat_interval <= 0:
            raise ValueError("cluster: heartbeat_interval must be positive")
        if self.missed_heartbeats < 1:
            raise ValueError("cluster: missed_heartbeats must be at least 1")
        if not 0.75 < self.lease_factor <= 1.5:
            raise ValueError("cluster: lease_factor must be above 0.75 and at most 1.5 (takeover within two intervals)")
        if self.election_max_candidates < 0:
            raise ValueError("cluster: election_max_candidates must not be negative")

    @property
    def lease_ttl(self) -> float:
        """How long a role's lease lasts without renewal."""
        return self.heartbeat_interval * self.lease_factor

    @property
    def heartbeat_ttl(self) -> float:
        """How long a heartbeat key lives: the node's presence."""
        return self.heartbeat_interval * self.missed_heartbeats

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> ClusterConfig:
        """Build from a mapping such as ``{"heartbeat-interval": "5 sec", "missed-heartbeats": 8}``."""
        parsers = {"heartbeat_interval": as_duration, "missed_heartbeats": as_int, "lease_factor": float,
                   "election_max_wait": as_duration, "election_max_candidates": as_int}
        return settings_from_mapping(cls, values, parsers, "cluster")
