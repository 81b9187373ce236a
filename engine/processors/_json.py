"""JSON text as NiFi's Jackson writes it: compact or pretty-printed documents, and scalars as
Java prints them (``1.0E20``, ``true``)."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

__all__ = ["compact", "java_double", "pretty", "scalar_text"]


def java_double(value: float) -> str:
    """A float as Java's ``Double.toString`` prints it: ``1.5``, ``100.0``, ``1.0E20``, ``1.0E-5``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(float(value))
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits))
    power = len(digits) + exponent - 1
    shown = text.rstrip("0") or "0"
    return f"{'-' if sign else ''}{shown[0]}.{shown[1:] or '0'}E{power}"


def scalar_text(value: Any, null: str) -> str:
    """A scalar as NiFi turns a JsonPath result into text (``null`` stands for a JSON null)."""
    if value is None:
        return null
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    return str(value)


_ESCAPE = re.compile(r"(\\\\)|\\u([0-9a-f]{4})")


def _string(value: str) -> str:
    """A JSON string with control characters escaped as Jackson escapes them (``\\u001F``)."""
    return _ESCAPE.sub(lambda m: m.group(1) or "\\u" + m.group(2).upper(), json.dumps(value, ensure_ascii=False))


def _token(value: Any) -> str:
    if isinstance(value, float) and math.isfinite(value):
        return java_double(value)
    if isinstance(value, str):
        return _string(value)
    return json.dumps(value, ensure_ascii=False)


def compact(value: Any) -> str:
    """``value`` as Jackson's default writer writes it: no spaces."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{_string(key)}:{compact(item)}"
                              for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(compact(item) for item in value) + "]"
    return _token(value)


def pretty(value: Any, depth: int = 0) -> str:
    """``value`` indented like Jackson's default pretty printer: objects one member per line
    indented by two spaces with `` : `` between name and value, arrays on one line."""
    if isinstance(value, dict):
        if not value:
            return "{ }"
        inner = "  " * (depth + 1)
        members = [f"{inner}{_string(key)} : {pretty(item, depth + 1)}"
                   for key, item in value.items()]
        return "{\n" + ",\n".join(members) + "\n" + "  " * depth + "}"
    if isinstance(value, list):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(pretty(item, depth) for item in value) + " ]"
    return _token(value)
