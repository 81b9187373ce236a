"""The test session's Spark: the process's node runtime, set up once for tests (``local[2]``, no
UI, a small driver), shared by every test that asks for ``spark_runtime``.

Processors reach Spark through ``engine.spark.runtime.node_runtime()``, so the fixture configures
that runtime rather than making another: one SparkSession serves the whole test session. A test
that needs another master (``tests.engine.spark.cluster``) makes its own runtime, which takes the
process's session over; this one starts again, lazily, at its next job. Import the fixture into a
test module or conftest outside tests/engine/spark (``from tests.engine.spark.fixtures import
spark_runtime``) to use it there.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from engine.spark.runtime import SparkRuntime, configure_node_runtime, node_runtime
from engine.spark.settings import SparkSettings

__all__ = ["TEST_SETTINGS", "spark_runtime"]

#: Spark for tests: 2 cores and a small heap (the machine is shared), no UI.
TEST_SETTINGS = SparkSettings(master="local[2]", ui_enabled=False, driver_memory="1g",
                              conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"})


@pytest.fixture(scope="session")
def spark_runtime(tmp_path_factory) -> Iterator[SparkRuntime]:
    """The node runtime with ``TEST_SETTINGS`` (staging under a temporary node data directory)."""
    runtime = node_runtime()
    if runtime.settings != TEST_SETTINGS:
        configure_node_runtime(TEST_SETTINGS, tmp_path_factory.mktemp("spark-node"), "flowsite-tests")
        runtime = node_runtime()
    yield runtime
    runtime.stop()
