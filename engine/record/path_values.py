"""How RecordPath treats values, as NiFi's Java does: text, numbers, comparisons, regular expressions, dates.

Python records are what ``pyarrow.Table.to_pylist()`` gives: a record is a ``dict``, an array a
``list``, a map a list of ``(key, value)`` pairs (or a ``dict``), a timestamp a ``datetime``, a
date a ``date``, bytes ``bytes``. Both RecordPath back ends follow the rules written here; the
Spark SQL back end (``engine.record.path_sql``) mirrors each of them in SQL.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import unicodedata
from datetime import date, datetime, timedelta, timezone, tzinfo
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from engine.expression.dates import compile_pattern
from engine.java_regex import java_regex as _java_regex
from engine.java_text import java_double

__all__ = [
    "is_map", "map_items", "to_string", "java_double", "as_number", "test_compare", "java_regex",
    "java_replacement", "java_trim", "is_java_blank", "substring", "substring_before", "substring_after",
    "substring_before_last", "substring_after_last", "java_replace", "pad", "resolve_zone", "spark_zone",
    "check_date_pattern", "format_date", "parse_date", "escape_json", "unescape_json", "hash_hex", "HASHES",
    "base64_encode", "base64_decode", "epoch_millis",
]

UTC = timezone.utc
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# --- shapes ---------------------------------------------------------------------------------------

def is_map(value: Any) -> bool:
    """True for a map as ``to_pylist()`` gives it: a non-empty list of ``(key, value)`` tuples."""
    return isinstance(value, list) and bool(value) and all(isinstance(e, tuple) and len(e) == 2 for e in value)


def map_items(value: Any) -> list[tuple[Any, Any]] | None:
    """The entries of a map (pairs or dict), ``None`` when ``value`` is no map."""
    if isinstance(value, dict):
        return list(value.items())
    if is_map(value):
        return list(value)
    return None


# --- text and numbers -----------------------------------------------------------------------------

def epoch_millis(value: datetime | date) -> int:
    """Milliseconds since the epoch (a date is its midnight in UTC; a naive timestamp is read as UTC)."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        delta = moment - _EPOCH
        return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000
    return (value - date(1970, 1, 1)).days * 86_400_000


def to_string(value: Any) -> str | None:
    """NiFi's ``DataTypeUtils.toString``: a timestamp or date is its epoch milliseconds, bytes are
    UTF-8, an array is ``[a, b]``; a record or map is written as Spark writes one (``{a, b}``,
    ``{k -> v}``), NiFi's own form being Java's ``toString``."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, (datetime, date)):
        return str(epoch_millis(value))
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    entries = map_items(value) if not isinstance(value, dict) else None
    if entries is not None:
        return "{" + ", ".join(f"{_inner(k)} -> {_inner(v)}" for k, v in entries) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inner(e) for e in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(_inner(v) for v in value.values()) + "}"
    return str(value)


def _inner(value: Any) -> str:
    text = to_string(value)
    return "null" if text is None else text


_INTEGRAL = re.compile(r"[+-]?\d+")
_FLOATING = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?")


def as_number(value: Any) -> int | float | None:
    """The number a comparison (``<`` ``<=`` ``>`` ``>=``) sees, ``None`` when the value is not numeric.

    Numbers are themselves; a timestamp or date is its epoch milliseconds; text counts when it
    is an integer or a decimal number (as NiFi's ``isLongTypeCompatible``/``isDoubleTypeCompatible``).
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (datetime, date)):
        return epoch_millis(value)
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, str):
        if _INTEGRAL.fullmatch(value):
            return int(value)
        if _FLOATING.fullmatch(value):
            return float(value.rstrip("fFdD"))
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def test_compare(op: str, lhs: Any, rhs: Any) -> bool:
    """NiFi's comparison filters: ``lhs op rhs`` for one value of the left side; ``rhs`` is not None."""
    if lhs is None:
        return False
    if op == "=":
        if _is_number(lhs) and _is_number(rhs):
            return lhs == rhs
        if _is_number(lhs) or _is_number(rhs):
            return to_string(lhs) == to_string(rhs)
        return type(lhs) is type(rhs) and lhs == rhs
    if op == "!=":
        if _is_number(lhs) and _is_number(rhs):
            return lhs != rhs
        if _is_number(lhs) or _is_number(rhs):
            return False
        return not (type(lhs) is type(rhs) and lhs == rhs)
    left, right = as_number(lhs), as_number(rhs)
    if left is None or right is None:
        return False
    if op == "<":
        return left < right
    if op == "<=":
        return left <= right
    if op == ">":
        return left > right
    return left >= right


