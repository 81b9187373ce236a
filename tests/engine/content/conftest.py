from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

import pytest

from engine.content.claims import ResourceClaimManager
from engine.content.config import ContentConfig
from engine.content.repository import ContentRepository

RepoFactory = Callable[..., ContentRepository]


class Usage(NamedTuple):
    total: int
    used: int
    free: int


class DiskUsage:
    """A disk of ``total`` bytes holding ``base`` bytes of other data plus the container's files."""

    def __init__(self, total: int, base: int = 0) -> None:
        self.total = total
        self.base = base
        self.calls = 0

    def __call__(self, path: Path) -> Usage:
        self.calls += 1
        used = self.base
        for directory, _, files in os.walk(path):
            for name in files:
                used += os.stat(os.path.join(directory, name)).st_size
        return Usage(self.total, used, self.total - used)


@pytest.fixture
def claims() -> ResourceClaimManager:
    return ResourceClaimManager()


@pytest.fixture
def make_repo(tmp_path: Path, claims: ResourceClaimManager) -> Iterator[RepoFactory]:
    """Build repositories over ``tmp_path/<container>`` (four sections unless told otherwise)."""
    opened: list[ContentRepository] = []

    def make(
        containers: tuple[str, ...] = ("c0",),
        manager: ResourceClaimManager | None = None,
        **settings: object,
    ) -> ContentRepository:
        disk_usage = settings.pop("disk_usage", shutil.disk_usage)
        track_written = bool(settings.pop("track_written", False))
        settings.setdefault("sections", 4)
        repo = ContentRepository(
            {name: tmp_path / name for name in containers},
            manager or claims,
            ContentConfig(**settings),  # type: ignore[arg-type]
            disk_usage=disk_usage,  # type: ignore[arg-type]
            track_written=track_written,
        )
        opened.append(repo)
        return repo

    yield make
    for repo in opened:
        repo.close()
