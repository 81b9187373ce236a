"""Corruption campaign over claim files: at every claim boundary and at 20 seeded random offsets,
flip a byte or cut the file there, and delete whole files. Every content whose bytes are intact
reads back exactly; every damaged one is detected (never returned with wrong bytes) and the
error names the file and the claim's offset."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from engine.content.claims import ResourceClaimManager
from engine.content.config import ContentConfig
from engine.content.reader import ContentNotFoundError
from engine.content.repository import ContentRepository
from engine.flowfile import ContentClaim

SEED = 20261124
FILES = 3


def _write_contents(root: Path) -> tuple[dict[ContentClaim, bytes], dict[Path, bytes]]:
    """Three claim files of contents of assorted sizes (an empty one among them)."""
    rng = random.Random(SEED)
    repo = ContentRepository({"c": root}, ResourceClaimManager(), ContentConfig(sections=2, max_appendable_size=3000))
    contents: dict[ContentClaim, bytes] = {}
    while len({c.resource_claim for c in contents}) < FILES or len(contents) < 3 * FILES:
        data = rng.randbytes(rng.choice([0, 1, 7, 100, 700, 1500]))
        contents[repo.write_bytes(data)] = data
    repo.close()
    by_file = {c.resource_claim for c in contents}
    assert len(by_file) >= FILES
    files = {repo.path(rc): repo.path(rc).read_bytes() for rc in by_file}
    return contents, files


def _read(repo: ContentRepository, claim: ContentClaim, streaming: bool) -> bytes:
    if not streaming:
        return repo.read_bytes(claim)
    with repo.open_reader(claim) as reader:
        return b"".join(iter(lambda: reader.read(333), b""))


def _damaged(claim: ContentClaim, path: Path, files_path: Path, kind: str, offset: int) -> bool:
    if path != files_path:
        return False
    if kind == "delete":
        return True
    end = claim.offset + claim.length
    if kind == "truncate":
        return end > offset
    return claim.offset <= offset < end


def _scenarios(contents: dict[ContentClaim, bytes], files: dict[Path, bytes]) -> list[tuple[str, Path, int]]:
    rng = random.Random(SEED + 1)
    scenarios = []
    for path, data in files.items():
        scenarios.append(("delete", path, 0))
        boundaries = set()
        for claim in contents:
            if path.name == claim.resource_claim.identifier:
                boundaries |= {claim.offset, claim.offset + claim.length - 1, claim.offset + claim.length}
        boundaries = {b for b in boundaries if 0 <= b < len(data)}
        for offset in sorted(boundaries):
            scenarios += [("flip", path, offset), ("truncate", path, offset)]
    all_files = sorted(files)
    for _ in range(20):
        path = rng.choice(all_files)
        offset = rng.randrange(len(files[path]))
        scenarios += [("flip", path, offset), ("truncate", path, offset)]
    return scenarios


def test_every_damaged_content_is_detected_and_every_intact_one_reads_back(tmp_path):
    root = tmp_path / "c"
    contents, files = _write_contents(root)
    scenarios = _scenarios(contents, files)
    assert len(scenarios) > 60
    for kind, damaged_path, offset in scenarios:
        for path, data in files.items():
            path.write_bytes(data)
        if kind == "delete":
            damaged_path.unlink()
        elif kind == "truncate":
            os.truncate(damaged_path, offset)
        else:
            data = bytearray(files[damaged_path])
            data[offset] ^= 0xFF
            damaged_path.write_bytes(data)
        # A fresh repository per scenario: damage is met as a restarted node meets it.
        repo = ContentRepository({"c": root}, ResourceClaimManager(), ContentConfig(sections=2))
        try:
            for claim, expected in contents.items():
                path = repo.path(claim.resource_claim)
                for streaming in (False, True):
                    if claim.length == 0 and kind == "truncate":
                        # No bytes to lose: b"" is right, and so is noticing the file is short.
                        try:
                            assert _read(repo, claim, streaming) == b""
                        except ContentNotFoundError:
                            pass
                        continue
                    if not _damaged(claim, path, damaged_path, kind, offset):
                        assert _read(repo, claim, streaming) == expected, (kind, offset, claim)
                        continue
                    with pytest.raises(ContentNotFoundError) as caught:
                        got = _read(repo, claim, streaming)
                        pytest.fail(f"{kind} at {offset} not detected for {claim}: got {got == expected}")
                    error = caught.value
                    assert error.path is not None and Path(error.path).name == path.name
                    assert error.claim == claim and str(claim.offset) in str(error)
                    assert str(path) in str(error)
        finally:
            repo.close()