# --- regular expressions --------------------------------------------------------------------------

def java_regex(pattern: str) -> Any:
    """Compile a Java regular expression (engine/java_regex.py: Java's syntax and meaning); ValueError
    naming it when it is invalid."""
    return _java_regex(pattern)


def java_replacement(replacement: str) -> str:
    """A Java ``Matcher.replaceAll`` replacement (``$1``, ``${name}``, ``\\$``) as a Python ``re.sub`` one."""
    out: list[str] = []
    i = 0
    while i < len(replacement):
        char = replacement[i]
        if char == "\\" and i + 1 < len(replacement):
            out.append(replacement[i + 1].replace("\\", "\\\\"))
            i += 2
        elif char == "$" and replacement.startswith("{", i + 1):
            end = replacement.index("}", i)
            out.append(f"\\g<{replacement[i + 2:end]}>")
            i = end + 1
        elif char == "$" and i + 1 < len(replacement) and replacement[i + 1].isdigit():
            out.append(f"\\g<{replacement[i + 1]}>")
            i += 2
        else:
            out.append("\\\\" if char == "\\" else char)
            i += 1
    return "".join(out)


# --- strings --------------------------------------------------------------------------------------

def java_trim(text: str) -> str:
    """``String.trim``: strips every character up to U+0020 from both ends."""
    return text.strip("".join(map(chr, range(33))))


def is_java_blank(text: str) -> bool:
    """``String.isBlank``: empty or only ``Character.isWhitespace`` characters."""
    return all(_java_whitespace(c) for c in text)


def _java_whitespace(char: str) -> bool:
    if char in " \t\n\x0b\f\r\x1c\x1d\x1e\x1f":
        return True
    return unicodedata.category(char) in ("Zs", "Zl", "Zp") and char not in "\xa0\u2007\u202f"


def substring(text: str, start: int, end: int) -> str:
    """NiFi's substring: 0-based ``start`` inclusive, ``end`` exclusive; ``-n`` counts from the end
    with ``-1`` meaning the end itself; an empty string when the range is empty or out of bounds."""
    length = len(text)
    stop = length + 1 + end if end < 0 else end
    begin = length + 1 + start if start < 0 else start
    if stop <= begin or begin < 0 or begin > length:
        return ""
    return text[begin:min(stop, length)]


def substring_before(text: str, search: str) -> str:
    """The text before the first ``search`` (all of it when ``search`` is empty or absent)."""
    index = text.find(search) if search else -1
    return text if index < 0 else text[:index]


def substring_after(text: str, search: str) -> str:
    """The text after the first ``search`` (all of it when ``search`` is empty or absent)."""
    index = text.find(search) if search else -1
    return text if index < 0 else text[index + len(search):]


def substring_before_last(text: str, search: str) -> str:
    """The text before the last ``search`` (all of it when ``search`` is empty or absent)."""
    index = text.rfind(search) if search else -1
    return text if index < 0 else text[:index]


def substring_after_last(text: str, search: str) -> str:
    """The text after the last ``search`` (all of it when ``search`` is empty or absent)."""
    index = text.rfind(search) if search else -1
    return text if index < 0 else text[index + len(search):]


def java_replace(text: str, search: str, replacement: str) -> str:
    """``String.replace``: every occurrence; an empty ``search`` inserts between all characters, as Java does."""
    return text.replace(search, replacement)


