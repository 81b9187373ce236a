"""String functions over delimited values, repetition, pattern mapping and name-based UUIDs, as NiFi has them.

A null subject is the caller's business (NiFi gives the empty string for all but replaceByPattern and the UUIDs).
"""

from __future__ import annotations

import random
import re
import uuid

from engine.expression.pattern_mapping import java_trim
from engine.expression.types import to_whole

__all__ = ["get_delimited_field", "trim_delimited_list", "compact_delimited_list", "unique", "repeat",
           "replace_by_pattern", "uuid3", "uuid5", "java_trim", "java_is_blank"]

# Java's Character.isWhitespace: Unicode space separators except the non-breaking ones, and these controls.
_JAVA_WHITESPACE = frozenset("\t\n\x0b\f\r\x1c\x1d\x1e\x1f \u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                             "\u2008\u2009\u200a\u2028\u2029\u205f\u3000")


def java_is_blank(text: str) -> bool:
    """Java's String.isBlank: empty or only Java whitespace (a non-breaking space is not)."""
    return all(char in _JAVA_WHITESPACE for char in text)


def _single(value: str, what: str, description: str) -> str:
    if not value:
        raise ValueError(f"Cannot evaluate getDelimitedField function because the {what}{description} was not "
                         "specified")
    if len(value) > 1:
        raise ValueError(f"Cannot evaluate getDelimitedField function because the {what}{description} evaluated to "
                         f'"{value}", but only a single character is allowed.')
    return value


def get_delimited_field(subject: str, index: object, delimiter: str = ",", quote: str = '"',
                        escape: str = "\\", strip: bool = False) -> str:
    """Field ``index`` (1-based) of a delimited line; quoted or escaped delimiters do not split."""
    if not subject:
        return ""
    wanted = to_whole(index)  # the index arrives unconverted so that a null one is this error, as in NiFi
    if wanted is None:
        raise ValueError("Cannot evaluate getDelimitedField function because the index (which field to obtain) "
                         "was not specified")
    if wanted < 1:
        return ""
    delimiter = _single(delimiter, "delimiter", "")
    quote = _single(quote, "quote character",
                    " (which character is used to enclose values that contain the delimiter)")
    escape = _single(escape, "escape character",
                     " (which character is used to escape the quote character or delimiter)")
    if quote == delimiter:
        raise ValueError("Cannot evaluate getDelimitedField function because the quote character and the "
                         "delimiter are the same")
    if quote == escape:
        raise ValueError("Cannot evaluate getDelimitedField function because the quote character and the "
                         "escape character are the same")
    if delimiter == escape:
        raise ValueError("Cannot evaluate getDelimitedField function because the delimiter and the escape "
                         "character are the same")
    field: list[str] = []
    in_quote = escaped = False
    current = 1
    for char in subject:
        if char == quote and not escaped:
            in_quote = not in_quote
            if not strip and current == wanted:
                field.append(char)
        elif char == delimiter and not escaped and not in_quote:
            if current == wanted:
                return "".join(field)
            current += 1
        elif current == wanted and (char != escape or not strip):
            field.append(char)
        escaped = char == escape and not escaped
    return "".join(field) if current == wanted else ""


def trim_delimited_list(subject: str, delimiter: str) -> str:
    """Drop the empty tokens at either end of a delimited list; empty tokens between values stay."""
    if not delimiter:
        return subject
    tokens = subject.split(delimiter)
    start = next((i for i, token in enumerate(tokens) if token), len(tokens))
    if start == len(tokens):
        return ""
    end = max(i for i, token in enumerate(tokens) if token)
    return delimiter.join(tokens[start:end + 1])


def compact_delimited_list(subject: str, delimiter: str) -> str:
    """Drop every empty token of a delimited list."""
    if not delimiter:
        return subject
    return delimiter.join(token for token in subject.split(delimiter) if token)


def unique(subject: str, delimiter: str) -> str:
    """The distinct tokens of a delimited list, in order of first appearance."""
    if not delimiter:
        return subject
    return delimiter.join(dict.fromkeys(subject.split(delimiter)))


def repeat(subject: str, minimum: int | float, maximum: int | float | None = None) -> str:
    """The subject repeated ``minimum`` times, or a random count between ``minimum`` and ``maximum``."""
    low = int(minimum)
    if maximum is None:
        if low <= 0:
            raise ValueError("Number of repeats must be > 0")
        return subject * low
    if low <= 0:
        raise ValueError("Minimum number of repeats must be > 0")
    high = int(maximum)
    if low > high:
        raise ValueError("Min repeats must not be greater than max repeats")
    return subject * random.randint(low, high)


def replace_by_pattern(subject: str, rules: list[tuple[re.Pattern[str], str]]) -> str:
    """The replacement of the first rule (see :mod:`engine.expression.pattern_mapping`) whose pattern matches the
    whole subject."""
    for pattern, replacement in rules:
        if pattern.fullmatch(subject):
            return replacement
    return subject


_JAVA_UUID = re.compile(r"([0-9a-fA-F]{1,8})-([0-9a-fA-F]{1,4})-([0-9a-fA-F]{1,4})-([0-9a-fA-F]{1,4})-"
                        r"([0-9a-fA-F]{1,12})")


def _namespace(value: object) -> uuid.UUID:
    if value is None:
        return uuid.UUID(int=0)
    value = value if isinstance(value, str) else str(value)
    match = _JAVA_UUID.fullmatch(value)
    if match is None:
        raise ValueError(f"Invalid UUID string: {value}")
    widths = (8, 4, 4, 4, 12)
    return uuid.UUID("".join(part.zfill(width) for part, width in zip(match.groups(), widths)))


def uuid3(subject: str, namespace: object) -> str:
    """A version 3 (MD5) UUID of the subject in ``namespace`` (the nil UUID when null)."""
    return str(uuid.uuid3(_namespace(namespace), subject))


def uuid5(subject: str, namespace: object) -> str:
    """A version 5 (SHA-1) UUID of the subject in ``namespace`` (the nil UUID when null)."""
    return str(uuid.uuid5(_namespace(namespace), subject))
