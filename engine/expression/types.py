"""Expression value types, NiFi's coercions between them, and how each renders as a property value."""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from enum import Enum
from typing import Union

from engine.expression.dates import DEFAULT_PATTERN, compile_pattern, resolve_zone
from engine.java_regex import java_regex, java_replacement

__all__ = ["Type", "Value", "coerce", "render", "to_string", "to_number", "to_boolean", "to_date", "compatible",
           "java_regex", "java_replacement"]

Value = Union[str, int, float, bool, datetime, list, None]


class Type(Enum):
    """Static types of expression values, plus the parameter kinds that are converted once at compile time."""

    STRING = "String"
    NUMBER = "Number"
    BOOLEAN = "Boolean"
    DATE = "Date"
    ANY = "any"
    MULTI = "multi-attribute"
    REGEX = "regular expression"
    DATE_PATTERN = "date pattern"
    ZONE = "time zone"


_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_HEX = re.compile(r"([+-]?)0[xX]([0-9a-fA-F]+)")


def _render_float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return str(int(value)) if value.is_integer() and abs(value) < 2**63 else repr(value)


def render(value: Value) -> str:
    """Return the text a value becomes in a property value; null renders as the empty string."""
    text = to_string(value)
    return "" if text is None else text


def to_string(value: Value) -> str | None:
    """Coerce to String (null stays null)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _render_float(value)
    if isinstance(value, datetime):
        return compile_pattern(DEFAULT_PATTERN).format(value)
    raise ValueError(f"cannot convert {value!r} to a string")


def to_number(value: Value) -> int | float:
    """Coerce to a whole Number (int) or Decimal (float); a Date becomes epoch milliseconds."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"cannot convert {'null' if value is None else render(value)} to a number")
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    text = value.strip()
    if _INTEGER.fullmatch(text):
        return int(text)
    hex_match = _HEX.fullmatch(text)
    if hex_match:
        number = int(hex_match.group(2), 16)
        return -number if hex_match.group(1) == "-" else number
    if _DECIMAL.fullmatch(text):
        return float(text)
    raise ValueError(f"cannot convert {value!r} to a number")


def to_boolean(value: Value) -> bool:
    """Coerce to Boolean; only the strings ``true`` and ``false`` (any case) convert."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f"cannot convert {'null' if value is None else repr(render(value))} to a boolean")


def to_date(value: Value) -> datetime:
    """Coerce to Date: numbers are epoch milliseconds, strings are epoch milliseconds or the default format."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, tz=timezone.utc)
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER.fullmatch(text):
            return datetime.fromtimestamp(int(text) / 1000, tz=timezone.utc)
        return compile_pattern(DEFAULT_PATTERN).parse(text)
    raise ValueError(f"cannot convert {'null' if value is None else repr(render(value))} to a date")


_COERCIBLE = {
    Type.NUMBER: {Type.STRING, Type.ANY, Type.NUMBER, Type.DATE},
    Type.BOOLEAN: {Type.STRING, Type.ANY, Type.BOOLEAN},
    Type.DATE: {Type.STRING, Type.ANY, Type.DATE, Type.NUMBER},
}


def compatible(source: Type, required: Type) -> bool:
    """Whether a value of static type ``source`` can be coerced to ``required`` (strings defer to run time)."""
    if source is Type.MULTI:
        return False
    allowed = _COERCIBLE.get(required)
    return allowed is None or source in allowed


def coerce(value: Value, required: Type) -> object:
    """Convert a value for a parameter or subject of type ``required``; a null String becomes empty."""
    if required is Type.ANY:
        return value
    if required is Type.STRING:
        text = to_string(value)
        return "" if text is None else text
    if required is Type.NUMBER:
        return to_number(value)
    if required is Type.BOOLEAN:
        return to_boolean(value)
    if required is Type.DATE:
        return to_date(value)
    if required is Type.REGEX:
        return java_regex(render(value))
    if required is Type.DATE_PATTERN:
        return compile_pattern(render(value))
    if required is Type.ZONE:
        return resolve_zone(render(value))
    raise ValueError(f"no value converts to {required.value}")
