"""Parsing text with a compiled Java date pattern, as NiFi's lenient, case-insensitive DateTimeFormatter does:
one regex per pattern, then the parsed fields resolve to a date, a time and a zone."""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfoNotFoundError

from engine.expression import date_names as names
from engine.expression.dates import Field, Section

_NUMERIC = set("uyYMLQqwWdDFgecHhKkmsSAnN")
_ZONE_ID = r"[A-Za-z][A-Za-z0-9/_+-]*|[+-]\d{2}:?\d{2}"
_OFFSET = r"[+-]\d{1,2}(?::?\d{2}(?::?\d{2})?)?"


def _alternatives(options) -> str:
    return "|".join(re.escape(option) for option in sorted(set(options), key=len, reverse=True))


def _text_names(full: tuple[str, ...]) -> str:
    return _alternatives([*full, *(name[:3] for name in full)])


def _field_regex(field: Field, adjacent: bool) -> str:
    """The regex of one field; ``adjacent`` when a numeric field follows with no separator (fixed widths then)."""
    letter, count = field.letter, field.count
    if letter in "MLQqec" and count >= 3 or letter == "E":
        full = names.MONTHS if letter in "ML" else names.DAYS
        if letter in "Qq":
            return _alternatives([*names.QUARTERS, "Q1", "Q2", "Q3", "Q4", "1", "2", "3", "4"])
        return _text_names(full) + ("|[A-Z]" if count == 5 else "")
    if letter in "yuY":
        if count == 2:
            return r"\d{2}"
        return rf"\d{{{max(count, 4)}}}" if adjacent else r"[+-]?\d{1,9}"
    if letter == "S":
        return rf"\d{{{count}}}" if adjacent else rf"\d{{{count},9}}"
    if letter in "nANg":
        return rf"\d{{{count}}}" if adjacent else r"-?\d{1,19}"
    if letter in _NUMERIC:
        width = 3 if letter == "D" else 1 if letter in "WFec" else 2
        return rf"\d{{{max(count, width) if letter != 'D' else count}}}" if adjacent else rf"\d{{1,{width}}}"
    if letter == "G":
        return _alternatives([text for era in names.ERAS.values() for text in era])
    if letter == "a":
        return "AM|PM"
    if letter == "B":
        return _alternatives(names.DAY_PERIODS)
    if letter == "X":
        return "Z|" + _OFFSET
    if letter == "x" or letter == "Z" and count < 4:
        return _OFFSET
    if letter in "OZ":
        return rf"GMT(?:{_OFFSET})?|Z"
    if letter == "V":
        return _ZONE_ID + "|Z"
    return _alternatives(names.zone_names()) + rf"|(?:GMT|UTC)[+-]\d{{1,2}}(?::\d{{2}})?|{_ZONE_ID}"


