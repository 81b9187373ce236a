"""Bulletins: the warnings and errors of components, kept for five minutes for status pages.

A component logs through a ``ComponentLogger``; messages at or above its bulletin level
(``WARN`` by default) also become bulletins.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Bulletin", "BulletinBoard", "ComponentLogger", "BULLETIN_LEVELS"]

BULLETIN_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
                   "ERROR": logging.ERROR, "NONE": logging.CRITICAL + 10}
_RETENTION_SECONDS = 300
_PER_COMPONENT = 5

log = logging.getLogger("flowsite.components")


@dataclass(frozen=True)
class Bulletin:
    """One warning or error of a component."""

    id: int
    timestamp: float
    level: str
    source_id: str
    source_name: str
    source_type: str
    group_id: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        """The bulletin as plain data."""
        return asdict(self)


class BulletinBoard:
    """The recent bulletins of a node: the last five per component, none older than five minutes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_source: dict[str, deque[Bulletin]] = {}
        self._ids = itertools.count(1)

    def post(self, level: str, source_id: str, source_name: str, source_type: str, group_id: str,
             message: str) -> Bulletin:
        """Record a bulletin."""
        bulletin = Bulletin(next(self._ids), time.time(), level, source_id, source_name, source_type, group_id, message)
        with self._lock:
            self._by_source.setdefault(source_id, deque(maxlen=_PER_COMPONENT)).append(bulletin)
        return bulletin

    def recent(self, source_id: str | None = None) -> list[Bulletin]:
        """Bulletins of the last five minutes, oldest first (of one component, or of all)."""
        horizon = time.time() - _RETENTION_SECONDS
        with self._lock:
            queues = [self._by_source.get(source_id, ())] if source_id else list(self._by_source.values())
            found = [b for queue in queues for b in queue if b.timestamp >= horizon]
        return sorted(found, key=lambda b: b.id)

    def clear(self, source_id: str) -> None:
        """Forget a component's bulletins (it was removed)."""
        with self._lock:
            self._by_source.pop(source_id, None)


class ComponentLogger(logging.LoggerAdapter):
    """A logger that prefixes messages with the component and posts bulletins at its level."""

    def __init__(self, board: BulletinBoard, source_id: str, source_name: str, source_type: str, group_id: str,
                 bulletin_level: str = "WARN") -> None:
        super().__init__(log, {})
        self.board = board
        self.source = (source_id, source_name, source_type, group_id)
        self.bulletin_level = BULLETIN_LEVELS.get(bulletin_level, logging.WARNING)

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        source_id, source_name, source_type, _ = self.source
        return f"{source_type}[name={source_name}, id={source_id}] {msg}", kwargs

    def log(self, level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
        if level >= self.bulletin_level:
            text = str(msg) % args if args else str(msg)
            self.board.post(logging.getLevelName(level).replace("WARNING", "WARN"), *self.source, text)
        super().log(level, msg, *args, **kwargs)
