"""Java date patterns (``yyyy-MM-dd'T'HH:mm:ss.SSSZ``) for formatting and parsing, as java.time's
DateTimeFormatter reads them with Locale.US: every pattern letter, quoted literals, ``''``, optional
sections ``[…]`` and the pad modifier ``p``. A pattern compiles once into a list of writers and a regex."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from engine.expression import date_names as names

__all__ = ["DatePattern", "DEFAULT_PATTERN", "compile_pattern", "resolve_zone", "UTC", "Field", "Section",
           "week_fields"]

UTC = timezone.utc
DEFAULT_PATTERN = "EEE MMM dd HH:mm:ss zzz yyyy"

# The most letters each one takes (Java refuses more: "Too many pattern letters").
_MAX_COUNT = {"G": 5, "u": 19, "y": 19, "Y": 19, "Q": 5, "q": 5, "M": 5, "L": 5, "w": 2, "W": 1, "d": 2, "D": 3,
              "F": 1, "g": 19, "E": 5, "e": 5, "c": 5, "a": 1, "B": 5, "h": 2, "K": 2, "k": 2, "H": 2, "m": 2,
              "s": 2, "S": 9, "A": 19, "n": 19, "N": 19, "V": 2, "v": 4, "z": 4, "O": 4, "X": 5, "x": 5, "Z": 5}
_RESERVED = "#{}"
_GMT = ZoneInfo("GMT")


class Field:
    """A pattern letter repeated ``count`` times; ``pad`` is the width a preceding ``p`` pads it to."""

    __slots__ = ("letter", "count", "pad")

    def __init__(self, letter: str, count: int, pad: int = 0) -> None:
        self.letter, self.count, self.pad = letter, count, pad


class Section(list):
    """An optional section ``[…]`` of tokens: always printed, optional when parsing."""


def resolve_zone(name: str) -> tzinfo:
    """Return the time zone named ``name`` (``UTC``, ``GMT``, ``Z`` or an IANA name such as ``Europe/Paris``);
    ``GMT`` keeps its name so that ``z`` prints ``GMT`` as Java does."""
    if name.upper() in ("UTC", "Z"):
        return UTC
    if name.upper() == "GMT":
        return _GMT
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}") from None


def _check_count(letter: str, count: int, pattern: str) -> None:
    if count > _MAX_COUNT[letter]:
        raise ValueError(f"too many pattern letters {letter * count!r} in date pattern {pattern!r}")
    invalid = ((letter == "c" and count == 2) or (letter == "B" and count in (2, 3))
               or (letter == "V" and count != 2) or (letter == "v" and count not in (1, 4))
               or (letter == "O" and count not in (1, 4)))
    if invalid:
        raise ValueError(f"invalid pattern letters {letter * count!r} in date pattern {pattern!r}")


def tokenize(pattern: str) -> list:
    """The pattern as literal strings, Fields and nested Sections; raises ValueError where Java refuses it."""
    root: list = []
    stack = [root]
    i, pad = 0, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "'":
            literal, i = _quoted(pattern, i)
            stack[-1].append(literal)
            continue
        if char.isascii() and char.isalpha():
            count = 1
            while i + count < len(pattern) and pattern[i + count] == char:
                count += 1
            i += count
            if char == "p":
                if i >= len(pattern) or pattern[i] in "[]'":
                    raise ValueError(f"pad letter 'p' must be followed by a field in date pattern {pattern!r}")
                pad = count
                continue
            if char not in _MAX_COUNT:
                raise ValueError(f"unsupported letter {char!r} in date pattern {pattern!r}")
            _check_count(char, count, pattern)
            stack[-1].append(Field(char, count, pad))
            pad = 0
            continue
        if char in _RESERVED:
            raise ValueError(f"reserved character {char!r} in date pattern {pattern!r}")
        if char == "[":
            section = Section()
            stack[-1].append(section)
            stack.append(section)
        elif char == "]":
            if len(stack) == 1:
                raise ValueError(f"']' without '[' in date pattern {pattern!r}")
            stack.pop()
        else:
            stack[-1].append(char)
        i += 1
    return root


def _quoted(pattern: str, start: int) -> tuple[str, int]:
    """The literal of a quote at ``start`` (``''`` is one quote, also inside quotes) and the index after it."""
    if pattern.startswith("''", start):
        return "'", start + 2
    out, i = [], start + 1
    while True:
        end = pattern.find("'", i)
        if end == -1:
            raise ValueError(f"unterminated quote in date pattern {pattern!r}")
        out.append(pattern[i:end])
        if pattern.startswith("''", end):
            out.append("'")
            i = end + 2
            continue
        return "".join(out), end + 1


def week_fields(day: date) -> tuple[int, int, int, int]:
    """Locale.US week fields (weeks start on Sunday, week 1 holds January 1st): the week-based year,
    week of that year, week of the month and localized day of week (Sunday 1)."""
    weekday = (day.weekday() + 1) % 7  # Sunday 0
    saturday = day + timedelta(days=6 - weekday)
    first_of_month = (day.replace(day=1).weekday() + 1) % 7
    return (saturday.year, (saturday.timetuple().tm_yday - 1) // 7 + 1, (day.day - 1 + first_of_month) // 7 + 1,
            weekday + 1)


def _numeric(value: int, count: int, width: int = 0) -> str:
    return format(value, f"0{max(count, width)}d") if value >= 0 else "-" + format(-value, f"0{count}d")


def _year(value: int, count: int) -> str:
    return f"{value % 100:02d}" if count == 2 else _numeric(value, count)


def _zone_text(letter: str, count: int, dt: datetime) -> str:
    seconds = names.offset_seconds(dt)
    if letter == "X":
        return names.iso_offset(seconds, count, "Z")
    if letter == "x":
        return names.iso_offset(seconds, count, {1: "+00", 3: "+00:00", 5: "+00:00"}.get(count, "+0000"))
    if letter == "Z":
        if count == 4:
            return names.localized_offset(seconds, full=True)
        return names.iso_offset(seconds, 5, "Z") if count == 5 else names.iso_offset(seconds, 2, "+0000")
    if letter == "O":
        return names.localized_offset(seconds, full=count == 4)
    if letter == "V":
        return names.zone_id(dt.tzinfo)
    return names.zone_name(dt, count, generic=letter == "v")


def format_field(letter: str, count: int, dt: datetime, nanos: int) -> str:
    """One field of ``dt`` (whose nanosecond of the second is ``nanos``) as Java prints it."""
    if letter in "yu":
        return _year(dt.year, count)
    if letter in "ML":
        return names.text(names.MONTHS[dt.month - 1], count) if count >= 3 else _numeric(dt.month, count)
    if letter in "Qq":
        quarter = (dt.month - 1) // 3 + 1
        return names.quarter_text(quarter, count) if count >= 3 else _numeric(quarter, count)
    if letter in "Ywec" or letter == "W":
        week_year, week, week_of_month, weekday = week_fields(dt.date())
        if letter == "Y":
            return _year(week_year, count)
        if letter in "wW":
            return _numeric(week if letter == "w" else week_of_month, count)
        if count <= 2:
            return _numeric(weekday, count)
        return names.text(names.DAYS[dt.weekday()], count)
    if letter == "E":
        return names.text(names.DAYS[dt.weekday()], max(count, 3))
    if letter == "G":
        return names.ERAS[3][{4: 1, 5: 2}.get(count, 0)]
    if letter == "a":
        return "AM" if dt.hour < 12 else "PM"
    if letter == "B":
        return names.day_period(dt.hour, dt.minute, count)
    if letter in "XxZOVvz":
        return _zone_text(letter, count, dt)
    if letter == "S":
        return f"{nanos:09d}"[:count]
    seconds_of_day = dt.hour * 3600 + dt.minute * 60 + dt.second
    value = {"d": dt.day, "D": dt.timetuple().tm_yday, "H": dt.hour, "h": dt.hour % 12 or 12, "k": dt.hour or 24,
             "K": dt.hour % 12, "m": dt.minute, "s": dt.second, "n": nanos, "F": (dt.day - 1) // 7 + 1,
             "A": seconds_of_day * 1000 + nanos // 1_000_000, "N": seconds_of_day * 1_000_000_000 + nanos,
             "g": dt.toordinal() - 678576}[letter]
    return _numeric(value, count)


_ATTRIBUTE = {"d": "day", "H": "hour", "m": "minute", "s": "second", "M": "month", "L": "month"}


def _writer(token: Field | str) -> Callable[[datetime, int], str]:
    """A function rendering one token; the common numeric fields skip the general dispatch."""
    if isinstance(token, str):
        return lambda dt, nanos: token
    letter, count, pad = token.letter, token.count, token.pad
    if pad:
        inner = _writer(Field(letter, count))
        return lambda dt, nanos: inner(dt, nanos).rjust(pad)
    if letter in _ATTRIBUTE and count <= 2:
        attribute, spec = _ATTRIBUTE[letter], f"0{count}d"
        return lambda dt, nanos: format(getattr(dt, attribute), spec)
    if letter in "yu" and count != 2:
        spec = f"0{count}d"
        return lambda dt, nanos: format(dt.year, spec)
    if letter in "EML" and count <= 4:
        texts = [names.text(name, max(count, 3)) for name in (names.DAYS if letter == "E" else names.MONTHS)]
        if letter == "E":
            return lambda dt, nanos: texts[dt.weekday()]
        return lambda dt, nanos: texts[dt.month - 1]
    if letter == "S":
        return lambda dt, nanos: f"{nanos:09d}"[:count]
    if letter == "a":
        return lambda dt, nanos: "AM" if dt.hour < 12 else "PM"
    if letter == "z":
        return lambda dt, nanos: "UTC" if dt.tzinfo is UTC and count < 4 else names.zone_name(dt, count, False)
    return lambda dt, nanos: format_field(letter, count, dt, nanos)


def _flatten(tokens: list) -> list:
    flat: list = []
    for token in tokens:
        flat.extend(_flatten(token) if isinstance(token, Section) else [token])
    return flat


class DatePattern:
    """A compiled Java date pattern: ``format(datetime)`` and ``parse(text, zone)``."""

    def __init__(self, pattern: str) -> None:
        from engine.expression.date_parse import Parser

        self.pattern = pattern
        tokens = tokenize(pattern)
        self._writers = [_writer(token) for token in _flatten(tokens)]
        self._parser = Parser(pattern, tokens)

    def format(self, dt: datetime, nanos: int | None = None) -> str:
        """Render ``dt`` in this pattern; ``nanos`` is the nanosecond of the second when finer than ``dt``'s."""
        if nanos is None:
            nanos = dt.microsecond * 1000
        return "".join([writer(dt, nanos) for writer in self._writers])

    def parse(self, text: str, zone: tzinfo = UTC) -> datetime:
        """Parse ``text``; fields the pattern lacks default to 1970-01-01 00:00:00 in ``zone``."""
        return self._parser.parse(text, zone)[0]

    def parse_nanos(self, text: str, zone: tzinfo = UTC) -> tuple[datetime, int]:
        """Parse ``text`` to a datetime and the nanosecond of its second (which the datetime rounds down)."""
        return self._parser.parse(text, zone)


@lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> DatePattern:
    """Return the compiled form of a Java date pattern; raises ValueError where Java refuses the pattern."""
    return DatePattern(pattern)
