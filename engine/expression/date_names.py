"""The Locale.US texts of Java's DateTimeFormatter: month, day, era, quarter and day-period names, offsets
in their ISO and localized forms, and the names of common time zones."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo
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


# Zone names Java prints for Locale.US: (generic short, generic long, standard short, standard long,
# daylight short, daylight long), by the metazone of common IANA zones.
_METAZONES = {
    "Pacific": ("PT", "Pacific Time", "PST", "Pacific Standard Time", "PDT", "Pacific Daylight Time"),
    "Mountain": ("MT", "Mountain Time", "MST", "Mountain Standard Time", "MDT", "Mountain Daylight Time"),
    "Central": ("CT", "Central Time", "CST", "Central Standard Time", "CDT", "Central Daylight Time"),
    "Eastern": ("ET", "Eastern Time", "EST", "Eastern Standard Time", "EDT", "Eastern Daylight Time"),
    "Alaska": ("AKT", "Alaska Time", "AKST", "Alaska Standard Time", "AKDT", "Alaska Daylight Time"),
    "Hawaii": ("HST", "Hawaii-Aleutian Time", "HST", "Hawaii-Aleutian Standard Time", "HDT",
               "Hawaii-Aleutian Daylight Time"),
    "GMT": ("GMT", "Greenwich Mean Time", "GMT", "Greenwich Mean Time", "GMT", "Greenwich Mean Time"),
    "UTC": ("UTC", "Coordinated Universal Time", "UTC", "Coordinated Universal Time", "UTC",
            "Coordinated Universal Time"),
    "British": ("BT", "British Time", "GMT", "Greenwich Mean Time", "BST", "British Summer Time"),
    "Irish": ("IT", "Irish Time", "GMT", "Greenwich Mean Time", "IST", "Irish Standard Time"),
    "Europe_Western": ("WET", "Western European Time", "WET", "Western European Standard Time", "WEST",
                       "Western European Summer Time"),
    "Europe_Central": ("CET", "Central European Time", "CET", "Central European Standard Time", "CEST",
                       "Central European Summer Time"),
    "Europe_Eastern": ("EET", "Eastern European Time", "EET", "Eastern European Standard Time", "EEST",
                       "Eastern European Summer Time"),
    "Moscow": ("MSK", "Moscow Time", "MSK", "Moscow Standard Time", "MSD", "Moscow Summer Time"),
    "India": ("IT", "India Time", "IST", "India Standard Time", "IDT", "India Daylight Time"),
    "China": ("CT", "China Time", "CST", "China Standard Time", "CDT", "China Daylight Time"),
    "Japan": ("JT", "Japan Time", "JST", "Japan Standard Time", "JDT", "Japan Daylight Time"),
    "Korea": ("KT", "Korean Time", "KST", "Korean Standard Time", "KDT", "Korean Daylight Time"),
    "Australia_Eastern": ("AET", "Eastern Australia Time", "AEST", "Australian Eastern Standard Time", "AEDT",
                          "Australian Eastern Daylight Time"),
}
_ZONE_METAZONE = {
    "America/Los_Angeles": "Pacific", "America/Vancouver": "Pacific", "US/Pacific": "Pacific",
    "America/Denver": "Mountain", "America/Phoenix": "Mountain", "US/Mountain": "Mountain",
    "America/Chicago": "Central", "US/Central": "Central",
    "America/New_York": "Eastern", "America/Toronto": "Eastern", "America/Detroit": "Eastern", "US/Eastern": "Eastern",
    "America/Anchorage": "Alaska", "Pacific/Honolulu": "Hawaii",
    "UTC": "UTC", "Etc/UTC": "UTC", "GMT": "GMT", "Etc/GMT": "GMT", "Africa/Abidjan": "GMT",
    "Europe/London": "British", "Europe/Dublin": "Irish", "Europe/Lisbon": "Europe_Western",
    "Europe/Paris": "Europe_Central", "Europe/Berlin": "Europe_Central", "Europe/Vienna": "Europe_Central",
    "Europe/Rome": "Europe_Central", "Europe/Madrid": "Europe_Central", "Europe/Amsterdam": "Europe_Central",
    "Europe/Brussels": "Europe_Central", "Europe/Zurich": "Europe_Central", "Europe/Stockholm": "Europe_Central",
    "Europe/Oslo": "Europe_Central", "Europe/Copenhagen": "Europe_Central", "Europe/Prague": "Europe_Central",
    "Europe/Warsaw": "Europe_Central", "Europe/Budapest": "Europe_Central", "CET": "Europe_Central",
    "Europe/Athens": "Europe_Eastern", "Europe/Helsinki": "Europe_Eastern", "Europe/Kiev": "Europe_Eastern",
    "Europe/Kyiv": "Europe_Eastern", "Europe/Bucharest": "Europe_Eastern", "EET": "Europe_Eastern",
    "Europe/Moscow": "Moscow", "Asia/Kolkata": "India", "Asia/Calcutta": "India",
    "Asia/Shanghai": "China", "Asia/Tokyo": "Japan", "Asia/Seoul": "Korea",
    "Australia/Sydney": "Australia_Eastern", "Australia/Melbourne": "Australia_Eastern",
}


def zone_id(zone: tzinfo | None) -> str:
    """V: the zone's ID (``Europe/Paris``; ``UTC`` for UTC; ``+08:00`` for a fixed offset)."""
    if isinstance(zone, ZoneInfo):
        return zone.key
    if zone is None or zone is timezone.utc:
        return "UTC"
    return iso_offset(int((zone.utcoffset(None) or timedelta(0)).total_seconds()), 5, "Z")


def zone_name(dt: datetime, count: int, generic: bool) -> str:
    """z (specific: ``PDT``, ``Pacific Daylight Time``) and v (generic: ``PT``, ``Pacific Time``) for
    Locale.US; a fixed offset prints as its ID, and zones outside the table as their tz database abbreviation
    (short) or localized offset (long)."""
    zone = dt.tzinfo
    key = zone_id(zone)
    if not isinstance(zone, ZoneInfo) and zone is not timezone.utc:
        return key
    names = _METAZONES.get(_ZONE_METAZONE.get(key, ""))
    if names is None:
        if generic and count == 1:
            return key
        return dt.tzname() or key if count < 4 else localized_offset(offset_seconds(dt), True)
    if generic:
        return names[1] if count == 4 else names[0]
    daylight = bool(dt.dst())
    return names[(5 if daylight else 3) if count == 4 else (4 if daylight else 2)]


def zone_for_name(name: str) -> tzinfo:
    """The zone a z/v name or a zone ID stands for (``PDT``, ``Pacific Time``, ``Europe/Paris``, ``UTC``)."""
    folded = name.casefold()
    for metazone, names in _METAZONES.items():
        if folded in (n.casefold() for n in names):
            key = next(k for k, m in _ZONE_METAZONE.items() if m == metazone)
            return timezone.utc if key == "UTC" else ZoneInfo(key)
    if folded in ("utc", "gmt", "z", "ut"):
        return timezone.utc
    if name[:1] in "+-":
        return timezone(timedelta(seconds=parse_offset(name)))
    if folded.startswith(("gmt", "utc")) and name[3:4] in ("+", "-"):
        return timezone(timedelta(seconds=parse_offset(name[3:])))
    return ZoneInfo(name)


ZONE_NAMES = sorted({n for names in _METAZONES.values() for n in names}, key=len, reverse=True)
