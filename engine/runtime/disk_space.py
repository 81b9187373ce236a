"""A full disk is a pause, not a failure: watching the free space of a node's repositories.

Every ``check_interval`` (and at once when a file operation of the storage meets ENOSPC), the
monitor reads the free space of the file system of each repository directory: the FlowFile
repository, every content container, the provenance repository. When one has less than
``min_free``, the node pauses: components are not triggered (their tasks end with
``Outcome.DISK_FULL``, running tasks finish), a WARN bulletin names the repository, and the
content repository's archive cleanup runs at once. When every repository has ``min_free`` plus
``resume_margin`` again, processing resumes by itself, with an INFO bulletin.

:class:`DiskSpaceState` decides (no I/O, so tests drive it with made-up readings);
:class:`DiskSpaceMonitor` reads the disk, runs the thread and posts the bulletins.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from engine import fileops
from engine.runtime.bulletins import BulletinBoard
from engine.settings import as_data_size, as_duration, as_percentage, settings_from_mapping
from engine.units import format_data_size

if TYPE_CHECKING:
    from engine.storage import NodeStorage

__all__ = [
    "Change", "DiskSpaceConfig", "DiskSpaceMonitor", "DiskSpaceState", "FreeSpace", "Reading", "is_disk_full",
    "statvfs_probe",
]

log = logging.getLogger(__name__)

# After a check woken by an ENOSPC, the next one waits at least this long: a burst of failing
# writers must not turn the monitor into a busy loop.
_MIN_SPACING = 0.05


@dataclass(frozen=True)
class FreeSpace:
    """An amount of free space: a number of bytes, or a percentage of the file system's size."""

    bytes: int = 0
    percent: float | None = None

    @classmethod
    def parse(cls, value: Any) -> FreeSpace:
        """``'500 MB'``, ``524288000`` or ``'5%'``."""
        if isinstance(value, str) and value.strip().endswith("%"):
            percent = as_percentage(value)
            if not 0 <= percent < 100:
                raise ValueError(f"a percentage of the disk must be in [0, 100), not {value!r}")
            return cls(percent=percent)
        return cls(bytes=as_data_size(value))

    def of(self, total: int) -> int:
        """Bytes, on a file system of ``total`` bytes."""
        return int(total * self.percent / 100) if self.percent is not None else self.bytes

    def __str__(self) -> str:
        return f"{self.percent:g}%" if self.percent is not None else format_data_size(self.bytes)


