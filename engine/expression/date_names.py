"""The Locale.US texts of Java's DateTimeFormatter: month, day, era, quarter and day-period names, offsets
in their ISO and localized forms, and the names of every time zone Java 17 knows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ERAS = {1: ("BC", "Before Christ", "B"), 3: ("AD", "Anno Domini", "A")}
QUARTERS = ("1st quarter", "2nd quarter", "3rd quarter", "4th quarter")


def text(full: str, count: int) -> str:
    """A name in the form a letter count asks for: 4 full, 5 narrow (first letter), fewer short (three letters)."""
    if count == 4:
        return full
    return full[0] if count == 5 else full[:3]


def quarter_text(quarter: int, count: int) -> str:
    """Q/q as text: ``Q3`` (3 letters), ``3rd quarter`` (4) or ``3`` (5)."""
    if count == 4:
        return QUARTERS[quarter - 1]
    return str(quarter) if count == 5 else f"Q{quarter}"


def day_period(hour: int, minute: int, count: int) -> str:
    """B: the flexible day period of Locale.US (``in the morning``, ``noon``, ``at night`` …); midnight and noon
    are exact minutes, narrow (5 letters) ``mi`` and ``n``."""
    if minute == 0 and hour in (0, 12):
        if count == 5:
            return "mi" if hour == 0 else "n"
        return "midnight" if hour == 0 else "noon"
    if 6 <= hour < 12:
        return "in the morning"
    if 12 <= hour < 18:
        return "in the afternoon"
    return "in the evening" if 18 <= hour < 21 else "at night"


DAY_PERIODS = ("midnight", "noon", "mi", "n", "in the morning", "in the afternoon", "in the evening", "at night")
# Each day period's minutes of the day, from (inclusive) to (exclusive); midnight and noon are single minutes.
PERIOD_MINUTES = {"midnight": (0, 0), "mi": (0, 0), "noon": (720, 720), "n": (720, 720),
                  "in the morning": (360, 720), "in the afternoon": (720, 1080), "in the evening": (1080, 1260),
                  "at night": (1260, 360)}


def period_includes(period: str, minute_of_day: int) -> bool:
    """Whether a minute of the day falls in a day period (night wraps past midnight)."""
    start, end = PERIOD_MINUTES[period]
    if start == end:
        return minute_of_day == start
    return start <= minute_of_day < end if start < end else minute_of_day >= start or minute_of_day < end


def period_middle(period: str) -> int:
    """The minute of the day a day period alone stands for: its middle (09:00 in the morning, 01:30 at night)."""
    start, end = PERIOD_MINUTES[period]
    return (start + ((end - start) % 1440) // 2) % 1440


def offset_seconds(dt: datetime) -> int:
    """The offset from UTC of an aware datetime, in seconds."""
    delta = dt.utcoffset() or timedelta(0)
    return int(delta.total_seconds())


def iso_offset(seconds: int, count: int, zero: str) -> str:
    """An offset as X/x/Z print it: 1 ``+HHmm`` (minutes only when not zero), 2 ``+HHMM``, 3 ``+HH:MM``,
    4 ``+HHMMss`` and 5 ``+HH:MM:ss`` (seconds only when not zero); a zero offset is ``zero``."""
    if seconds == 0:
        return zero
    sign = "-" if seconds < 0 else "+"
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    colon = ":" if count in (3, 5) else ""
    result = f"{sign}{hours:02d}"
    if count == 1:
        return result + (f"{minutes:02d}" if minutes else "")
    result += f"{colon}{minutes:02d}"
    if count >= 4 and secs:
        result += f"{colon}{secs:02d}"
    return result


def localized_offset(seconds: int, full: bool) -> str:
    """O (and ZZZZ): ``GMT+8`` / ``GMT+5:30`` short, ``GMT+08:00`` full; ``GMT`` for zero."""
    if seconds == 0:
        return "GMT"
    sign = "-" if seconds < 0 else "+"
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    if full:
        result = f"GMT{sign}{hours:02d}:{minutes:02d}"
    else:
        result = f"GMT{sign}{hours}" + (f":{minutes:02d}" if minutes or secs else "")
    return result + (f":{secs:02d}" if secs else "")


def parse_offset(value: str) -> int:
    """Seconds of an offset as any of X, x, Z or O print it (``Z``, ``+0530``, ``-08:00``, ``GMT+8``)."""
    body = value.upper()
    if body.startswith("GMT"):
        body = body[3:]
    if body in ("", "Z"):
        return 0
    sign, digits = (-1 if body[0] == "-" else 1), body[1:]
    if ":" in digits:
        parts = [int(part) for part in digits.split(":")]
    else:
        width = 1 if len(digits) % 2 else 2  # GMT+8 / GMT+830 have a one-digit hour
        parts = [int(digits[:width])] + [int(digits[i:i + 2]) for i in range(width, len(digits), 2)]
    parts += [0] * (3 - len(parts))
    return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])


_ZONE_TABLE = Path(__file__).with_name("zone_names.tsv")


@dataclass(frozen=True)
class _ZoneNames:
    """Java 17's Locale.US names of every zone it knows, read from zone_names.tsv (scripts/zone-names.java)."""

    by_zone: dict[str, tuple[str, ...]]  # zone ID → generic short, generic long, standard short and long, daylight
    zone_by_name: dict[str, str]  # casefolded name → the zone Java's parser reads it as
    names: list[str]  # every name, longest first, for the parser's regex


