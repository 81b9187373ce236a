"""CRON schedules as NiFi writes them: six fields, seconds first, optional year
(``0 0/5 * * * ?`` fires every five minutes). Day-of-month and day-of-week must both match
when both are given; ``?`` leaves one of them open."""

from __future__ import annotations

from datetime import datetime

from croniter import croniter
from croniter.croniter import CroniterError

__all__ = ["CronSchedule"]


class CronSchedule:
    """The fire times of a CRON expression, in the node's local time zone."""

    def __init__(self, expression: str) -> None:
        fields = expression.split()
        if len(fields) not in (6, 7):
            raise ValueError(
                f"CRON expression {expression!r} has {len(fields)} field(s); expected 6 (seconds minutes hours "
                "day-of-month month day-of-week) or 7 (with a year)"
            )
        try:
            croniter(expression, datetime.now().astimezone(), second_at_beginning=True, day_or=False)
        except (CroniterError, ValueError, KeyError) as error:
            raise ValueError(f"invalid CRON expression {expression!r}: {error}") from None
        self.expression = expression

    def next_after(self, wall_time: float) -> float:
        """The first fire time strictly after ``wall_time`` (both seconds since the epoch)."""
        start = datetime.fromtimestamp(wall_time).astimezone()
        iterator = croniter(self.expression, start, second_at_beginning=True, day_or=False)
        return float(iterator.get_next(float))

    def __repr__(self) -> str:
        return f"CronSchedule({self.expression!r})"
