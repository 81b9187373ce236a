"""The JSON functions: isJson and the jsonPath family, with NiFi's semantics (Jayway JsonPath over Jackson).

A missing path reads as the empty string and leaves a document unchanged; a change the target cannot take
(adding to something that is not an array, putting into something that is not an object) gives the empty
string, as NiFi does. An empty subject, a subject that is not JSON and an invalid path are errors.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from decimal import Decimal
from typing import Any

from engine import jsonpath

__all__ = ["is_json", "json_path", "json_path_delete", "json_path_set", "json_path_add", "json_path_put",
           "to_json", "java_double"]

_DECODER = json.JSONDecoder(parse_constant=lambda name: (_ for _ in ()).throw(ValueError(f"{name} is not JSON")))


def _parse(text: str) -> Any:
    """Parse the first JSON value in ``text`` (Jackson ignores what follows it)."""
    stripped = text.lstrip(" \t\r\n")
    value, _ = _DECODER.raw_decode(stripped)
    return value


def is_json(subject: object) -> bool:
    """Whether the subject (trimmed) is a JSON object or array."""
    if not isinstance(subject, str):
        return False
    text = subject.strip()
    if not (text[:1] == "[" and text[-1:] == "]" or text[:1] == "{" and text[-1:] == "}"):
        return False
    try:
        _parse(text)
    except ValueError:
        return False
    return True


def java_double(value: float) -> str:
    """Java's Double.toString: plain between 10^-3 and 10^7, else computerized scientific notation."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7:
        text = repr(value)
        if "e" in text:  # repr may still use an exponent for some values in range
            text = format(Decimal(text), "f")
        return text if "." in text else text + ".0"
    sign, digits, exponent = Decimal(repr(magnitude)).as_tuple()
    digits_text = "".join(map(str, digits)).rstrip("0") or "0"
    power = len(digits) + exponent - 1
    mantissa = digits_text[0] + "." + (digits_text[1:] or "0")
    return ("-" if value < 0 else "") + f"{mantissa}E{power}"


_STRING_ESCAPES = {code: f"\\u{code:04X}" for code in range(0x20)}
_STRING_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\b"): "\\b", ord("\t"): "\\t", ord("\n"): "\\n",
                        ord("\f"): "\\f", ord("\r"): "\\r"})


def _json_string(text: str) -> str:
    return '"' + text.translate(_STRING_ESCAPES) + '"'


def to_json(value: Any) -> str:
    """Compact JSON as Jackson writes it (no spaces, non-ASCII kept, doubles as Java prints them)."""
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json_string(str(k))}:{to_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(to_json(item) for item in value) + "]"
    if isinstance(value, float):
        return java_double(value)
    return json.dumps(value)


def _text(value: Any) -> str:
    """How NiFi renders a jsonPath result: scalars as text (null as empty), a one-element list as its element."""
    if isinstance(value, list) and len(value) == 1:
        return _text(value[0])
    if isinstance(value, (dict, list)):
        return to_json(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    return str(value)


def _document(subject: str | None) -> Any:
    if not subject:
        raise ValueError("Subject is empty")
    try:
        return _parse(subject)
    except ValueError:
        raise ValueError(f"Subject contains invalid JSON: {subject}") from None


def _path(path: str) -> jsonpath.JsonPath:
    try:
        return jsonpath.compile(path)
    except jsonpath.InvalidPathError as exc:
        raise ValueError(f"Invalid JSON Path expression: {path} ({exc})") from None


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        raise ValueError("a Date cannot be written into JSON; format it as a string or number first")
    return value


def json_path(subject: str | None, path: str) -> str:
    """The value at ``path``: a scalar as text, an object or several values as JSON, nothing as empty."""
    document, compiled = _document(subject), _path(path)
    try:
        return _text(compiled.read(document))
    except jsonpath.JsonPathError:
        return ""


def json_path_delete(subject: str | None, path: str) -> str:
    """The document without what ``path`` matches (unchanged when it matches nothing)."""
    document, compiled = _document(subject), _path(path)
    try:
        return to_json(compiled.delete(document))
    except jsonpath.PathNotFoundError:
        return to_json(document)
    except jsonpath.JsonPathError:
        return ""


def _update(subject: str | None, path: str, change) -> str:
    document, compiled = _document(subject), _path(path)
    try:
        return to_json(change(compiled, document))
    except jsonpath.PathNotFoundError:
        return to_json(document)
    except jsonpath.JsonPathError:
        return ""


def json_path_set(subject: str | None, path: str, value: Any) -> str:
    """The document with every match of ``path`` replaced by ``value``."""
    value = _json_value(value)
    return _update(subject, path, lambda compiled, document: compiled.set(document, value))


def json_path_add(subject: str | None, path: str, value: Any) -> str:
    """The document with ``value`` appended to the array at ``path``; empty when the target is not an array."""
    value = _json_value(value)
    return _update(subject, path, lambda compiled, document: compiled.add(document, value))


def json_path_put(subject: str | None, path: str, key: Any, value: Any) -> str:
    """The document with ``key`` set to ``value`` in the object at ``path``; empty when it is not an object."""
    value = _json_value(value)
    key = _text(key) if key is not None else ""
    document, compiled = _document(subject), _path(path)
    try:
        return to_json(compiled.put(document, key, value))
    except jsonpath.JsonPathError:
        # NiFi's put gives the empty string for a missing path too.
        return ""
