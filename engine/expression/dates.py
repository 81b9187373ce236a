"""Java date patterns (``yyyy-MM-dd'T'HH:mm:ss.SSSZ``) for formatting and parsing, independent of locale."""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta, timezone, tzinfo
from collections.abc import Callable
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["DatePattern", "DEFAULT_PATTERN", "compile_pattern", "resolve_zone", "UTC"]

UTC = timezone.utc
DEFAULT_PATTERN = "EEE MMM dd HH:mm:ss zzz yyyy"

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_SUPPORTED = set("yuMLdDHhkKmsSnEazZX")


def resolve_zone(name: str) -> tzinfo:
    """Return the time zone named ``name`` (``UTC``, ``GMT``, ``Z`` or an IANA name such as ``Europe/Paris``)."""
    if name.upper() in ("UTC", "GMT", "Z"):
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}") from None


def _offset(dt: datetime, colon: bool) -> str:
    delta = dt.utcoffset() or timedelta(0)
    minutes = int(delta.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hours, minutes = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}{':' if colon else ''}{minutes:02d}"


def _format_field(letter: str, count: int, dt: datetime, nanos: int) -> str:
    if letter in "yu":
        return f"{dt.year % 100:02d}" if count == 2 else f"{dt.year:0{count}d}"
    if letter in "ML":
        if count >= 4:
            return _MONTHS[dt.month - 1]
        if count == 3:
            return _MONTHS[dt.month - 1][:3]
        return f"{dt.month:0{count}d}"
    if letter == "E":
        day = _DAYS[dt.weekday()]
        return day if count >= 4 else day[:3]
    if letter == "a":
        return "AM" if dt.hour < 12 else "PM"
    if letter == "z":
        return dt.tzname() or "UTC"
    if letter == "Z":
        return _offset(dt, colon=False)
    if letter == "X":
        if not dt.utcoffset():
            return "Z"
        text = _offset(dt, colon=count >= 3)
        return text[:3] if count == 1 else text
    if letter == "S":
        # A fraction of the second: S is tenths, SSS milliseconds, SSSSSSSSS nanoseconds.
        return f"{nanos:09d}"[:count].ljust(count, "0")
    value = {"d": dt.day, "D": dt.timetuple().tm_yday, "H": dt.hour, "h": dt.hour % 12 or 12, "k": dt.hour or 24,
             "K": dt.hour % 12, "m": dt.minute, "s": dt.second, "n": nanos}[letter]
    return f"{value:0{count}d}"


_NUMERIC = {"d": "day", "H": "hour", "m": "minute", "s": "second"}


def _writer(token: tuple[str, int] | str) -> Callable[[datetime, int], str]:
    """A function rendering one pattern token; the common numeric fields skip the general dispatch."""
    if isinstance(token, str):
        return lambda dt, nanos: token
    letter, count = token
    if letter in _NUMERIC:
        field, spec = _NUMERIC[letter], f"0{count}d"
        return lambda dt, nanos: format(getattr(dt, field), spec)
    if letter in "ML" and count <= 2:
        spec = f"0{count}d"
        return lambda dt, nanos: format(dt.month, spec)
    if letter in "yu" and count != 2:
        spec = f"0{count}d"
        return lambda dt, nanos: format(dt.year, spec)
    return lambda dt, nanos: _format_field(letter, count, dt, nanos)


def _names(names: tuple[str, ...], count: int) -> str:
    return "|".join(name if count >= 4 else name[:3] for name in names)


def _field_regex(letter: str, count: int, group: str) -> str:
    if letter in "yu":
        body = r"\d{2}" if count == 2 else r"\d{4}"
    elif letter in "ML":
        body = _names(_MONTHS, count) if count >= 3 else r"\d{1,2}"
    elif letter == "E":
        body = _names(_DAYS, count)
    elif letter == "a":
        body = "AM|PM"
    elif letter == "z":
        body = r"[A-Za-z][A-Za-z0-9/_+-]*"
    elif letter == "Z":
        body = r"[+-]\d{4}"
    elif letter == "X":
        body = r"Z|[+-]\d{2}(?::?\d{2})?"
    elif letter == "S":
        body = rf"\d{{{count}}}"
    elif letter == "n":
        body = r"\d{1,9}"
    elif letter == "D":
        body = r"\d{1,3}"
    else:
        body = r"\d{1,2}"
    return f"(?P<{group}>{body})"


