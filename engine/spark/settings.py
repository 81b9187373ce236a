"""A node's Spark settings: which Spark runs the record work, and how data reaches it.

Importable without pyspark. A node's settings file holds them in its ``spark`` section
(``engine.node.NodeConfig``); ``SPARK_MASTER`` in the node's environment overrides ``master``.
docs/spark.md describes each setting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from engine.settings import as_bool, as_data_size, settings_from_mapping

__all__ = ["MASTER_KINDS", "SparkSettings", "master_kind"]

#: What a master URL can name: an embedded Spark, a standalone cluster, a Spark Connect server.
MASTER_KINDS = ("local", "standalone", "connect")


def master_kind(master: str) -> str:
    """``local`` (``local``, ``local[N]``, ``local[*]``), ``standalone`` (``spark://host:port``)
    or ``connect`` (``sc://host:port``); raises ValueError for anything else."""
    text = master.strip()
    if text == "local" or (text.startswith("local[") and text.endswith("]")):
        return "local"
    if text.startswith("spark://") and len(text) > len("spark://"):
        return "standalone"
    if text.startswith("sc://") and len(text) > len("sc://"):
        return "connect"
    raise ValueError(f"not a Spark master: {master!r} (expected local[*], spark://host:port or sc://host:port)")


@dataclass(frozen=True)
class SparkSettings:
    """How a node runs Spark.

    ``master``: ``local[*]`` (an embedded Spark in the node's own JVM), ``spark://host:port`` (a
    standalone cluster) or ``sc://host:port`` (a Spark Connect server). ``staging_dir``: where
    batches larger than ``arrow_limit`` are written as Parquet for Spark to read (and large
    results for the node to read back); the cluster's executors (or the Connect server) must see
    it at the same path; empty: ``<node data dir>/spark-staging``. ``arrow_limit``: a NiFi data
    size; tables up to it are handed over through Arrow in memory. ``driver_memory``: the JVM
    heap of the driver (the node's own JVM, except under Spark Connect). ``ui_enabled``: start
    the Spark UI (its address shows in the portal's node list). ``conf``: more ``spark.*``
    settings, applied last (they win over Flowsite's own defaults).
    """

    master: str = "local[*]"
    staging_dir: str = ""
    arrow_limit: str = "64 MB"
    driver_memory: str = "1g"
    ui_enabled: bool = True
    conf: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        master_kind(self.master)
        as_data_size(self.arrow_limit)
        for key in self.conf:
            if not key.startswith("spark."):
                raise ValueError(f"conf: {key!r} is not a Spark setting (expected spark.*)")

    @property
    def kind(self) -> str:
        """What ``master`` names (one of ``MASTER_KINDS``)."""
        return master_kind(self.master)

    @property
    def arrow_limit_bytes(self) -> int:
        """``arrow_limit`` in bytes."""
        return as_data_size(self.arrow_limit)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> SparkSettings:
        """Build from a mapping such as ``{"master": "spark://spark-master:7077", "arrow-limit": "16 MB",
        "conf": {"spark.executor.memory": "2g"}}``; raises ValueError naming the setting at fault."""
        return settings_from_mapping(cls, values, {
            "master": _text, "staging_dir": _text, "arrow_limit": _size_text, "driver_memory": _text,
            "ui_enabled": as_bool, "conf": _conf}, "spark")


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a text, not {value!r}")
    return value.strip()


def _size_text(value: Any) -> str:
    """A data size, kept as written (``'64 MB'``; a number of bytes becomes its text)."""
    as_data_size(value)
    return str(value).strip()


def _conf(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a mapping of spark.* settings, not {value!r}")
    return {str(key): str(item).lower() if isinstance(item, bool) else str(item) for key, item in value.items()}
