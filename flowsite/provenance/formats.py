"""NiFi's text forms of times and counts in answers, and the times a request may give.

Answers carry NiFi's forms (always UTC): timestamps ``MM/dd/yyyy HH:mm:ss.SSS UTC`` (event times,
submission times), date-times ``MM/dd/yyyy HH:mm:ss UTC`` (a query's dates, the oldest event),
times of day ``HH:mm:ss UTC`` (when results were generated), and ISO 8601 instants beside them
(``…Timestamp`` fields). Requests give times in ISO 8601 or NiFi's ``MM/dd/yyyy HH:mm:ss z``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["count", "date_time", "instant", "millis", "parse_time", "time_of_day", "timestamp"]

_NIFI_INPUT = ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M:%S.%f", "%m/%d/%Y")


def _moment(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, timezone.utc)


def timestamp(ms: int | None) -> str | None:
    """NiFi's timestamp text of ``ms`` (milliseconds since the epoch)."""
    if ms is None:
        return None
    moment = _moment(ms)
    return f"{moment:%m/%d/%Y %H:%M:%S}.{moment.microsecond // 1000:03d} UTC"


def date_time(ms: int | None) -> str | None:
    """NiFi's date-time text of ``ms``."""
    return None if ms is None else f"{_moment(ms):%m/%d/%Y %H:%M:%S} UTC"


def time_of_day(ms: int | None) -> str | None:
    """NiFi's time-of-day text of ``ms``."""
    return None if ms is None else f"{_moment(ms):%H:%M:%S} UTC"


def instant(ms: int | None) -> str | None:
    """ISO 8601 of ``ms`` with milliseconds, UTC."""
    return None if ms is None else _moment(ms).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def millis(iso: str) -> int:
    """Milliseconds since the epoch of an ISO 8601 text (as requests record times)."""
    return int(datetime.fromisoformat(iso).timestamp() * 1000)


def count(number: int) -> str:
    """NiFi's text of a count (``1,000``)."""
    return f"{number:,}"


def parse_time(text: str) -> int:
    """Milliseconds since the epoch of ``text``: ISO 8601 (no zone: UTC) or NiFi's
    ``MM/dd/yyyy HH:mm:ss z`` (z a zone name such as UTC or Europe/Paris; none: UTC). Raises
    ValueError saying what is expected."""
    value = text.strip()
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        moment = _nifi_time(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def _nifi_time(value: str) -> datetime:
    problem = ValueError(f"{value!r} is not a time: give ISO 8601 (2024-05-01T12:00:00Z) or MM/dd/yyyy HH:mm:ss z "
                         "(05/01/2024 12:00:00 UTC)")
    text, _, zone_name = value.rpartition(" ") if value.count(" ") >= 2 else (value, "", "")
    zone = timezone.utc
    if zone_name and zone_name.upper() not in ("UTC", "GMT", "Z"):
        try:
            zone = ZoneInfo(zone_name)
        except (ZoneInfoNotFoundError, ValueError):
            raise problem from None
    for pattern in _NIFI_INPUT:
        try:
            return datetime.strptime(text, pattern).replace(tzinfo=zone)
        except ValueError:
            continue
    raise problem
