"""NiFi's parameterized SQL (``sql.args.N.type`` / ``.value`` / ``.format``, as JdbcCommon reads
them): the JDBC type numbers turned into the values psycopg binds, and pgjdbc's ``?`` placeholders
turned into psycopg's."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import email.utils
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from psycopg.types.numeric import Float4, Int2, Int4, Int8

from engine.record.values import java_pattern

__all__ = ["SqlArgumentError", "bind_placeholders", "sql_arguments"]

_TYPE_NAME = re.compile(r"sql\.args\.(\d+)\.type")
_NUMBER = re.compile(r"-?\d+")
_LONG = re.compile(r"-?\d{1,19}")
_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_FLOAT = re.compile(r"[+-]?(NaN|Infinity|((\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)[fFdD]?)")
_TIME = re.compile(r"\d{2}:\d{2}:\d{2}\.\d{3}")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}")
_HEX = re.compile(r"([0-9A-Fa-f]{2})*")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_STRINGS = {1, 12, -1, -16, -15, -9, 2005, 2011, 1111}  # CHAR, VARCHAR, LONG(N)VARCHAR, NCHAR, NVARCHAR, CLOB, NCLOB, OTHER
_BINARIES = {-2, -3, -4}
_INTEGERS = {-6: (Int2, 8), 5: (Int2, 16), 4: (Int4, 32), -5: (Int8, 64)}
_EPOCH = dt.datetime(1970, 1, 1)


class SqlArgumentError(ValueError):
    """A ``sql.args`` attribute that cannot be bound (not a type number, a value of the wrong form)."""


def sql_arguments(attributes: Mapping[str, str]) -> list[Any] | None:
    """The parameters ``sql.args.N.*`` give, in the order of N (1, 2, ...); None when there is no
    ``sql.args.N.type``. Raises SqlArgumentError saying which attribute is wrong and why."""
    by_index = {}
    for name, type_text in attributes.items():
        match = _TYPE_NAME.fullmatch(name)
        if match is None:
            continue
        if not _NUMBER.fullmatch(type_text or ""):
            raise SqlArgumentError(f"Value of the {name} attribute is '{type_text}', which is not a valid numeral "
                                   f"SQL data type")
        index = int(match.group(1))
        value = attributes.get(f"sql.args.{index}.value")
        by_index[index] = _value(index, int(type_text), value, attributes.get(f"sql.args.{index}.format") or "")
    if not by_index:
        return None
    missing = [index for index in range(1, max(by_index) + 1) if index not in by_index]
    if missing or 0 in by_index:
        wrong = missing[0] if missing else 0
        raise SqlArgumentError(f"No value specified for parameter {wrong}: sql.args.N must be numbered 1, 2, 3, ... "
                               f"without gaps (sql.args.{wrong}.type is missing)")
    return [by_index[index] for index in sorted(by_index)]


def bind_placeholders(query: str, count: int) -> str:
    """``query`` with pgjdbc's ``?`` placeholders as psycopg's ``%s`` (and ``%`` as ``%%``); a ``?``
    inside quotes, dollar quotes or comments is text, ``??`` is a literal ``?`` (the jsonb operator).
    Raises SqlArgumentError when the query has not ``count`` placeholders."""
    out: list[str] = []
    found = 0
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        end = i + 1
        if c in "'\"":
            end = _quote_end(query, i, c)
        elif c == "-" and query.startswith("--", i):
            end = query.find("\n", i)
            end = n if end < 0 else end + 1
        elif c == "/" and query.startswith("/*", i):
            end = _comment_end(query, i)
        elif c == "$":
            tag = re.match(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$", query[i:])
            if tag and not (i and (query[i - 1].isalnum() or query[i - 1] == "_")):
                close = query.find(tag.group(0), i + len(tag.group(0)))
                end = n if close < 0 else close + len(tag.group(0))
        elif c == "?":
            if query.startswith("??", i):
                out.append("?")
                i += 2
                continue
            found += 1
            out.append("%s")
            i += 1
            continue
        out.append(query[i:end].replace("%", "%%"))
        i = end
    if found != count:
        raise SqlArgumentError(f"the query has {found} '?' placeholder{'s' if found != 1 else ''} but the sql.args "
                               f"attributes give {count} parameter{'s' if count != 1 else ''}")
    return "".join(out)


def _quote_end(query: str, start: int, quote: str) -> int:
    i = start + 1
    backslashes = quote == "'" and start and query[start - 1] in "eE"
    while i < len(query):
        if backslashes and query[i] == "\\":
            i += 2
            continue
        if query[i] == quote:
            if query.startswith(quote * 2, i):
                i += 2
                continue
            return i + 1
        i += 1
    return len(query)


def _comment_end(query: str, start: int) -> int:
    depth, i = 0, start
    while i < len(query):
        if query.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif query.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if not depth:
                return i
        else:
            i += 1
    return len(query)


def _value(index: int, jdbc_type: int, value: str | None, value_format: str) -> Any:
    if value is None:
        return None
    name = f"sql.args.{index}.value"
    try:
        return _convert(jdbc_type, value, value_format, f"sql.args.{index}")
    except SqlArgumentError:
        raise
    except (ValueError, OverflowError) as error:
        raise SqlArgumentError(f"The value of the {name} is '{value}', which cannot be converted into the "
                               f"necessary data type ({_TYPES.get(jdbc_type, jdbc_type)}): {error}") from None


def _convert(jdbc_type: int, value: str, value_format: str, prefix: str) -> Any:
    if jdbc_type == -7:  # BIT
        return value == "1" or value.lower() in ("t", "true")
    if jdbc_type == 16:  # BOOLEAN
        return value.lower() == "true"
    if jdbc_type in _INTEGERS:
        wrapper, bits = _INTEGERS[jdbc_type]
        if not _INTEGER.fullmatch(value):
            raise ValueError("not an integer")
        number = int(value)
        if not -(1 << (bits - 1)) <= number < 1 << (bits - 1):
            raise ValueError(f"out of the range of a {bits}-bit integer")
        return wrapper(number)
    if jdbc_type in (7, 6, 8):  # REAL, FLOAT, DOUBLE
        if not _FLOAT.fullmatch(value):
            raise ValueError("not a floating point number")
        number = float(value.rstrip("fFdD").replace("Infinity", "inf"))
        return Float4(number) if jdbc_type == 7 else number
    if jdbc_type in (3, 2):  # DECIMAL, NUMERIC
        if not _DECIMAL.fullmatch(value):
            raise ValueError("not a decimal number")
        try:
            return Decimal(value)
        except InvalidOperation:
            raise ValueError("not a decimal number") from None
    if jdbc_type == 91:
        return _date(value, value_format)
    if jdbc_type == 92:
        return _time(value, value_format)
    if jdbc_type == 93:
        return _timestamp(value, value_format)
    if jdbc_type in _BINARIES:
        return _binary(value, value_format, prefix)
    if jdbc_type in _STRINGS:
        return value
    raise SqlArgumentError(f"{prefix}.type is {jdbc_type}, a JDBC type Flowsite cannot bind; use one of "
                           + ", ".join(f"{number} ({label})" for number, label in _TYPES.items()))


def _from_millis(value: str) -> dt.datetime:
    return _EPOCH + dt.timedelta(milliseconds=int(value))


def _date(value: str, value_format: str) -> dt.date:
    if not value_format:
        if _LONG.fullmatch(value):
            return _from_millis(value).date()
        if not _ISO_DATE.fullmatch(value):
            raise ValueError("expected yyyy-MM-dd or milliseconds since the epoch")
        return dt.date.fromisoformat(value)
    return _parse(value, value_format).date()


def _time(value: str, value_format: str) -> dt.time:
    if not value_format:
        if _LONG.fullmatch(value):
            return _from_millis(value).time()
        if not _TIME.fullmatch(value):
            raise ValueError("expected HH:mm:ss.SSS or milliseconds since the epoch")
        return dt.time.fromisoformat(value)
    return _parse(value, value_format, time_only=True).time()


def _timestamp(value: str, value_format: str) -> dt.datetime:
    if not value_format:
        if _LONG.fullmatch(value):
            return _from_millis(value)
        if not _TIMESTAMP.fullmatch(value):
            raise ValueError("expected yyyy-MM-dd HH:mm:ss.SSS or milliseconds since the epoch")
        return dt.datetime.fromisoformat(value)
    return _parse(value, value_format)


def _parse(value: str, pattern: str, time_only: bool = False) -> dt.datetime:
    """``value`` read with a named ISO format or a Java pattern; its local date and time (an offset
    it carries is dropped, as Java's LocalDateTime.parse does)."""
    if pattern == "BASIC_ISO_DATE":
        return dt.datetime.strptime(value[:8], "%Y%m%d")
    if pattern == "RFC_1123_DATE_TIME":
        return email.utils.parsedate_to_datetime(value).replace(tzinfo=None)
    if pattern.startswith("ISO_"):
        if time_only:
            return dt.datetime.combine(_EPOCH.date(), dt.time.fromisoformat(value).replace(tzinfo=None))
        return dt.datetime.fromisoformat(value).replace(tzinfo=None)
    translated = java_pattern(pattern)
    text, fraction = value, 0
    if translated.fraction:
        text, _, digits = value.rpartition(".")
        if len(digits) != translated.fraction or not digits.isdigit():
            raise ValueError(f"expected {translated.fraction} digits of fractional seconds")
        fraction = int(digits.ljust(6, "0")[:6])
    parsed = dt.datetime.strptime(text, translated.strftime)
    if time_only:
        parsed = dt.datetime.combine(_EPOCH.date(), parsed.time())
    return parsed.replace(microsecond=fraction, tzinfo=None)


def _binary(value: str, value_format: str, prefix: str) -> bytes:
    if value_format in ("", "ascii"):
        return value.encode("ascii", errors="replace")
    if value_format == "hex":
        if not _HEX.fullmatch(value):
            raise ValueError("Hexadecimal decoding failed")
        return bytes.fromhex(value)
    if value_format == "base64":
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error as error:
            raise ValueError(f"not base64: {error}") from None
    raise SqlArgumentError(f"Unable to parse binary data using the formatter `{value_format}` ({prefix}.format "
                           f"must be ascii, hex or base64)")


_TYPES = {-16: "LONGNVARCHAR", -15: "NCHAR", -9: "NVARCHAR", -7: "BIT", 16: "BOOLEAN", -6: "TINYINT",
          -5: "BIGINT", -4: "LONGVARBINARY", -3: "VARBINARY", -2: "BINARY", -1: "LONGVARCHAR", 1: "CHAR",
          2: "NUMERIC", 3: "DECIMAL", 4: "INTEGER", 5: "SMALLINT", 6: "FLOAT", 7: "REAL", 8: "DOUBLE",
          12: "VARCHAR", 91: "DATE", 92: "TIME", 93: "TIMESTAMP", 1111: "OTHER", 2005: "CLOB", 2011: "NCLOB"}