class Parser:
    """The regex of a tokenized pattern and the resolution of what it captures."""

    def __init__(self, pattern: str, tokens: list) -> None:
        self.pattern = pattern
        self._fields: dict[str, Field] = {}
        self._regex = re.compile(self._build(tokens), re.IGNORECASE)
        # Plain numbers go straight to their key, skipping the general reader.
        self._plain = {group: "month" if field.letter in "ML" else {"k": "H", "K": "h"}.get(field.letter, field.letter)
                       for group, field in self._fields.items()
                       if field.letter in "dHmsDwWFgnANhKk" or field.letter in "ML" and field.count <= 2}

    def _build(self, tokens: list) -> str:
        parts = []
        for index, token in enumerate(tokens):
            if isinstance(token, Section):
                parts.append(f"(?:{self._build(token)})?")
            elif isinstance(token, str):
                parts.append(re.escape(token))
            else:
                following = tokens[index + 1] if index + 1 < len(tokens) else None
                adjacent = (token.letter in _NUMERIC and isinstance(following, Field)
                            and following.letter in _NUMERIC and (following.count < 3 or following.letter in "yuYS"))
                group = f"g{len(self._fields)}"
                self._fields[group] = token
                body = _field_regex(token, adjacent)
                parts.append(rf"\s*(?P<{group}>{body})" if token.pad else f"(?P<{group}>{body})")
        return "".join(parts)

    def parse(self, text: str, zone: tzinfo) -> tuple[datetime, int]:
        """The datetime and nanosecond of the second ``text`` stands for; raises ValueError when it does not match
        or names a date or time that does not exist."""
        match = self._regex.fullmatch(text)
        if match is None:
            raise ValueError(f"{text!r} does not match date pattern {self.pattern!r}")
        values: dict[str, object] = {}
        plain = self._plain
        for group, value in match.groupdict().items():
            if value is None:
                continue
            key = plain.get(group)
            if key is not None:
                values[key] = int(value)
                continue
            field = self._fields[group]
            try:
                self._read(field, value, values)
            except (ZoneInfoNotFoundError, KeyError):
                raise ValueError(f"unknown time zone {value!r} in {text!r}") from None
        day = self._date(values, text)
        hour, minute, second, nanos = self._time(values)
        zone = values.get("zone", zone)  # type: ignore[assignment]
        if "offset" in values:
            zone = timezone(timedelta(seconds=values["offset"]))  # type: ignore[arg-type]
        result = datetime(day.year, day.month, day.day, hour, minute, second, nanos // 1000, tzinfo=zone)
        return result, nanos

    @staticmethod
    def _read(field: Field, value: str, values: dict[str, object]) -> None:
        letter, count = field.letter, field.count
        if letter in "yuY":
            number = 2000 + int(value) if count == 2 else int(value)
            values["week_year" if letter == "Y" else "year"] = number
        elif letter in "MLEecQq" and not value.isdigit():
            folded = value.casefold()
            if letter in "Qq":
                values["quarter"] = int(re.sub(r"\D", "", folded)[0])
            elif letter in "ML":
                values["month"] = next(i for i, m in enumerate(names.MONTHS, 1) if m.casefold().startswith(folded))
            else:
                values["weekday"] = next(i for i, d in enumerate(names.DAYS) if d.casefold().startswith(folded))
        elif letter in "ec":
            values["weekday"] = (int(value) + 5) % 7  # Sunday 1 → Monday 0
        elif letter in "Qq":
            values["quarter"] = int(value)
        elif letter == "G":
            if value.upper() in ("BC", "B", "BEFORE CHRIST"):
                raise ValueError(f"years before Christ are not supported: {value!r}")
        elif letter == "a":
            values["pm"] = value.upper() == "PM"
        elif letter == "B":
            values["period"] = value.lower()
        elif letter in "XxZO":
            values["offset"] = names.parse_offset(value)
        elif letter in "Vzv":
            values["zone"] = names.zone_for_name(value)
        elif letter == "S":
            values["nanos"] = int(value.ljust(9, "0")[:9])
        else:
            values[{"k": "H", "K": "h"}.get(letter, letter)] = int(value)

    @staticmethod
    def _date(values: dict[str, object], text: str) -> date:
        get = values.get
        weekday = get("weekday")
        if "g" in values:
            day = date.fromordinal(values["g"] + 678576)  # type: ignore[operator]
        elif "week_year" in values:
            first = date(values["week_year"], 1, 1)  # type: ignore[arg-type]
            sunday = first - timedelta(days=(first.weekday() + 1) % 7)
            from_sunday = 0 if weekday is None else (weekday + 1) % 7  # type: ignore[operator]
            day = sunday + timedelta(days=7 * (get("w", 1) - 1) + from_sunday)  # type: ignore[operator]
        else:
            year = get("year", 1970)
            if "D" in values:
                last = 366 if calendar.isleap(year) else 365  # type: ignore[arg-type]
                if not 1 <= values["D"] <= last:  # type: ignore[operator]
                    raise ValueError(f"day of year {values['D']} is out of range in {text!r}")
                day = date(year, 1, 1) + timedelta(days=values["D"] - 1)  # type: ignore[arg-type,operator]
            elif "W" in values and weekday is not None and "d" not in values:
                first = date(year, get("month", 1), 1)  # type: ignore[arg-type]
                sunday = first - timedelta(days=(first.weekday() + 1) % 7)
                day = sunday + timedelta(days=7 * (values["W"] - 1) + (weekday + 1) % 7)  # type: ignore[operator]
            else:
                day = date(year, get("month", 1), get("d", 1))  # type: ignore[arg-type]
        if weekday is not None and day.weekday() != weekday:
            raise ValueError(f"{text!r}: {names.DAYS[weekday]} conflicts with {day.isoformat()}, a "
                             f"{names.DAYS[day.weekday()]}")
        if "quarter" in values and (day.month - 1) // 3 + 1 != values["quarter"]:
            raise ValueError(f"{text!r}: quarter {values['quarter']} conflicts with {day.isoformat()}")
        return day

    @staticmethod
    def _time(values: dict[str, object]) -> tuple[int, int, int, int]:
        get = values.get
        nanos = get("nanos", get("n", 0))
        if "N" in values or "A" in values:
            total = values["N"] if "N" in values else values["A"] * 1_000_000  # type: ignore[operator]
            seconds, nanos = divmod(total, 1_000_000_000)  # type: ignore[operator]
            hour, rest = divmod(seconds, 3600)
            return hour, rest // 60, rest % 60, nanos
        period = get("period")
        minute = get("m", 0)
        if period is not None and "H" not in values and "h" not in values:
            hour, minute = divmod(names.period_middle(period), 60)  # type: ignore[arg-type]
            return hour, minute, get("s", 0), nanos  # type: ignore[return-value]
        hour = get("H", 0) % 24  # type: ignore[operator]
        if "h" in values:
            hour = values["h"] % 12 + (12 if get("pm") else 0)  # type: ignore[operator]
            if period is not None and "pm" not in values and not names.period_includes(period, hour * 60 + minute):
                hour += 12  # the day period tells the half of the day (3 in the afternoon is 15:00)
        elif get("pm") and hour < 12:
            hour += 12
        return hour, minute, get("s", 0), nanos  # type: ignore[return-value]