@cache
def _zone_names() -> _ZoneNames:
    by_zone: dict[str, tuple[str, ...]] = {}
    zone_by_name: dict[str, str] = {}
    preferred: dict[str, str] = {}
    for line in _ZONE_TABLE.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if line.startswith("="):
            preferred[fields[0][1:].casefold()] = fields[1]
            continue
        by_zone[fields[0]] = tuple(fields[1:])
        for name in fields[1:]:
            zone_by_name.setdefault(name.casefold(), fields[0])
    zone_by_name.update(preferred)  # a name several zones carry reads as the zone Java prefers
    every = {name for names in by_zone.values() for name in names}
    return _ZoneNames(by_zone, zone_by_name, sorted(every, key=len, reverse=True))


def zone_id(zone: tzinfo | None) -> str:
    """V: the zone's ID (``Europe/Paris``; ``UTC`` for UTC; ``+08:00`` for a fixed offset)."""
    if isinstance(zone, ZoneInfo):
        return zone.key
    if zone is None or zone is timezone.utc:
        return "UTC"
    return iso_offset(int((zone.utcoffset(None) or timedelta(0)).total_seconds()), 5, "Z")


def zone_name(dt: datetime, count: int, generic: bool) -> str:
    """z (specific: ``PDT``, ``Pacific Daylight Time``) and v (generic: ``PT``, ``Pacific Time``) as Java 17
    prints them for Locale.US; a fixed offset prints as its ID, and a zone Java does not know as its tz database
    abbreviation (short) or localized offset (long)."""
    zone = dt.tzinfo
    key = zone_id(zone)
    if not isinstance(zone, ZoneInfo) and zone is not timezone.utc:
        return key
    names = _zone_names().by_zone.get(key)
    if names is None:
        if generic and count == 1:
            return key
        return dt.tzname() or key if count < 4 else localized_offset(offset_seconds(dt), True)
    if generic:
        return names[1] if count == 4 else names[0]
    daylight = is_daylight(dt)
    return names[(5 if daylight else 3) if count == 4 else (4 if daylight else 2)]


# Zones the tz database gives a negative daylight saving (winter time, Ramadan time): the year that began and the
# standard offset (hours) of the rearguard data Java compiles instead, where the other offset is daylight time.
_NEGATIVE_SAVING = {"Europe/Dublin": (1971, 0), "Eire": (1971, 0), "Africa/Casablanca": (2018, 0),
                    "Africa/El_Aaiun": (2018, 0), "Africa/Windhoek": (1994, 1)}


def is_daylight(dt: datetime) -> bool:
    """Whether daylight saving time is in effect, as Java decides it (Europe/Dublin's summer IST is daylight,
    its winter GMT standard)."""
    saving = dt.dst() or timedelta(0)
    since, standard = _NEGATIVE_SAVING.get(zone_id(dt.tzinfo), (10000, 0))
    if saving or dt.year < since:
        return saving > timedelta(0)
    return offset_seconds(dt) > standard * 3600


def zone_for_name(name: str) -> tzinfo:
    """The zone a z/v name or a zone ID stands for (``PDT``, ``Pacific Time``, ``Europe/Paris``, ``UTC``); a name
    several zones carry (``CST``, ``IST``) stands for the zone Java's parser prefers."""
    folded = name.casefold()
    if name[:1] in "+-":
        return timezone(timedelta(seconds=parse_offset(name)))
    if folded.startswith(("gmt", "utc")) and name[3:4] in ("+", "-"):
        return timezone(timedelta(seconds=parse_offset(name[3:])))
    if folded in ("utc", "z", "ut"):
        return timezone.utc
    key = _zone_names().zone_by_name.get(folded, name)
    return timezone.utc if key == "UTC" else ZoneInfo(key)


def zone_names() -> list[str]:
    """Every zone name z and v print, longest first."""
    return _zone_names().names
