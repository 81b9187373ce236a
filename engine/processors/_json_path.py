"""What EvaluateJsonPath and SplitJson share: their common properties, reading a FlowFile's
content as JSON within NiFi's string-length limit, and validating JsonPaths."""

from __future__ import annotations

import json
from typing import Any

from engine import jsonpath
from engine.components import PropertyDescriptor
from engine.components import validators as v

EMPTY_STRING, NULL_STRING = "empty string", "the string 'null'"
NULL_REPRESENTATIONS = {EMPTY_STRING: "", NULL_STRING: "null"}

NULL_VALUE_REPRESENTATION = PropertyDescriptor(
    "Null Value Representation", description="How a JsonPath result that is null is written.", required=True,
    default=EMPTY_STRING, allowed_values=[EMPTY_STRING, NULL_STRING])
MAX_STRING_LENGTH = PropertyDescriptor(
    "Max String Length", description="The longest string value a JSON document may hold; a longer one makes it "
    "invalid.", required=True, default="20 MB", validators=[v.DATA_SIZE])


class InvalidJson(ValueError):
    """The content is not JSON NiFi would parse."""


def path_problem(value: str | None) -> str | None:
    """Why ``value`` is not a usable JsonPath, or None."""
    if value is None or not value.strip():
        return "the expression cannot be empty."
    try:
        jsonpath.compile(value)
    except jsonpath.JsonPathError:
        return f"specified expression was not valid: {value}"
    return None


def read_json(data: bytes, max_string_length: int) -> Any:
    """The JSON document ``data`` holds; raises InvalidJson."""
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidJson(str(error)) from error
    if document is None:
        raise InvalidJson("the document is null")
    pending = [document]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            if len(value) > max_string_length:
                raise InvalidJson(f"a string of {len(value)} characters is longer than Max String Length "
                                  f"({max_string_length})")
        elif isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return document


def is_scalar(value: Any) -> bool:
    """Whether a JsonPath result is a scalar (neither an object nor an array)."""
    return not isinstance(value, (dict, list))