@dataclass(frozen=True)
class DiskSpaceConfig:
    """The ``disk_space`` section of a node's settings.

    ``min_free``: below this much free space on the file system of any repository the node
    pauses (``0`` never pauses); ``check_interval``: seconds between checks; ``resume_margin``:
    the node resumes once every repository has ``min_free`` plus this percentage of it again.
    """

    min_free: FreeSpace = FreeSpace(100 << 20)
    check_interval: float = 1.0
    resume_margin: float = 10.0

    def __post_init__(self) -> None:
        if self.check_interval <= 0:
            raise ValueError(f"check_interval must be positive, not {self.check_interval}")
        if self.resume_margin < 0:
            raise ValueError(f"resume_margin may not be negative, not {self.resume_margin}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> DiskSpaceConfig:
        """Build from a mapping such as ``{"min-free": "5%", "check-interval": "1 sec"}``."""
        parsers = {"min_free": FreeSpace.parse, "check_interval": as_duration, "resume_margin": as_percentage}
        return settings_from_mapping(cls, values, parsers, "disk_space")

    def levels(self, total: int) -> tuple[int, int]:
        """The free bytes below which a file system of ``total`` bytes pauses the node, and
        those from which it lets it resume."""
        threshold = self.min_free.of(total)
        return threshold, threshold + int(threshold * self.resume_margin / 100)


@dataclass(frozen=True)
class Reading:
    """The free space of one repository's file system, as read at one moment."""

    repository: str
    directory: Path
    free: int
    total: int


@dataclass(frozen=True)
class Change:
    """A repository went short of space (``low``) or has enough again."""

    low: bool
    reading: Reading
    threshold: int
    resume_at: int

    def message(self, min_free: FreeSpace) -> str:
        """What a bulletin says about it."""
        reading = self.reading
        limit = str(min_free) if min_free.percent is None else f"{min_free} ({format_data_size(self.threshold)})"
        if self.low:
            return (f"{reading.repository} is short of disk space: {reading.directory} has "
                    f"{format_data_size(reading.free)} ({reading.free} bytes) free, below the minimum of {limit}; "
                    f"processing is paused until {format_data_size(self.resume_at)} are free")
        return (f"{reading.repository} has disk space again: {reading.directory} has "
                f"{format_data_size(reading.free)} free (minimum {limit})")


class DiskSpaceState:
    """Which repositories are short of space, from the readings it is given (no I/O)."""

    def __init__(self, config: DiskSpaceConfig) -> None:
        self.config = config
        self._latest: dict[str, Reading] = {}
        self._low: set[str] = set()

    @property
    def paused(self) -> bool:
        """True while some repository is short of space."""
        return bool(self._low)

    def observe(self, reading: Reading) -> Change | None:
        """Take a reading; return the change it makes, if any."""
        threshold, resume_at = self.config.levels(reading.total)
        self._latest[reading.repository] = reading
        was_low = reading.repository in self._low
        if not was_low and reading.free < threshold:
            self._low.add(reading.repository)
            return Change(True, reading, threshold, resume_at)
        if was_low and reading.free >= resume_at:
            self._low.discard(reading.repository)
            return Change(False, reading, threshold, resume_at)
        return None

    def short(self) -> list[Reading]:
        """The latest reading of each repository short of space."""
        return [self._latest[name] for name in sorted(self._low)]

    def as_dict(self) -> dict[str, Any]:
        """The state as plain data, for the node's status."""
        repositories = []
        for reading in self._latest.values():
            threshold, resume_at = self.config.levels(reading.total)
            repositories.append({
                "repository": reading.repository, "directory": str(reading.directory),
                "free_bytes": reading.free, "total_bytes": reading.total, "min_free_bytes": threshold,
                "resume_at_bytes": resume_at, "low": reading.repository in self._low,
            })
        return {"paused": self.paused, "min_free": str(self.config.min_free), "repositories": repositories}


def statvfs_probe(directory: Path) -> tuple[int, int]:
    """Free bytes (for an unprivileged process) and total bytes of the file system of ``directory``."""
    result = os.statvfs(directory)
    return result.f_bavail * result.f_frsize, result.f_blocks * result.f_frsize


def is_disk_full(error: BaseException | None) -> bool:
    """True when ``error``, or an error it was raised from or during, says the disk is full."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, OSError) and error.errno in fileops.DISK_FULL_ERRNOS:
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


@dataclass
class _Watched:
    repository: str
    directory: Path
    unreadable: bool = False


class DiskSpaceMonitor:
    """Checks the repositories' free space on a thread of its own and pauses the node when one
    is short (see the module docstring).

    ``directories`` maps a repository's name to its directory; ``probe`` reads the free and
    total bytes of a directory's file system (tests replace it); ``on_low`` runs (on the
    monitor's thread) whenever a repository becomes short of space.
    """

    def __init__(self, directories: Mapping[str, Path], config: DiskSpaceConfig, bulletins: BulletinBoard, *,
                 probe: Callable[[Path], tuple[int, int]] = statvfs_probe,
                 on_low: Callable[[], None] | None = None) -> None:
        self.config = config
        self.state = DiskSpaceState(config)
        self._watched = [_Watched(name, Path(path)) for name, path in directories.items()]
        self._bulletins = bulletins
        self.probe = probe
        self._on_low = on_low
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def for_storage(cls, storage: NodeStorage, config: DiskSpaceConfig, bulletins: BulletinBoard) -> DiskSpaceMonitor:
        """A monitor of a node's repositories that runs the archive cleanup when one is short."""
        directories = {"FlowFile repository": storage.flowfiles.directory}
        for name, path in storage.content.containers.items():
            directories[f"content repository (container {name})"] = path
        directories["provenance repository"] = storage.provenance.directory
        return cls(directories, config, bulletins, on_low=lambda: _clean_archive(storage))

    @property
    def paused(self) -> bool:
        """True while the node is paused for lack of disk space."""
        return self.state.paused

    def check(self) -> list[Change]:
        """Read every repository's free space once; post bulletins for what changed."""
        changes = []
        with self._lock:
            for watched in self._watched:
                try:
                    free, total = self.probe(watched.directory)
                except OSError as error:
                    if not watched.unreadable:
                        log.warning("cannot read the free space of %s (%s): %s", watched.repository,
                                    watched.directory, error)
                    watched.unreadable = True
                    continue
                watched.unreadable = False
                change = self.state.observe(Reading(watched.repository, watched.directory, free, total))
                if change is not None:
                    changes.append(change)
            still_short = [reading.repository for reading in self.state.short()]
        for change in changes:
            self._announce(change, still_short)
        if self._on_low is not None and any(change.low for change in changes):
            self._on_low()
        return changes

    def _announce(self, change: Change, still_short: list[str]) -> None:
        message = change.message(self.config.min_free)
        if not change.low:
            message += (f"; processing stays paused: {', '.join(still_short)} still short of space" if still_short
                        else "; processing resumes")
        log.log(logging.WARNING if change.low else logging.INFO, "%s", message)
        reading = change.reading
        self._bulletins.post("WARN" if change.low else "INFO", f"disk-space:{reading.directory}", reading.repository,
                             "Storage", "", message)

    def describe(self) -> str | None:
        """A few words for the status line while paused, else None."""
        with self._lock:
            short = self.state.short()
        if not short:
            return None
        return "PAUSED, disk space low: " + ", ".join(
            f"{r.repository} {format_data_size(r.free)} free (minimum {self.config.min_free})" for r in short)

    def status(self) -> dict[str, Any]:
        """Whether the node is paused and the latest free space of each repository."""
        with self._lock:
            return self.state.as_dict()

    def wake(self, path: str | None = None) -> None:
        """Check at once (a writer met a full disk, at ``path`` when known)."""
        self._wake.set()

    # -- thread ---------------------------------------------------------------------------

    def start(self) -> None:
        """Check now, then keep checking on a thread until ``stop``."""
        if self._thread is not None:
            return
        self.check()
        self._stop.clear()
        fileops.add_full_listener(self.wake)
        self._thread = threading.Thread(target=self._run, name="disk-space-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread."""
        fileops.remove_full_listener(self.wake)
        self._stop.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.config.check_interval)
            if self._stop.wait(_MIN_SPACING):
                return
            self._wake.clear()
            try:
                self.check()
            except Exception:
                log.exception("checking the repositories' free space failed")


def _clean_archive(storage: NodeStorage) -> None:
    result = storage.content.run_cleanup()
    if result.bytes_freed:
        log.info("archive cleanup for lack of disk space: %d archived claim(s) deleted, %s freed",
                 result.expired + result.evicted, format_data_size(result.bytes_freed))
