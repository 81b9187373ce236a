"""A node-like layout of directories for confinement tests: a files root with two tenants'
roots, a protected platform directory holding a secret, and files outside everything."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.confinement import ConfinementSettings


@dataclass
class Layout:
    files_root: Path
    acme: Path
    other: Path
    platform: Path
    secret: Path
    outside: Path

    def settings(self, **changes) -> ConfinementSettings:
        values = {"files_root": str(self.files_root), "protected_paths": (str(self.platform),), **changes}
        return ConfinementSettings(**values)


@pytest.fixture
def layout(tmp_path) -> Layout:
    files_root = tmp_path / "files"
    acme, other = files_root / "acme", files_root / "other"
    platform = tmp_path / "platform" / ".local"
    outside = tmp_path / "outside"
    for directory in (acme, other, platform, outside):
        directory.mkdir(parents=True)
    (other / "theirs.txt").write_text("other tenant's data")
    secret = platform / "secrets.env"
    secret.write_text("SECRET_KEY=do-not-leak")
    (outside / "loose.txt").write_text("not a tenant's")
    return Layout(files_root, acme, other, platform, secret, outside)
