"""What a content repository holds on disk: its live resource-claim files and its figures."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping

from engine.content.archive import ARCHIVE_DIRECTORY
from engine.flowfile import ResourceClaim

__all__ = ["ContainerStats", "ContentStats", "content_stats", "live_claims"]

_IDENTIFIER = re.compile(r"^\d+-\d+$")


@dataclass(frozen=True)
class ContainerStats:
    """Live and archived resource-claim files of one container."""

    live_count: int = 0
    live_bytes: int = 0
    archived_count: int = 0
    archived_bytes: int = 0


@dataclass(frozen=True)
class ContentStats:
    """Per-container file counts and sizes of the repository."""

    containers: dict[str, ContainerStats] = field(default_factory=dict)

    @property
    def total(self) -> ContainerStats:
        """The sums over all containers."""
        values = self.containers.values()
        return ContainerStats(
            sum(s.live_count for s in values),
            sum(s.live_bytes for s in values),
            sum(s.archived_count for s in values),
            sum(s.archived_bytes for s in values),
        )


def live_claims(roots: Mapping[str, Path], sections: int) -> Iterator[ResourceClaim]:
    """Every live resource-claim file of the containers ``roots`` (name to directory)."""
    for name, root in roots.items():
        for section in range(sections):
            for entry in _scan_files(root / str(section)):
                if _IDENTIFIER.match(entry.name):
                    yield ResourceClaim(name, section, entry.name)


def content_stats(roots: Mapping[str, Path], sections: int) -> ContentStats:
    """Counts and sizes of the live and archived files of each container."""
    result: dict[str, ContainerStats] = {}
    for name, root in roots.items():
        live = archived = live_bytes = archived_bytes = 0
        for section in range(sections):
            for entry in _scan_files(root / str(section)):
                if _IDENTIFIER.match(entry.name):
                    live += 1
                    live_bytes += _size(entry)
            for entry in _scan_files(root / str(section) / ARCHIVE_DIRECTORY):
                archived += 1
                archived_bytes += _size(entry)
        result[name] = ContainerStats(live, live_bytes, archived, archived_bytes)
    return ContentStats(result)


def _scan_files(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as listing:
            return [entry for entry in listing if entry.is_file(follow_symlinks=False)]
    except FileNotFoundError:
        return []


def _size(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat(follow_symlinks=False).st_size
    except FileNotFoundError:
        return 0
