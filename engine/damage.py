"""Damage found in a node's data directory: what was found where, what it cost, what to do.

Every repository reports what it finds damaged as a :class:`Damage` into the node's
:class:`DamageLog`; the flow controller turns each into a bulletin, the status reports them and
``python -m engine.inspect`` prints them. Damage to what the node cannot run without (the
write-ahead log's snapshot and journals) makes start-up refuse with :class:`StorageCorruptionError`,
changing nothing on disk; damage to secondary data (a swap file, a content claim, a provenance
journal, block or index) is contained: the files are kept in the :class:`Quarantine` folder and
the rest flows.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from engine import fileops

__all__ = ["Damage", "DamageLog", "Quarantine", "StorageCorruptionError", "DAMAGED_QUEUE_ID", "QUARANTINE_DIRECTORY"]

log = logging.getLogger(__name__)

QUARANTINE_DIRECTORY = "quarantine"

DAMAGED_QUEUE_ID = "flowsite.damaged"
"""The reserved queue, kept in the write-ahead log like any other, where FlowFiles whose content
was found damaged are moved for the operator (``runtime.damaged_content: quarantine``)."""


@dataclass(frozen=True)
class Damage:
    """One damaged file, or one damaged place in a file.

    ``kind`` names the file kind (``journal``, ``snapshot``, ``swap file``, ``content claim``,
    ``provenance journal``, ``provenance block``, ``provenance index``); ``offset`` is the byte
    offset of the damage when known; ``found`` says what was found there; ``effect`` what it
    cost or what was done about it; ``remedy`` what the operator can do.
    """

    kind: str
    path: str
    offset: int | None
    found: str
    effect: str
    remedy: str = ""

    def __str__(self) -> str:
        where = f" at byte offset {self.offset}" if self.offset is not None else ""
        text = f"{self.kind} {self.path}{where}: {self.found}; {self.effect}"
        return f"{text}. {self.remedy}" if self.remedy else text


class DamageLog:
    """The damage a node has found since it started (thread-safe); listeners hear of each."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[Damage] = []
        self._listeners: list[Callable[[Damage], None]] = []

    def record(self, damage: Damage) -> Damage:
        """Note ``damage``, log it as an error and tell the listeners."""
        with self._lock:
            self._entries.append(damage)
            listeners = list(self._listeners)
        log.error("damaged data: %s", damage)
        for listener in listeners:
            try:
                listener(damage)
            except Exception:
                log.exception("a damage listener failed")
        return damage

    def entries(self) -> list[Damage]:
        """Everything recorded so far, oldest first."""
        with self._lock:
            return list(self._entries)

    def subscribe(self, listener: Callable[[Damage], None]) -> None:
        """Call ``listener`` with every damage recorded from now on (and each recorded before)."""
        with self._lock:
            self._listeners.append(listener)
            earlier = list(self._entries)
        for damage in earlier:
            listener(damage)


class StorageCorruptionError(Exception):
    """The node's primary data is damaged: start-up is refused and nothing on disk was changed."""

    def __init__(self, damages: list[Damage], remedy: str = "") -> None:
        self.damages = list(damages)
        lines = [str(damage) for damage in self.damages]
        message = "refusing to start: the write-ahead log is damaged\n  " + "\n  ".join(lines)
        if remedy:
            message += f"\n{remedy}"
        super().__init__(message)


class Quarantine:
    """The dated folder ``<data dir>/quarantine/<YYYY-MM-DD-HH-MM-SS>/`` where damaged files,
    and files given up to start a damaged node anyway, are kept for the operator.

    Files keep their path relative to the data directory. The folder is created on first use.
    """

    def __init__(self, data_dir: str | Path, clock: Callable[[], float] = time.time) -> None:
        self.data_dir = Path(data_dir)
        self._clock = clock
        self._folder: Path | None = None
        self._lock = threading.Lock()

    @property
    def folder(self) -> Path:
        """This run's quarantine folder (named when first asked for)."""
        with self._lock:
            if self._folder is None:
                stamp = time.strftime("%Y-%m-%d-%H-%M-%S", time.gmtime(self._clock()))
                folder = self.data_dir / QUARANTINE_DIRECTORY / stamp
                suffix = 1
                while folder.exists():
                    suffix += 1
                    folder = self.data_dir / QUARANTINE_DIRECTORY / f"{stamp}.{suffix}"
                self._folder = folder
            return self._folder

    def _target(self, path: Path) -> Path:
        path = Path(path)
        try:
            relative = path.resolve().relative_to(self.data_dir.resolve())
        except ValueError:
            relative = Path(path.name)
        target = self.folder / relative
        fileops.make_directory(target.parent)
        return target

    def copy(self, path: str | Path) -> Path:
        """Keep a copy of ``path`` (a file or a directory); returns where it went."""
        target = self._target(Path(path))
        if Path(path).is_dir():
            shutil.copytree(path, target, dirs_exist_ok=True)
        else:
            shutil.copy2(path, target)
        return target

    def move(self, path: str | Path) -> Path:
        """Move ``path`` into the quarantine (it leaves its place); returns where it went."""
        target = self._target(Path(path))
        try:
            fileops.rename(path, target)
        except OSError:
            self.copy(path)
            if Path(path).is_dir():
                shutil.rmtree(path)
            else:
                fileops.unlink(path, missing_ok=True)
        fileops.sync_directory(Path(path).parent)
        return target
