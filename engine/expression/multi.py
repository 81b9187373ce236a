"""Subjects that visit several values (anyAttribute, allMatchingAttributes, anyDelineatedValue, …) and the
reducing functions ``join`` and ``count`` over them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.expression.types import to_string
from engine.java_regex import java_regex

if TYPE_CHECKING:
    from engine.expression.functions import Scope

__all__ = ["java_split", "named", "matching", "delineated", "join_single", "count_single"]


def java_split(text: str, delimiter: re.Pattern[str]) -> list[str]:
    """Split as Java's ``String.split(regex)``: trailing empty strings dropped, no leading empty string for a
    zero-width match at the start, the whole text when nothing matches."""
    if not text:
        return [text]
    parts: list[str] = []
    index = 0
    for match in delimiter.finditer(text):
        if match.end() == 0:
            continue
        parts.append(text[index:match.start()])
        index = match.end()
    if not parts:
        return [text]
    parts.append(text[index:])
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def named(scope: Scope, *names: str) -> list[str | None]:
    """The values of the named attributes (null for a missing one)."""
    return [scope.lookup(name) for name in names]


def matching(scope: Scope, *patterns: re.Pattern[str]) -> list[str | None]:
    """The values of every attribute whose whole name matches a pattern; as in NiFi, pattern by pattern, so a
    name two patterns match is visited twice."""
    attributes = scope.attributes
    return [attributes.get(name) for pattern in patterns for name in list(attributes) if pattern.fullmatch(name)]


def delineated(scope: Scope, value: object, delimiter: object) -> list[str | None]:
    """The pieces of ``value`` split at the regular expression ``delimiter`` (Java's ``String.split``)."""
    if value is None or delimiter is None:
        return []
    return java_split(to_string(value), java_regex(to_string(delimiter)))  # type: ignore[arg-type,return-value]


def join_single(subject: str | None, delimiter: str) -> str:
    """``join`` on an ordinary subject: the value itself (null as empty)."""
    return subject or ""


def count_single(subject: object) -> int:
    """``count`` on an ordinary subject: 1 for a value that is neither null nor false, else 0."""
    return 0 if subject is None or subject is False else 1
