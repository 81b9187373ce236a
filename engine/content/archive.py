"""The archive of one content container: moving released claims in, and ageing them off.

Archived files live at ``<container>/<section>/archive/<identifier>``; a file's mtime is the
time it was archived. To find the oldest files without listing the whole archive on every
run, each container keeps the ``capacity`` oldest entries in memory, oldest first, and lists
the archive directories again only when that list runs out.
"""

from __future__ import annotations

import heapq
import logging
import os
import shutil
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple, Protocol

from engine import fileops

__all__ = [
    "ARCHIVE_DIRECTORY",
    "OLDEST_ENTRIES",
    "CleanupResult",
    "ContainerArchive",
    "DiskUsage",
    "DiskUsageProbe",
]

log = logging.getLogger(__name__)

ARCHIVE_DIRECTORY = "archive"
OLDEST_ENTRIES = 10_000


class DiskUsage(Protocol):
    """What the disk-usage probe reports (``shutil.disk_usage``'s result has these)."""

    @property
    def total(self) -> int: ...

    @property
    def used(self) -> int: ...


DiskUsageProbe = Callable[[Path], DiskUsage]


@dataclass(frozen=True)
class CleanupResult:
    """What one archive cleanup run removed."""

    expired: int = 0
    evicted: int = 0
    bytes_freed: int = 0

    def __add__(self, other: CleanupResult) -> CleanupResult:
        return CleanupResult(
            self.expired + other.expired,
            self.evicted + other.evicted,
            self.bytes_freed + other.bytes_freed,
        )


class _Entry(NamedTuple):
    archived_at: float
    section: int
    identifier: str
    size: int


class ContainerArchive:
    """Archives released claims of one container and deletes them by age and disk usage."""

    def __init__(
        self,
        root: Path,
        sections: int,
        disk_usage: DiskUsageProbe = shutil.disk_usage,
        capacity: int = OLDEST_ENTRIES,
        on_delete: Callable[[int, str], None] | None = None,
    ) -> None:
        self._root = root
        # Told (section, identifier) of each archived file deleted: a reader must not keep it open.
        self._on_delete = on_delete
        self._sections = sections
        self._disk_usage = disk_usage
        self._capacity = capacity
        self._lock = threading.Lock()
        self._oldest: deque[_Entry] = deque()
        # True when ``_oldest`` holds every archived file, so running out means the archive is empty.
        self._complete = False
        self._scans = 0

    @property
    def scan_count(self) -> int:
        """How many times the archive directories were listed to refill the oldest entries."""
        return self._scans

    def path(self, section: int, identifier: str) -> Path:
        """The archive path of a resource claim."""
        return self._root / str(section) / ARCHIVE_DIRECTORY / identifier

    def archive(self, live: Path, section: int, identifier: str) -> bool:
        """Move ``live`` into the archive, stamping it with the archive time.

        Deletes the file instead when it cannot be moved. Returns False when ``live`` is gone.
        """
        target = self.path(section, identifier)
        with self._lock:
            try:
                size = live.stat().st_size
                try:
                    fileops.rename(live, target)
                except FileNotFoundError:
                    fileops.make_directory(target.parent)
                    fileops.rename(live, target)
            except FileNotFoundError:
                return False
            except OSError as error:
                log.warning("could not archive %s (%s); deleting it", live, error)
                _unlink(live)
                return True
            now = time.time()
            os.utime(target, (now, now))
            if self._complete:
                self._oldest.append(_Entry(now, section, identifier, size))
                if len(self._oldest) > self._capacity:
                    self._oldest.pop()
                    self._complete = False
            return True

    def restore(self, live: Path, section: int, identifier: str) -> bool:
        """Move an archived file back to its live path ``live`` (it is referenced again); False
        when the archive no longer has it. The live directory is synced: the move survives a
        crash once this returns."""
        source = self.path(section, identifier)
        with self._lock:
            try:
                fileops.rename(source, live)
            except FileNotFoundError:
                return False
            fileops.sync_directory(live.parent)
            for entry in self._oldest:
                if entry.section == section and entry.identifier == identifier:
                    self._oldest.remove(entry)
                    break
            return True

    def cleanup(self, now: float, max_retention: float | None, max_usage_percentage: float) -> CleanupResult:
        """Delete archived files older than ``max_retention``, then the oldest ones until usage fits."""
        expired = evicted = freed = 0
        with self._lock:
            if max_retention is not None:
                cutoff = now - max_retention
                while (entry := self._peek_oldest()) is not None and entry.archived_at < cutoff:
                    self._oldest.popleft()
                    if self._delete(entry):
                        expired += 1
                        freed += entry.size
            while self._usage_percentage() > max_usage_percentage:
                entry = self._peek_oldest()
                if entry is None:
                    log.warning(
                        "content container %s is above %.1f%% disk usage with an empty archive",
                        self._root,
                        max_usage_percentage,
                    )
                    break
                self._oldest.popleft()
                if self._delete(entry):
                    evicted += 1
                    freed += entry.size
        return CleanupResult(expired, evicted, freed)

    def _peek_oldest(self) -> _Entry | None:
        if not self._oldest and not self._complete:
            self._rescan()
        return self._oldest[0] if self._oldest else None

    def _rescan(self) -> None:
        self._scans += 1
        entries: list[_Entry] = []
        count = 0
        for section in range(self._sections):
            try:
                with os.scandir(self._root / str(section) / ARCHIVE_DIRECTORY) as listing:
                    for item in listing:
                        try:
                            stat = item.stat(follow_symlinks=False)
                        except FileNotFoundError:
                            continue
                        entries.append(_Entry(stat.st_mtime, section, item.name, stat.st_size))
                        count += 1
                        if len(entries) > 2 * self._capacity:
                            entries = heapq.nsmallest(self._capacity, entries)
            except FileNotFoundError:
                continue
        self._oldest = deque(heapq.nsmallest(self._capacity, entries))
        self._complete = count <= self._capacity

    def _delete(self, entry: _Entry) -> bool:
        deleted = _unlink(self.path(entry.section, entry.identifier))
        if self._on_delete is not None:
            self._on_delete(entry.section, entry.identifier)
        return deleted

    def _usage_percentage(self) -> float:
        usage = self._disk_usage(self._root)
        return 100.0 * usage.used / usage.total if usage.total else 0.0


def _unlink(path: Path) -> bool:
    return fileops.unlink(path, missing_ok=True)
