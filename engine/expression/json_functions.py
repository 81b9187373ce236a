"""The JSON functions: isJson and the jsonPath family, with NiFi's semantics (Jayway JsonPath over Jackson).

A missing path reads as the empty string and leaves a document unchanged; a change the target cannot take
(adding to something that is not an array, putting into something that is not an object) gives the empty
string, as NiFi does. An empty subject, a subject that is not JSON and an invalid path are errors.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from engine import jsonpath
from engine.jackson import compact
from engine.java_text import java_double

__all__ = ["compile_path", "is_json", "json_path", "json_path_delete", "json_path_set", "json_path_add",
           "json_path_put"]

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


def _text(value: Any) -> str:
    """How NiFi renders a jsonPath result: scalars as text (null as empty), a one-element list as its element."""
    if isinstance(value, list) and len(value) == 1:
        return _text(value[0])
    if isinstance(value, (dict, list)):
        return compact(value)
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


def compile_path(path: str) -> jsonpath.JsonPath:
    """The compiled ``path``; ValueError (NiFi's message) when it is not a valid JsonPath."""
    try:
        return jsonpath.compile(path)
    except jsonpath.InvalidPathError as exc:
        raise ValueError(f"Invalid JSON Path expression: {path} ({exc})") from None


def _path(path: jsonpath.JsonPath | ValueError) -> jsonpath.JsonPath:
    """The path argument; one from an expression that did not compile arrives as its error, raised only after
    the subject was checked, as NiFi checks them."""
    if isinstance(path, ValueError):
        raise path
    return path


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        raise ValueError("a Date cannot be written into JSON; format it as a string or number first")
    return value


def json_path(subject: str | None, path: jsonpath.JsonPath | ValueError) -> str:
    """The value at ``path``: a scalar as text, an object or several values as JSON, nothing as empty."""
    document, compiled = _document(subject), _path(path)
    try:
        return _text(compiled.read(document))
    except jsonpath.JsonPathError:
        return ""


def json_path_delete(subject: str | None, path: jsonpath.JsonPath | ValueError) -> str:
    """The document without what ``path`` matches (unchanged when it matches nothing)."""
    document, compiled = _document(subject), _path(path)
    try:
        return compact(compiled.delete(document))
    except jsonpath.PathNotFoundError:
        return compact(document)
    except jsonpath.JsonPathError:
        return ""


def _update(subject: str | None, path: jsonpath.JsonPath | ValueError, change) -> str:
    document, compiled = _document(subject), _path(path)
    try:
        return compact(change(compiled, document))
    except jsonpath.PathNotFoundError:
        return compact(document)
    except jsonpath.JsonPathError:
        return ""


def json_path_set(subject: str | None, path: jsonpath.JsonPath | ValueError, value: Any) -> str:
    """The document with every match of ``path`` replaced by ``value``."""
    value = _json_value(value)
    return _update(subject, path, lambda compiled, document: compiled.set(document, value))


def json_path_add(subject: str | None, path: jsonpath.JsonPath | ValueError, value: Any) -> str:
    """The document with ``value`` appended to the array at ``path``; empty when the target is not an array."""
    value = _json_value(value)
    return _update(subject, path, lambda compiled, document: compiled.add(document, value))


def json_path_put(subject: str | None, path: jsonpath.JsonPath | ValueError, key: Any, value: Any) -> str:
    """The document with ``key`` set to ``value`` in the object at ``path``; empty when it is not an object."""
    value = _json_value(value)
    key = _text(key) if key is not None else ""
    document, compiled = _document(subject), _path(path)
    try:
        return compact(compiled.put(document, key, value))
    except jsonpath.JsonPathError:
        # NiFi's put gives the empty string for a missing path too.
        return ""
