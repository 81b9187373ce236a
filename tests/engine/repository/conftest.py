from __future__ import annotations

import itertools

import pytest

from engine.content.claims import ResourceClaimManager
from engine.flowfile import ContentClaim, FlowFile, ResourceClaim
from engine.repository.flowfile_repository import FlowFileRepository

_uuids = itertools.count()


def make_flowfile(repo: FlowFileRepository, claim: ContentClaim | None = None, **attributes) -> FlowFile:
    ff_id = repo.next_id()
    return FlowFile(ff_id, f"uuid-{next(_uuids)}", {"filename": f"f{ff_id}", **attributes}, claim, 1000, 1000, ff_id)


def claim(name: str, offset: int = 0, length: int = 10) -> ContentClaim:
    return ContentClaim(ResourceClaim("default", 1, name), offset, length)


class Released(list):
    """Collects the claims the repository hands over for archiving or deletion."""

    def __call__(self, claims):
        self.extend(claims)


@pytest.fixture
def released() -> Released:
    return Released()


@pytest.fixture
def open_repo(tmp_path, released):
    opened = []

    def _open(**options) -> FlowFileRepository:
        repo = FlowFileRepository(tmp_path / "ffr", ResourceClaimManager(), release_claims=released, **options)
        repo.recovered = repo.recover()
        opened.append(repo)
        return repo

    return _open
