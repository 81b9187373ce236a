"""Settings of the file-system content repository."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping

from engine.settings import (
    as_bool, as_data_size, as_duration, as_int, as_optional_duration, as_percentage, settings_from_mapping,
)

__all__ = ["ContentConfig", "MAX_APPENDABLE_SIZE_CAP"]

log = logging.getLogger(__name__)

MAX_APPENDABLE_SIZE_CAP = 100 << 20
"""Upper bound of ``max_appendable_size``; larger settings are lowered to it, as NiFi does."""


@dataclass(frozen=True)
class ContentConfig:
    """Parsed content repository settings (sizes in bytes, durations in seconds).

    ``max_appendable_size`` mirrors NiFi's ``nifi.content.claim.max.appendable.size``: small
    contents are appended to a shared resource-claim file until it reaches this size.
    ``archive_max_retention`` of ``None`` keeps archived content until disk usage evicts it.
    """

    sections: int = 1024
    max_appendable_size: int = 50 << 10
    archive_enabled: bool = True
    archive_max_retention: float | None = 3 * 3600.0
    archive_max_usage_percentage: float = 90.0
    cleanup_interval: float = 60.0

    def __post_init__(self) -> None:
        if self.sections < 1:
            raise ValueError(f"sections must be at least 1, not {self.sections}")
        if self.max_appendable_size < 1:
            raise ValueError(f"max_appendable_size must be positive, not {self.max_appendable_size}")
        if self.max_appendable_size > MAX_APPENDABLE_SIZE_CAP:
            log.warning(
                "max_appendable_size of %d bytes is above the cap; using %d",
                self.max_appendable_size,
                MAX_APPENDABLE_SIZE_CAP,
            )
            object.__setattr__(self, "max_appendable_size", MAX_APPENDABLE_SIZE_CAP)
        if self.archive_max_retention is not None and self.archive_max_retention <= 0:
            raise ValueError(
                f"archive_max_retention must be positive or None, not {self.archive_max_retention}"
            )
        if not 0 < self.archive_max_usage_percentage <= 100:
            raise ValueError(
                "archive_max_usage_percentage must be in (0, 100], "
                f"not {self.archive_max_usage_percentage}"
            )
        if self.cleanup_interval <= 0:
            raise ValueError(f"cleanup_interval must be positive, not {self.cleanup_interval}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> ContentConfig:
        """Build a config from NiFi-style values (``'50 KB'``, ``'3 hours'``, ``'90%'``).

        Keys are the field names; hyphens may stand for underscores. Missing keys keep their
        defaults. Raises ValueError naming the key for unknown keys and unparsable values.
        """
        return settings_from_mapping(cls, values, _PARSERS, "content repository")


_PARSERS = {
    "sections": as_int,
    "max_appendable_size": as_data_size,
    "archive_enabled": as_bool,
    "archive_max_retention": as_optional_duration,
    "archive_max_usage_percentage": as_percentage,
    "cleanup_interval": as_duration,
}
