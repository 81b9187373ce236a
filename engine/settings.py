"""Reading settings written the way NiFi writes them (``'2 mins'``, ``'50 KB'``, ``'90%'``).

Each repository's config class names a parser per field; :func:`settings_from_mapping` turns
a mapping into keyword arguments, and every error names the setting it is about.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Callable, Mapping, TypeVar

from engine.units import parse_data_size, parse_duration

__all__ = [
    "settings_from_mapping",
    "as_bool",
    "as_int",
    "as_duration",
    "as_optional_duration",
    "as_data_size",
    "as_percentage",
    "as_names",
    "as_choice",
]

C = TypeVar("C")

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})
_UNLIMITED = frozenset({"", "none", "unlimited", "forever"})


def settings_from_mapping(
    cls: type[C], values: Mapping[str, Any], parsers: Mapping[str, Callable[[Any], Any]], section: str
) -> C:
    """Build ``cls`` from ``values``; keys may use dashes or dots for underscores.

    Missing keys keep their defaults. Raises ValueError naming ``section`` and the key for an
    unknown key or a value its parser refuses.
    """
    known = {field.name for field in fields(cls)}
    parsed: dict[str, Any] = {}
    for raw_key, value in values.items():
        key = raw_key.replace("-", "_").replace(".", "_")
        if key not in known:
            raise ValueError(f"unknown {section} setting {raw_key!r} (known: {', '.join(sorted(known))})")
        try:
            parsed[key] = parsers[key](value)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{section} setting {raw_key!r}: {error}") from None
    try:
        return cls(**parsed)
    except ValueError as error:
        raise ValueError(f"{section} settings: {error}") from None


def as_bool(value: Any) -> bool:
    """``true``/``false`` (also yes/no, on/off, 1/0)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"not a boolean: {value!r} (expected 'true' or 'false')")


def as_int(value: Any) -> int:
    """A whole number."""
    if isinstance(value, bool):
        raise ValueError(f"not an integer: {value!r}")
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        raise ValueError(f"not an integer: {value!r}") from None


def as_duration(value: Any) -> float:
    """Seconds, from a NiFi duration such as ``'30 secs'`` or a number of seconds."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"not a duration: {value!r} (expected e.g. '30 secs')")
    return parse_duration(value)


def as_optional_duration(value: Any) -> float | None:
    """A duration, or None for ``none``/``unlimited``."""
    if value is None or (isinstance(value, str) and value.strip().lower() in _UNLIMITED):
        return None
    return as_duration(value)


def as_data_size(value: Any) -> int:
    """Bytes, from a NiFi data size such as ``'50 KB'`` or a number of bytes."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"not a data size: {value!r} (expected e.g. '50 KB')")
    return parse_data_size(value)


def as_percentage(value: Any) -> float:
    """A percentage such as ``'90%'`` or ``90``."""
    if isinstance(value, bool):
        raise ValueError(f"not a percentage: {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip().removesuffix("%").strip())
    except ValueError:
        raise ValueError(f"not a percentage: {value!r} (expected e.g. '90%')") from None


def as_names(value: Any) -> tuple[str, ...]:
    """Names, from a comma-separated string or a list."""
    if isinstance(value, str):
        return tuple(name.strip() for name in value.split(",") if name.strip())
    return tuple(str(name) for name in value)


def as_choice(*choices: str) -> Callable[[Any], str]:
    """A parser accepting one of ``choices`` (case-insensitive)."""
    def parse(value: Any) -> str:
        text = str(value).strip().lower()
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, not {value!r}")
        return text
    return parse
