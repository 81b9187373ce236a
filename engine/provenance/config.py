"""Settings of the provenance repository, parsed from NiFi-style strings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from engine.settings import (
    as_bool, as_choice, as_data_size, as_duration, as_int, as_names, settings_from_mapping,
)

__all__ = ["ProvenanceConfig"]

_COMPRESSIONS = ("zstd", "none")


@dataclass(frozen=True)
class ProvenanceConfig:
    """Tuning of one provenance repository; durations in seconds, sizes in bytes.

    ``rollover_time``/``rollover_size`` bound how long events wait in the journals before they
    become searchable. A shard is closed (the next rollover starts a new one) when its events
    span ``shard_duration`` or its files reach ``shard_size``; shards are the unit of retention.
    ``max_backlog_events`` bounds the events held in memory while the disk refuses them.
    """

    journal_count: int = 16
    rollover_time: float = 30.0
    rollover_size: int = 100 << 20
    max_storage_time: float = 24 * 3600.0
    max_storage_size: int = 1 << 30
    shard_duration: float = 3600.0
    shard_size: int = 128 << 20
    compression: str = "zstd"
    indexed_attributes: tuple[str, ...] = ()
    always_sync: bool = False
    maintenance_interval: float = 60.0
    max_backlog_events: int = 100_000

    def __post_init__(self) -> None:
        positive = ("journal_count", "rollover_time", "rollover_size", "max_storage_time",
                    "max_storage_size", "shard_duration", "shard_size", "maintenance_interval", "max_backlog_events")
        for name in positive:
            if getattr(self, name) <= 0:
                raise ValueError(f"provenance setting {name!r} must be positive, got {getattr(self, name)!r}")
        if self.compression not in _COMPRESSIONS:
            raise ValueError(
                f"provenance setting 'compression' must be one of {_COMPRESSIONS}, got {self.compression!r}"
            )

    @property
    def effective_shard_size(self) -> int:
        """The size at which a shard closes: at most a quarter of the storage limit.

        Size retention never deletes the shard being written, so capping it keeps one shard from
        holding the whole budget.
        """
        return max(1, min(self.shard_size, self.max_storage_size // 4))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> ProvenanceConfig:
        """Build a config from ``values`` such as ``{"rollover-time": "30 secs", "max-storage-size": "1 GB"}``.

        Keys may use dashes or underscores. Raises ValueError naming the offending key.
        """
        return settings_from_mapping(cls, values, _PARSERS, "provenance repository")


_PARSERS = {
    "journal_count": as_int,
    "rollover_time": as_duration,
    "rollover_size": as_data_size,
    "max_storage_time": as_duration,
    "max_storage_size": as_data_size,
    "shard_duration": as_duration,
    "shard_size": as_data_size,
    "compression": as_choice(*_COMPRESSIONS),
    "indexed_attributes": as_names,
    "always_sync": as_bool,
    "maintenance_interval": as_duration,
    "max_backlog_events": as_int,
}