def pad(text: str | None, length: int, padding: str, left: bool) -> str | None:
    """``StringUtils.leftPad``/``rightPad``: pads to ``length`` with ``padding`` repeated; never truncates."""
    if text is None:
        return None
    missing = length - len(text)
    if missing <= 0:
        return text
    fill = (padding * (missing // len(padding) + 1))[:missing]
    return fill + text if left else text + fill


# --- dates ----------------------------------------------------------------------------------------

_OFFSET = re.compile(r"(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?")
_SHORT_ZONES = {"PST": "America/Los_Angeles", "PDT": "America/Los_Angeles", "MST": "America/Denver",
                "CST": "America/Chicago", "EST": "America/New_York", "HST": "Pacific/Honolulu",
                "CET": "Europe/Paris", "EET": "Europe/Athens", "IST": "Asia/Kolkata", "JST": "Asia/Tokyo"}


def _zone_parts(name: str) -> tuple[str, timedelta | None]:
    text = name.strip()
    if text.upper() in ("UTC", "GMT", "Z", "UT"):
        return "UTC", timedelta(0)
    match = _OFFSET.fullmatch(text)
    if match:
        sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if hours > 18 or minutes > 59:
            raise ValueError(f"unknown time zone {name!r}")
        delta = timedelta(hours=hours, minutes=minutes)
        return f"{sign}{hours:02d}:{minutes:02d}", -delta if sign == "-" else delta
    region = _SHORT_ZONES.get(text.upper(), text)
    try:
        ZoneInfo(region)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r} (use a name such as America/New_York or an offset "
                         f"such as GMT+8:00)") from None
    return region, None


def resolve_zone(name: str) -> tzinfo:
    """A time zone as Java's ``TimeZone.getTimeZone`` reads it: ``UTC``, ``GMT+8:00``, ``-05:00``,
    ``America/New_York``, ``PST``; raises ValueError for others."""
    region, offset = _zone_parts(name)
    if offset is not None:
        return UTC if not offset else timezone(offset)
    return ZoneInfo(region)


def spark_zone(name: str) -> tuple[str, bool]:
    """The zone id Spark accepts for ``name``, and whether it has one fixed offset."""
    region, offset = _zone_parts(name)
    return region, offset is not None


def check_date_pattern(pattern: str) -> None:
    """Raise ValueError when Flowsite cannot read the Java date pattern."""
    compile_pattern(pattern)


def _moment(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _EPOCH + timedelta(milliseconds=int(value))
    return None


def format_date(value: Any, pattern: str, zone: tzinfo | None) -> str | None:
    """NiFi's ``format``: a timestamp, date or epoch-millisecond number in the Java pattern, in
    ``zone`` (the process's local zone when ``None``); ``None`` for any other value."""
    moment = _moment(value)
    if moment is None:
        return None
    local = moment.astimezone(zone) if zone is not None else moment.astimezone()
    return compile_pattern(pattern).format(local)


def parse_date(text: str, pattern: str, zone: tzinfo | None) -> datetime | None:
    """NiFi's ``toDate``: ``text`` read with the Java pattern in ``zone`` (local when ``None``), as
    a UTC timestamp; ``None`` when it does not match."""
    local_zone = zone if zone is not None else datetime.now().astimezone().tzinfo
    try:
        parsed = compile_pattern(pattern).parse(text, local_zone or UTC)
    except ValueError:
        return None
    return parsed.astimezone(UTC)


# --- JSON, hashes, Base64 -------------------------------------------------------------------------

def _json_ready(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    entries = map_items(value) if isinstance(value, list) else None
    if entries is not None:
        return {str(k): _json_ready(v) for k, v in entries}
    if isinstance(value, list):
        return [_json_ready(v) for v in value]
    if isinstance(value, (datetime, date)):
        return epoch_millis(value)
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return value


def escape_json(value: Any) -> str:
    """``escapeJson``: the value as JSON text (a string gets its quotes: ``"John"``)."""
    return json.dumps(_json_ready(value), separators=(",", ":"), ensure_ascii=False)


def unescape_json(text: Any) -> Any:
    """``unescapeJson``: the JSON text parsed (objects become dicts); raises ValueError for non-text or bad JSON."""
    if not isinstance(text, str):
        raise ValueError("unescapeJson() takes text")
    return json.loads(text)


HASHES = {"MD5": "md5", "SHA-1": "sha1", "SHA": "sha1", "SHA-224": "sha224", "SHA-256": "sha256",
          "SHA-384": "sha384", "SHA-512": "sha512"}


def hash_hex(text: str, algorithm: str) -> str:
    """``hash``: the hex digest of the UTF-8 text; ``algorithm`` is one of HASHES (NiFi's names)."""
    return hashlib.new(HASHES[algorithm.upper()], text.encode("utf-8")).hexdigest()


def base64_encode(value: Any) -> Any:
    """``base64Encode``: text gives text, bytes give bytes; ValueError for anything else."""
    if isinstance(value, str):
        return base64.b64encode(value.encode("utf-8")).decode("ascii")
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value)
    raise ValueError("base64Encode() takes text or bytes")


def base64_decode(value: Any) -> Any:
    """``base64Decode``: text gives text (UTF-8), bytes give bytes; ValueError for anything else."""
    if isinstance(value, str):
        return base64.b64decode(value).decode("utf-8", errors="replace")
    if isinstance(value, (bytes, bytearray)):
        return base64.b64decode(value)
    raise ValueError("base64Decode() takes text or bytes")
