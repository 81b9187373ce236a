"""Settings of the FlowFile repository."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from engine.settings import as_bool, as_choice, as_duration, settings_from_mapping
from engine.wal import SyncPolicy

__all__ = ["FlowFileRepositoryConfig"]


@dataclass(frozen=True)
class FlowFileRepositoryConfig:
    """Parsed FlowFile repository settings.

    ``sync_policy``: ``always``, ``grouped`` (default) or ``os`` — see ``SyncPolicy``.
    ``checkpoint_interval``: seconds between checkpoints (default 2 minutes, as seed 001 says).
    ``accept_damage``: start even though the write-ahead log is damaged — copy the log's files to
    the quarantine folder first, recover everything readable and report what was given up —
    instead of refusing to start.
    ``transfer_mark_window``: seconds the marks of FlowFiles received from peer nodes are kept
    (default a day): a batch a peer sends again within it is not taken twice.
    """

    sync_policy: SyncPolicy = SyncPolicy.GROUPED
    checkpoint_interval: float = 120.0
    accept_damage: bool = False
    transfer_mark_window: float = 24 * 3600.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sync_policy", SyncPolicy(self.sync_policy))
        if self.checkpoint_interval <= 0:
            raise ValueError(f"checkpoint_interval must be positive, not {self.checkpoint_interval}")
        if self.transfer_mark_window <= 0:
            raise ValueError(f"transfer_mark_window must be positive, not {self.transfer_mark_window}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> FlowFileRepositoryConfig:
        """Build a config from NiFi-style values (``'2 mins'``); errors name the key."""
        return settings_from_mapping(cls, values, _PARSERS, "FlowFile repository")


_PARSERS = {
    "sync_policy": lambda value: SyncPolicy(as_choice(*(policy.value for policy in SyncPolicy))(value)),
    "checkpoint_interval": as_duration,
    "accept_damage": as_bool,
    "transfer_mark_window": as_duration,
}
