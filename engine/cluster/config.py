"""Settings of a node's clustering (the ``cluster`` section of the node's settings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from engine.settings import as_data_size, as_duration, as_int, settings_from_mapping

__all__ = ["ClusterConfig"]


@dataclass(frozen=True)
class ClusterConfig:
    """How a node takes part in a cluster (NiFi's defaults, durations in seconds).

    A node heartbeats every ``heartbeat_interval`` and is disconnected once it missed
    ``missed_heartbeats`` of them. A role's lease lasts ``lease_factor`` heartbeat intervals and
    is renewed (or tried for) every half interval, so a dead holder is replaced within one and a
    half intervals (two at most, ``lease_factor`` 1.5). The flow election ends after ``election_max_wait`` or as soon as
    ``election_max_candidates`` nodes (0: no such limit) have voted. Load-balanced connections
    (``engine.balance``) resend a batch not acknowledged within ``load_balance_ack_timeout`` and
    let a peer's stream hold ``load_balance_stream_cap`` entries (of up to
    ``load_balance_chunk_size`` bytes of content) at most.
    """

    heartbeat_interval: float = 5.0
    missed_heartbeats: int = 8
    lease_factor: float = 1.0
    election_max_wait: float = 300.0
    election_max_candidates: int = 0
    load_balance_ack_timeout: float = 30.0
    load_balance_stream_cap: int = 64
    load_balance_chunk_size: int = 1 << 20

    def __post_init__(self) -> None:
        if self.heartbeat_interval <= 0:
            raise ValueError("cluster: heartbeat_interval must be positive")
        if self.missed_heartbeats < 1:
            raise ValueError("cluster: missed_heartbeats must be at least 1")
        if not 0.75 < self.lease_factor <= 1.5:
            raise ValueError("cluster: lease_factor must be above 0.75 and at most 1.5 (takeover within two intervals)")
        if self.election_max_candidates < 0:
            raise ValueError("cluster: election_max_candidates must not be negative")
        if self.load_balance_ack_timeout <= 0 or self.load_balance_stream_cap < 2 or self.load_balance_chunk_size < 4096:
            raise ValueError("cluster: load_balance_ack_timeout must be positive, load_balance_stream_cap at least 2 "
                             "and load_balance_chunk_size at least 4 KB")

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
                   "election_max_wait": as_duration, "election_max_candidates": as_int,
                   "load_balance_ack_timeout": as_duration, "load_balance_stream_cap": as_int,
                   "load_balance_chunk_size": as_data_size}
        return settings_from_mapping(cls, values, parsers, "cluster")
