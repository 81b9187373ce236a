"""Instants (nanosecond points in time), NiFi's date amounts (``'3 months'``) and the time functions built on them."""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta, timezone, tzinfo

from engine.expression.dates import UTC, DatePattern

__all__ = ["Instant", "to_instant", "parse_standard_instant", "add_amount", "check_amount", "plus_duration",
           "minus_duration", "plus_instant_duration", "minus_instant_duration", "to_instant_function",
           "format_instant", "is_valid_instant", "is_valid_date", "to_micros", "to_nanos"]

_NANOS_PER_SECOND = 1_000_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
                  r"(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)", re.IGNORECASE)
_RFC_1123 = re.compile(r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), )?(\d{1,2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
                       r" (\d{4}) (\d{2}):(\d{2})(?::(\d{2}))? (GMT|[+-]\d{4})", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_AMOUNT = re.compile(r"\s*(\d+)\s+(nanoseconds?|seconds?|minutes?|hours?|days?|weeks?|months?|years?)\s*",
                     re.IGNORECASE)
_EXPECTED = ("expected '<integer> <unit>' such as '2 weeks' or '1 month'; units are nanosecond(s), second(s), "
             "minute(s), hour(s), day(s), week(s), month(s), year(s)")


class Instant:
    """A point in time with nanosecond precision (NiFi's Instant type); renders as ISO-8601 in UTC."""

    __slots__ = ("nanos",)

    def __init__(self, nanos: int) -> None:
        self.nanos = nanos

    @classmethod
    def from_datetime(cls, dt: datetime, nanos_of_second: int | None = None) -> "Instant":
        """The instant of an aware datetime; ``nanos_of_second`` replaces its microseconds when given."""
        delta = dt - _EPOCH
        seconds = delta.days * 86400 + delta.seconds
        fraction = delta.microseconds * 1000 if nanos_of_second is None else nanos_of_second
        return cls(seconds * _NANOS_PER_SECOND + fraction)

    @property
    def epoch_millis(self) -> int:
        """Milliseconds since the epoch, rounded down as Java's ``toEpochMilli``."""
        return self.nanos // 1_000_000

    @property
    def nano_of_second(self) -> int:
        """The nanoseconds within the second."""
        return self.nanos % _NANOS_PER_SECOND

    def to_datetime(self, zone: tzinfo = UTC) -> datetime:
        """The datetime in ``zone`` (microsecond precision)."""
        seconds = self.nanos // _NANOS_PER_SECOND
        return (_EPOCH + timedelta(seconds=seconds, microseconds=self.nano_of_second // 1000)).astimezone(zone)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instant) and other.nanos == self.nanos

    def __hash__(self) -> int:
        return hash(self.nanos)

    def __str__(self) -> str:
        text = self.to_datetime().strftime("%Y-%m-%dT%H:%M:%S")
        fraction = self.nano_of_second
        if fraction:
            digits = f"{fraction:09d}"
            text += "." + (digits[:3] if fraction % 1_000_000 == 0 else digits[:6] if fraction % 1000 == 0 else digits)
        return text + "Z"

    def __repr__(self) -> str:
        return f"Instant({self})"


def _offset_zone(text: str) -> tzinfo:
    if text.upper() in ("Z", "GMT"):
        return UTC
    digits = text[1:].replace(":", "").ljust(6, "0")
    delta = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4]), seconds=int(digits[4:6]))
    return timezone(-delta if text[0] == "-" else delta)


def parse_standard_instant(text: str) -> Instant | None:
    """Parse ISO-8601 (``2011-12-03T10:15:30Z``, ``…+01:00``) or RFC-1123 (``Tue, 3 Jun 2008 11:05:30 GMT``) text;
    None when it is neither."""
    try:
        match = _ISO.fullmatch(text)
        if match is not None:
            year, month, day, hour, minute, second, fraction, offset = match.groups()
            dt = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0),
                          tzinfo=_offset_zone(offset))
            return Instant.from_datetime(dt, int((fraction or "0").ljust(9, "0")))
        match = _RFC_1123.fullmatch(text)
        if match is not None:
            day, month, year, hour, minute, second, offset = match.groups()
            dt = datetime(int(year), _MONTHS.index(month.lower()) + 1, int(day), int(hour), int(minute),
                          int(second or 0), tzinfo=_offset_zone(offset))
            return Instant.from_datetime(dt, 0)
    except ValueError:
        return None
    return None


def to_instant(value: object) -> Instant | None:
    """Coerce to Instant: epoch milliseconds (number or digits), ISO-8601 or RFC-1123 text, or a Date."""
    if value is None or isinstance(value, Instant):
        return value
    if isinstance(value, bool):
        raise ValueError("cannot convert a boolean to an instant")
    if isinstance(value, (int, float)):
        return Instant(int(value) * 1_000_000)
    if isinstance(value, datetime):
        return Instant.from_datetime(value)
    text = str(value).strip()
    if _DIGITS.fullmatch(text):
        return Instant(int(text) * 1_000_000)
    instant = parse_standard_instant(text)
    if instant is None:
        raise ValueError(f"cannot convert {text!r} to an instant (expected epoch milliseconds, ISO-8601 such as "
                         "'2011-12-03T10:15:30Z' or RFC-1123 such as 'Tue, 3 Jun 2008 11:05:30 GMT')")
    return instant


