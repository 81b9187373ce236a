"""Settings of the file-system content repository."""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields
from typing import Any, Mapping

from engine.units import parse_data_size, parse_duration

__all__ = ["ContentConfig", "MAX_APPENDABLE_SIZE_CAP"]

log = logging.getLogger(__name__)

MAX_APPENDABLE_SIZE_CAP = 100 << 20
"""Upper bound of ``max_appendable_size``; larger settings are lowered to it, as NiFi does."""

_UNLIMITED = frozenset({"", "none", "unlimited", "forever"})
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


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
        known = {field.name for field in fields(cls)}
        parsed: dict[str, Any] = {}
        for raw_key, value in values.items():
            key = raw_key.replace("-", "_")
            if key not in known:
                raise ValueError(
                    f"unknown content repository setting {raw_key!r} (known: {', '.join(sorted(known))})"
                )
            try:
                parsed[key] = _PARSERS[key](value)
            except (TypeError, ValueError) as error:
                raise ValueError(f"content repository setting {raw_key!r}: {error}") from None
        try:
            return cls(**parsed)
        except ValueError as error:
            raise ValueError(f"content repository settings: {error}") from None


def _parse_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"not an integer: {value!r}")
    if isinstance(value, int):
        return value
    text = str(value).strip()
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"not an integer: {value!r}") from None


def _parse_size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"not a data size: {value!r} (expected e.g. '50 KB')")
    return parse_data_size(value)


def _parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"not a boolean: {value!r} (expected 'true' or 'false')")


def _parse_duration(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"not a duration: {value!r} (expected e.g. '3 hours')")
    return parse_duration(value)


def _parse_retention(value: Any) -> float | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in _UNLIMITED):
        return None
    return _parse_duration(value)


def _parse_percentage(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"not a percentage: {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip().removesuffix("%").strip()
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"not a percentage: {value!r} (expected e.g. '90%')") from None


_PARSERS = {
    "sections": _parse_int,
    "max_appendable_size": _parse_size,
    "archive_enabled": _parse_bool,
    "archive_max_retention": _parse_retention,
    "archive_max_usage_percentage": _parse_percentage,
    "cleanup_interval": _parse_duration,
}
