"""Expression value types, NiFi's coercions between them, and how each renders as a property value."""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from enum import Enum
from typing import Union

from engine.expression.dates import DEFAULT_PATTERN, compile_pattern, resolve_zone
from engine.expression.instants import Instant, check_amount, to_instant
from engine.expression.json_functions import compile_path
from engine.expression.pattern_mapping import mapping_rules
from engine.java_regex import java_regex, java_replacement
from engine.java_text import java_double

__all__ = ["Type", "Value", "coerce", "render", "to_string", "to_number", "to_whole", "to_decimal", "to_boolean",
           "to_date", "to_instant", "compatible", "java_double", "java_regex", "java_replacement", "Instant"]

Value = Union[str, int, float, bool, datetime, Instant, list, None]


class Type(Enum):
    """Static types of expression values, plus the parameter kinds that are converted once at compile time."""

    STRING = "String"
    NUMBER = "Number"
    WHOLE = "whole Number"
    DECIMAL = "Decimal"
    BOOLEAN = "Boolean"
    DATE = "Date"
    INSTANT = "Instant"
    ANY = "any"
    MULTI = "multi-attribute"
    REGEX = "regular expression"
    DATE_PATTERN = "date pattern"
    ZONE = "time zone"
    AMOUNT = "date amount"
    JSON_PATH = "JSON path"
    PATTERN_MAPPING = "pattern mapping"


_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(Infinity|NaN)")
_HEX = re.compile(r"([+-]?)0[xX]([0-9a-fA-F]+)")
_HEX_DECIMAL = re.compile(r"[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)([pP][+-]?\d+)?")
_DATE_TO_STRING = re.compile(r"(?:[a-zA-Z]{3} ){2}\d{2} \d{2}:\d{2}:\d{2} .*? \d{4}")
_ALTERNATE_DATE = re.compile(r"\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(\.\d{3})?")
_LONG_MIN, _LONG_MAX = -2**63, 2**63 - 1


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
        return java_double(value)
    if isinstance(value, datetime):
        return compile_pattern(DEFAULT_PATTERN).format(value)
    if isinstance(value, Instant):
        return str(value)
    raise ValueError(f"cannot convert {value!r} to a string")


def _parse_number(text: str) -> int | float | None:
    text = text.strip()
    if _INTEGER.fullmatch(text):
        return int(text)
    hex_match = _HEX.fullmatch(text)
    if hex_match:
        number = int(hex_match.group(2), 16)
        return -number if hex_match.group(1) == "-" else number
    if _DECIMAL.fullmatch(text):
        return float(text)
    if _HEX_DECIMAL.fullmatch(text):
        body = text if "p" in text.lower() else text + "p0"
        return float.fromhex(body)
    return None


def to_number(value: Value) -> int | float | None:
    """Coerce to a whole Number (int) or Decimal (float); a Date or Instant becomes epoch milliseconds.

    Null and text that is no number give null, as in NiFi.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"cannot convert {render(value)} to a number")
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    if isinstance(value, Instant):
        return value.epoch_millis
    return _parse_number(value)  # type: ignore[arg-type]


def to_whole(value: Value) -> int | None:
    """Coerce to a whole Number; decimals are truncated toward zero (Java's ``longValue``)."""
    number = to_number(value)
    if number is None or isinstance(number, int):
        return number
    if math.isnan(number):
        return 0
    if math.isinf(number):
        return _LONG_MAX if number > 0 else _LONG_MIN
    return max(_LONG_MIN, min(_LONG_MAX, int(number)))


def to_decimal(value: Value) -> float | None:
    """Coerce to a Decimal."""
    number = to_number(value)
    return None if number is None else float(number)


def to_boolean(value: Value) -> bool | None:
    """Coerce to Boolean as NiFi does: ``true`` in any case is true, any other text false; null stays null."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() == "true"
    raise ValueError(f"cannot convert {render(value)!r} to a boolean")


def to_date(value: Value) -> datetime | None:
    """Coerce to Date: numbers are epoch milliseconds; text is digits (epoch milliseconds), the default format
    (``Tue Mar 05 14:07:09 UTC 2024``) or ``yyyy/MM/dd HH:mm:ss[.SSS]`` (UTC)."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, Instant):
        return value.to_datetime()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(int(value) / 1000, tz=timezone.utc)
    if isinstance(value, str):
        text = value.strip()
        if _DATE_TO_STRING.fullmatch(text):
            return compile_pattern(DEFAULT_PATTERN).parse(text)
        if text.isdigit():
            return datetime.fromtimestamp(int(text) / 1000, tz=timezone.utc)
        alternate = _ALTERNATE_DATE.fullmatch(text)
        if alternate:
            pattern = "yyyy/MM/dd HH:mm:ss.SSS" if alternate.group(1) else "yyyy/MM/dd HH:mm:ss"
            return compile_pattern(pattern).parse(text)
        raise ValueError(f"cannot convert {text!r} to a date (expected epoch milliseconds, "
                         f"'{DEFAULT_PATTERN}' or 'yyyy/MM/dd HH:mm:ss[.SSS]'; use toDate(format) for others)")
    raise ValueError(f"cannot convert {render(value)!r} to a date")


_NUMERIC_SOURCES = {Type.STRING, Type.ANY, Type.NUMBER, Type.WHOLE, Type.DECIMAL, Type.DATE, Type.INSTANT}
_COERCIBLE = {
    Type.NUMBER: _NUMERIC_SOURCES,
    Type.WHOLE: _NUMERIC_SOURCES,
    Type.DECIMAL: _NUMERIC_SOURCES,
    Type.BOOLEAN: {Type.STRING, Type.ANY, Type.BOOLEAN},
    Type.DATE: _NUMERIC_SOURCES,
    Type.INSTANT: _NUMERIC_SOURCES,
}


def compatible(source: Type, required: Type) -> bool:
    """Whether a value of static type ``source`` can be coerced to ``required`` (strings defer to run time)."""
    if source is Type.MULTI:
        return False
    allowed = _COERCIBLE.get(required)
    return allowed is None or source in allowed


def coerce(value: Value, required: Type) -> object:
    """Convert a value for a parameter or subject of type ``required``; a null String becomes empty, other
    nulls stay null."""
    if required is Type.ANY:
        return value
    if required is Type.STRING:
        text = to_string(value)
        return "" if text is None else text
    if required is Type.NUMBER:
        return to_number(value)
    if required is Type.WHOLE:
        return to_whole(value)
    if required is Type.DECIMAL:
        return to_decimal(value)
    if required is Type.BOOLEAN:
        return to_boolean(value)
    if required is Type.DATE:
        return to_date(value)
    if required is Type.INSTANT:
        return to_instant(value)
    if required is Type.REGEX:
        return java_regex(render(value))
    if required is Type.DATE_PATTERN:
        return compile_pattern(render(value))
    if required is Type.ZONE:
        return resolve_zone(render(value))
    if required is Type.AMOUNT:
        text = render(value)
        check_amount(text)
        return text
    if required is Type.JSON_PATH:
        return compile_path(render(value))
    if required is Type.PATTERN_MAPPING:
        return mapping_rules(render(value))
    raise ValueError(f"no value converts to {required.value}")
