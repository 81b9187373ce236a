"""Spark settings of a node (stand-in: the contract's fields only)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SparkSettings"]


@dataclass(frozen=True)
class SparkSettings:
    """How a node reaches Spark."""

    master: str = "local[*]"
    staging_dir: str = ""
    arrow_limit: str = "64 MB"
    driver_memory: str = "1g"
    ui_enabled: bool = True
    conf: dict[str, str] = field(default_factory=dict)
