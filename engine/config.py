"""A node's storage settings: one section per repository, plus where content lives."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from engine.content.config import ContentConfig
from engine.provenance.config import ProvenanceConfig
from engine.repository.config import FlowFileRepositoryConfig

__all__ = ["StorageConfig"]

_SECTIONS = ("flowfile_repository", "content_repository", "provenance_repository", "content_containers")


@dataclass(frozen=True)
class StorageConfig:
    """Settings of the three repositories of a node.

    ``content_containers`` maps container names to directories (relative paths are taken from
    the data directory); without any, content lives in ``<data dir>/content_repository``.
    """

    flowfile_repository: FlowFileRepositoryConfig = field(default_factory=FlowFileRepositoryConfig)
    content_repository: ContentConfig = field(default_factory=ContentConfig)
    provenance_repository: ProvenanceConfig = field(default_factory=ProvenanceConfig)
    content_containers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> StorageConfig:
        """Build from a mapping with one sub-mapping per section (e.g. parsed from JSON)."""
        unknown = set(values) - set(_SECTIONS)
        if unknown:
            raise ValueError(f"unknown storage setting section(s) {sorted(unknown)} (known: {', '.join(_SECTIONS)})")
        return cls(
            flowfile_repository=FlowFileRepositoryConfig.from_mapping(values.get("flowfile_repository", {})),
            content_repository=ContentConfig.from_mapping(values.get("content_repository", {})),
            provenance_repository=ProvenanceConfig.from_mapping(values.get("provenance_repository", {})),
            content_containers=dict(values.get("content_containers", {})),
        )

    def container_paths(self, data_dir: Path) -> dict[str, Path]:
        """The content containers, resolved against ``data_dir``."""
        if not self.content_containers:
            return {"default": data_dir / "content_repository"}
        return {name: data_dir / path for name, path in self.content_containers.items()}