def check_amount(amount: str) -> tuple[int, str]:
    """Parse a date amount such as ``'3 months'`` into (count, singular unit); raises ValueError otherwise."""
    if not amount or not amount.strip():
        raise ValueError(f"the amount is empty: {_EXPECTED}")
    match = _AMOUNT.fullmatch(amount)
    if match is None:
        raise ValueError(f"invalid amount {amount!r}: {_EXPECTED}")
    unit = match.group(2).lower()
    return int(match.group(1)), unit[:-1] if unit.endswith("s") else unit


def _plus_months(dt: datetime, months: int) -> datetime:
    index = dt.year * 12 + dt.month - 1 + months
    year, month = divmod(index, 12)
    if not 1 <= year <= 9999:
        raise ValueError("the result is outside the years 1 to 9999")
    day = min(dt.day, calendar.monthrange(year, month + 1)[1])
    return dt.replace(year=year, month=month + 1, day=day)


def add_amount(dt: datetime, nanos: int, amount: str, sign: int, zone: tzinfo) -> tuple[datetime, int]:
    """Add (``sign`` 1) or subtract (-1) a date amount to ``dt`` (whose nanosecond of second is ``nanos``).

    Nanoseconds up to hours are exact durations; days, weeks, months and years move the wall clock in ``zone``
    (months clamp to the month's last day), as Java's ``ZonedDateTime`` does.
    """
    count, unit = check_amount(amount)
    count *= sign
    if unit in ("nanosecond", "second", "minute", "hour"):
        factor = {"nanosecond": 1, "second": 10**9, "minute": 60 * 10**9, "hour": 3600 * 10**9}[unit]
        instant = Instant(Instant.from_datetime(dt, nanos).nanos + count * factor)
        return instant.to_datetime(dt.tzinfo or UTC), instant.nano_of_second
    local = dt.astimezone(zone).replace(tzinfo=None)
    try:
        if unit in ("day", "week"):
            local += timedelta(days=count * (7 if unit == "week" else 1))
        else:
            local = _plus_months(local, count * (12 if unit == "year" else 1))
    except OverflowError:
        raise ValueError("the result is outside the years 1 to 9999") from None
    return local.replace(tzinfo=zone), nanos


def plus_duration(subject: datetime, amount: str, zone: tzinfo = UTC) -> datetime:
    """``plusDuration``: the Date moved forward by ``amount`` (calendar units in ``zone``)."""
    return add_amount(subject, subject.microsecond * 1000, amount, 1, zone)[0]


def minus_duration(subject: datetime, amount: str, zone: tzinfo = UTC) -> datetime:
    """``minusDuration``: the Date moved back by ``amount`` (calendar units in ``zone``)."""
    return add_amount(subject, subject.microsecond * 1000, amount, -1, zone)[0]


def _instant_arithmetic(subject: Instant, amount: str, sign: int) -> Instant:
    dt, nanos = add_amount(subject.to_datetime(), subject.nano_of_second, amount, sign, UTC)
    return Instant.from_datetime(dt, nanos)


def plus_instant_duration(subject: Instant, amount: str) -> Instant:
    """``plusInstantDuration``: the Instant moved forward by ``amount``, calendar units in UTC."""
    return _instant_arithmetic(subject, amount, 1)


def minus_instant_duration(subject: Instant, amount: str) -> Instant:
    """``minusInstantDuration``: the Instant moved back by ``amount``, calendar units in UTC."""
    return _instant_arithmetic(subject, amount, -1)


def to_instant_function(subject: object, pattern: DatePattern, zone: tzinfo) -> Instant:
    """``toInstant(format, zone)``: a String parsed with a Java pattern (nanoseconds kept), or epoch milliseconds."""
    if isinstance(subject, str):
        dt, nanos = pattern.parse_nanos(subject, zone)
        return Instant.from_datetime(dt, nanos)
    return to_instant(subject)  # type: ignore[return-value]


def format_instant(subject: Instant, pattern: DatePattern, zone: tzinfo = UTC) -> str:
    """``formatInstant(format, zone)``: the Instant rendered with a Java pattern in ``zone``."""
    return pattern.format(subject.to_datetime(zone), subject.nano_of_second)


def is_valid_instant(subject: str | None) -> bool:
    """``isValidInstant``: whether the String is ISO-8601 or RFC-1123 date-time text."""
    return subject is not None and parse_standard_instant(subject.strip()) is not None


def is_valid_date(subject: str | None, pattern: DatePattern, zone: tzinfo = UTC) -> bool:
    """``isValidDate(format[, zone])``: whether the String is a real date (and wall time in ``zone``) in the pattern;
    false, as in NiFi, when a pattern or zone given by an expression is invalid (it arrives as its ValueError)."""
    if subject is None or not isinstance(pattern, DatePattern) or not isinstance(zone, tzinfo):
        return False
    try:
        dt = pattern.parse(subject.strip(), zone)
    except ValueError:  # no match, or a day the calendar lacks (31 February)
        return False
    # A wall time skipped by a daylight-saving change does not survive the round trip through UTC.
    return dt.astimezone(UTC).astimezone(dt.tzinfo).replace(tzinfo=None) == dt.replace(tzinfo=None)


def to_micros(subject: Instant) -> int:
    """``toMicros``: microseconds since the epoch."""
    return subject.nanos // 1000


def to_nanos(subject: Instant) -> int:
    """``toNanos``: nanoseconds since the epoch."""
    return subject.nanos
