"""Helpers shared by the provenance repository tests."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from engine.flowfile import ContentClaim, ResourceClaim
from engine.provenance import ProvenanceConfig, ProvenanceEvent, ProvenanceEventType, ProvenanceRepository

T0 = 1_700_000_000_000
_counter = itertools.count()


def make_event(
    event_type: ProvenanceEventType = ProvenanceEventType.ATTRIBUTES_MODIFIED,
    *,
    uuid: str | None = None,
    time: int = T0,
    component: str = "proc-1",
    filename: str | None = None,
    **fields: object,
) -> ProvenanceEvent:
    """An event with sensible defaults; ``filename`` goes into the previous attributes."""
    n = next(_counter)
    uuid = uuid or f"ff-{n}"
    attributes = {"uuid": uuid, "path": "./"}
    if filename is not None:
        attributes["filename"] = filename
    fields.setdefault("previous_attributes", attributes)
    return ProvenanceEvent(event_type, time, uuid, component, "TestProcessor", **fields)


def claim(identifier: str = "1-1", offset: int = 0, length: int = 10) -> ContentClaim:
    return ContentClaim(ResourceClaim("default", 1, identifier), offset, length)


@pytest.fixture
def config() -> ProvenanceConfig:
    return ProvenanceConfig(journal_count=4, max_storage_time=10 * 365 * 86400.0)


@pytest.fixture
def repo(tmp_path: Path, config: ProvenanceConfig):
    with ProvenanceRepository(tmp_path / "prov", config) as repository:
        yield repository
