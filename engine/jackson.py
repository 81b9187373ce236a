"""JSON text as NiFi's Jackson writes it: compact or pretty-printed documents, and scalars as
Java prints them (``1.0E20``, ``true``)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from engine.java_text import java_double

__all__ = ["compact", "pretty", "scalar_text"]


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
