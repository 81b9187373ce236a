"""NiFi's textual durations (``30 sec``) and data sizes (``1 GB``)."""

from __future__ import annotations

import re

__all__ = ["parse_duration", "parse_data_size", "format_data_size"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*$")
_SECONDS_PER_UNIT = {
    **dict.fromkeys(("ns", "nano", "nanos", "nanosecond", "nanoseconds"), 1e-9),
    **dict.fromkeys(("us", "micro", "micros", "microsecond", "microseconds"), 1e-6),
    **dict.fromkeys(("ms", "milli", "millis", "millisecond", "milliseconds"), 1e-3),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1.0),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60.0),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600.0),
    **dict.fromkeys(("d", "day", "days"), 86400.0),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), 604800.0),
}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")
_BYTES_PER_UNIT = {"": 1, "b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40}


def parse_duration(text: str | float | int) -> float:
    """Return the number of seconds in a NiFi duration such as ``30 sec`` or ``2 mins``.

    A bare number is taken as seconds. Raises ValueError naming the text when it is not a duration.
    """
    if isinstance(text, (int, float)):
        return float(text)
    match = _DURATION.match(text)
    if match is None:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"not a duration: {text!r} (expected e.g. '30 sec', '5 mins')") from None
    value, unit = match.groups()
    factor = _SECONDS_PER_UNIT.get(unit.lower())
    if factor is None:
        raise ValueError(f"unknown time unit {unit!r} in duration {text!r}")
    return float(value) * factor


def parse_data_size(text: str | int) -> int:
    """Return the number of bytes in a NiFi data size such as ``1 GB`` (binary units: 1 KB = 1024 B)."""
    if isinstance(text, int):
        return text
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"not a data size: {text!r} (expected e.g. '1 GB', '50 KB')")
    value, unit = match.groups()
    factor = _BYTES_PER_UNIT.get(unit.lower())
    if factor is None:
        raise ValueError(f"unknown size unit {unit!r} in data size {text!r}")
    return int(float(value) * factor)


def format_data_size(size: int) -> str:
    """Render a byte count the way NiFi does (``1.5 MB``)."""
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024:
            return f"{size} {unit}" if unit == "B" else f"{size:.1f} {unit}".replace(".0 ", " ")
        size /= 1024
    return f"{size:.1f} TB".replace(".0 ", " ")
