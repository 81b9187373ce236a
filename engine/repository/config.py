"""Settings of the FlowFile repository."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

from engine.units import parse_duration
from engine.wal import SyncPolicy

__all__ = ["FlowFileRepositoryConfig"]


@dataclass(frozen=True)
class FlowFileRepositoryConfig:
    """Parsed FlowFile repository settings.

    ``sync_policy``: ``always``, ``grouped`` (default) or ``os`` — see ``SyncPolicy``.
    ``checkpoint_interval``: seconds between checkpoints (default 2 minutes, as seed 001 says).
    ``skip_corrupt_journal``: discard journal data after a corruption instead of refusing to start.
    """

    sync_policy: SyncPolicy = SyncPolicy.GROUPED
    checkpoint_interval: float = 120.0
    skip_corrupt_journal: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "sync_policy", SyncPolicy(self.sync_policy))
        if self.checkpoint_interval <= 0:
            raise ValueError(f"checkpoint_interval must be positive, not {self.checkpoint_interval}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> FlowFileRepositoryConfig:
        """Build a config from NiFi-style values (``'2 mins'``); errors name the key."""
        known = {field.name for field in fields(cls)}
        parsed: dict[str, Any] = {}
        for raw_key, value in values.items():
            key = raw_key.replace("-", "_")
            try:
                if key == "sync_policy":
                    parsed[key] = SyncPolicy(str(value).lower())
                elif key == "checkpoint_interval":
                    parsed[key] = parse_duration(value)
                elif key == "skip_corrupt_journal":
                    if not isinstance(value, bool):
                        raise ValueError(f"expected true or false, not {value!r}")
                    parsed[key] = value
                else:
                    raise ValueError(f"unknown setting (known: {', '.join(sorted(known))})")
            except ValueError as error:
                raise ValueError(f"FlowFile repository setting {raw_key!r}: {error}") from None
        return cls(**parsed)
