"""Fixtures of the record processors' tests: a Spark runtime for the test session, and record
services."""

from __future__ import annotations

import pytest

from engine.components import default_registry
from tests.engine.processors.record_standins import StandInJsonLinesReader, StandInJsonLinesWriter


@pytest.fixture(scope="session")
def spark_runtime():
    """The node runtime, set up for tests (local[2], no UI, few shuffle partitions)."""
    from engine.spark.runtime import configure_node_runtime, node_runtime
    from engine.spark.settings import SparkSettings

    configure_node_runtime(SparkSettings(master="local[2]", ui_enabled=False,
                                         conf={"spark.sql.shuffle.partitions": "2"}), None, "flowsite-tests")
    runtime = node_runtime()
    yield runtime
    runtime.stop()


@pytest.fixture(scope="session")
def json_lines_services():
    """Service definitions for a ProcessorTestRunner: a JSON-lines reader and writer."""
    registry = default_registry()
    registry.register(StandInJsonLinesReader, "test")
    registry.register(StandInJsonLinesWriter, "test")
    return {"reader": ("StandInJsonLinesReader", {}), "writer": ("StandInJsonLinesWriter", {})}