class DatePattern:
    """A compiled Java date pattern: ``format(datetime)`` and ``parse(text, zone)``."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens: list[tuple[str, int] | str] = []
        i = 0
        while i < len(pattern):
            char = pattern[i]
            if char == "'":
                end = pattern.find("'", i + 1)
                if end == -1:
                    raise ValueError(f"unterminated quote in date pattern {pattern!r}")
                self._tokens.append("'" if end == i + 1 else pattern[i + 1:end])
                i = end + 1
            elif char.isascii() and char.isalpha():
                if char not in _SUPPORTED:
                    raise ValueError(f"unsupported letter {char!r} in date pattern {pattern!r}")
                count = 1
                while i + count < len(pattern) and pattern[i + count] == char:
                    count += 1
                self._tokens.append((char, count))
                i += count
            else:
                self._tokens.append(char)
                i += 1
        self._writers = [_writer(token) for token in self._tokens]
        parts = []
        for index, token in enumerate(self._tokens):
            if isinstance(token, str):
                parts.append(re.escape(token))
            else:
                parts.append(_field_regex(*token, group=f"{token[0]}{index}"))
        self._regex = re.compile("".join(parts), re.IGNORECASE)

    def format(self, dt: datetime, nanos: int | None = None) -> str:
        """Render ``dt`` in this pattern; ``nanos`` is the nanosecond of the second when finer than ``dt``'s."""
        if nanos is None:
            nanos = dt.microsecond * 1000
        return "".join([writer(dt, nanos) for writer in self._writers])

    def parse(self, text: str, zone: tzinfo = UTC) -> datetime:
        """Parse ``text``; fields the pattern lacks default to 1970-01-01 00:00:00 in ``zone``."""
        dt, _ = self.parse_nanos(text, zone)
        return dt

    def parse_nanos(self, text: str, zone: tzinfo = UTC) -> tuple[datetime, int]:
        """Parse ``text`` to a datetime and the nanosecond of its second (which the datetime rounds down)."""
        match = self._regex.fullmatch(text)
        if match is None:
            raise ValueError(f"{text!r} does not match date pattern {self.pattern!r}")
        fields = {"y": 1970, "M": 1, "d": 1, "H": 0, "m": 0, "s": 0}
        nanos = 0
        day_of_year = None
        pm = None
        hour12 = None
        for name, value in match.groupdict().items():
            letter = name[0]
            if letter in "ML" and not value.isdigit():
                fields["M"] = [m[:3].lower() for m in _MONTHS].index(value[:3].lower()) + 1
            elif letter in "yu":
                fields["y"] = 2000 + int(value) if len(value) == 2 else int(value)
            elif letter in "MLdHms":
                fields["M" if letter == "L" else letter] = int(value)
            elif letter == "S":
                nanos = int(value.ljust(9, "0"))
            elif letter == "n":
                nanos = int(value)
            elif letter == "D":
                day_of_year = int(value)
            elif letter == "k":
                fields["H"] = int(value) % 24
            elif letter in "hK":
                hour12 = int(value) % 12
            elif letter == "a":
                pm = value.upper() == "PM"
            elif letter == "z":
                zone = resolve_zone(value)
            elif letter in "ZX":
                if value.upper() == "Z":
                    zone = UTC
                else:
                    digits = value[1:].replace(":", "").ljust(4, "0")
                    delta = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
                    zone = timezone(-delta if value[0] == "-" else delta)
        if hour12 is not None:
            fields["H"] = hour12 + (12 if pm else 0)
        result = datetime(fields["y"], fields["M"], fields["d"], fields["H"], fields["m"], fields["s"], nanos // 1000,
                          tzinfo=zone)
        if day_of_year is not None:
            if not 1 <= day_of_year <= (366 if calendar.isleap(result.year) else 365):
                raise ValueError(f"day of year {day_of_year} is out of range in {text!r}")
            result = result.replace(month=1, day=1) + timedelta(days=day_of_year - 1)
        return result, nanos


@lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> DatePattern:
    """Return the compiled form of a Java date pattern; raises ValueError for unsupported letters."""
    return DatePattern(pattern)
