"""Validators for property values: each returns None when the value is fine, else the reason."""

from __future__ import annotations

import codecs
import re
from pathlib import Path
from typing import TYPE_CHECKING, Optional
from urllib.parse import urlparse

from engine.java_regex import java_regex
from engine.units import parse_data_size, parse_duration

if TYPE_CHECKING:
    from engine.components.properties import Validator
    from engine.components.validation import ValidationContext

__all__ = [
    "NON_EMPTY", "INTEGER", "POSITIVE_INTEGER", "NON_NEGATIVE_INTEGER", "NUMBER", "BOOLEAN", "TIME_PERIOD",
    "DATA_SIZE", "REGEX", "PORT", "URL", "CHARACTER_SET", "ATTRIBUTE_NAME", "CRON", "DIRECTORY_EXISTS",
    "FILE_EXISTS", "integer_range", "node_local",
]


def node_local(validator: Validator) -> Validator:
    """Marks a validator that looks at the node's own surroundings (its files): a node runs it,
    validation elsewhere (the control plane, which does not share the node's disks) skips it."""
    validator.node_local = True  # type: ignore[attr-defined]
    return validator


def NON_EMPTY(value: str, context: ValidationContext) -> Optional[str]:
    """The value must contain something other than whitespace."""
    return None if value.strip() else "must not be empty"


def INTEGER(value: str, context: ValidationContext) -> Optional[str]:
    """A whole number."""
    try:
        int(value.strip())
    except ValueError:
        return f"{value!r} is not a whole number"
    return None


def integer_range(minimum: int | None = None, maximum: int | None = None) -> Validator:
    """A whole number between ``minimum`` and ``maximum`` (inclusive, either may be open)."""

    def check(value: str, context: ValidationContext) -> Optional[str]:
        try:
            number = int(value.strip())
        except ValueError:
            return f"{value!r} is not a whole number"
        if minimum is not None and number < minimum:
            return f"{number} is below the minimum of {minimum}"
        if maximum is not None and number > maximum:
            return f"{number} is above the maximum of {maximum}"
        return None

    return check


POSITIVE_INTEGER = integer_range(1)
NON_NEGATIVE_INTEGER = integer_range(0)
PORT = integer_range(1, 65535)


def NUMBER(value: str, context: ValidationContext) -> Optional[str]:
    """A number, whole or decimal."""
    try:
        float(value.strip())
    except ValueError:
        return f"{value!r} is not a number"
    return None


def BOOLEAN(value: str, context: ValidationContext) -> Optional[str]:
    """``true`` or ``false``."""
    return None if value.strip().lower() in ("true", "false") else f"{value!r} is not 'true' or 'false'"


def TIME_PERIOD(value: str, context: ValidationContext) -> Optional[str]:
    """A duration such as ``30 sec`` or ``5 mins``."""
    try:
        parse_duration(value)
    except ValueError:
        return f"{value!r} is not a duration (expected e.g. '30 sec', '5 mins')"
    return None


def DATA_SIZE(value: str, context: ValidationContext) -> Optional[str]:
    """A data size such as ``1 KB`` or ``10 MB``."""
    try:
        parse_data_size(value)
    except ValueError:
        return f"{value!r} is not a data size (expected e.g. '1 GB', '50 KB')"
    return None


def REGEX(value: str, context: ValidationContext) -> Optional[str]:
    """A regular expression (Java syntax, as NiFi users write it)."""
    try:
        java_regex(value)
    except ValueError as error:
        return str(error)
    return None


def URL(value: str, context: ValidationContext) -> Optional[str]:
    """An absolute http(s) URL."""
    parsed = urlparse(value.strip())
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return f"{value!r} is not an absolute http or https URL"
    return None


def CHARACTER_SET(value: str, context: ValidationContext) -> Optional[str]:
    """A character set Python knows (``UTF-8``, ``ISO-8859-1``, ...)."""
    try:
        codecs.lookup(value.strip())
    except LookupError:
        return f"{value!r} is not a known character set"
    return None


_ATTRIBUTE_NAME = re.compile(r"[^\s]+")


def ATTRIBUTE_NAME(value: str, context: ValidationContext) -> Optional[str]:
    """A FlowFile attribute name (no whitespace)."""
    return None if _ATTRIBUTE_NAME.fullmatch(value) else f"{value!r} is not a valid attribute name"


def CRON(value: str, context: ValidationContext) -> Optional[str]:
    """A CRON expression with seconds first (``0 0/5 * * * ?``)."""
    from engine.cron import CronSchedule

    try:
        CronSchedule(value)
    except ValueError as error:
        return str(error)
    return None


@node_local
def DIRECTORY_EXISTS(value: str, context: ValidationContext) -> Optional[str]:
    """An existing directory (one the component may use: refused ones are not looked at)."""
    refusal = context.confinement.refusal(value)
    if refusal is not None:
        return f"directory {value!r} refused: {refusal}"
    return None if Path(value).is_dir() else f"directory {value!r} does not exist"


@node_local
def FILE_EXISTS(value: str, context: ValidationContext) -> Optional[str]:
    """An existing file (one the component may use: refused ones are not looked at)."""
    refusal = context.confinement.refusal(value)
    if refusal is not None:
        return f"file {value!r} refused: {refusal}"
    return None if Path(value).is_file() else f"file {value!r} does not exist"
