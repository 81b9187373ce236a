"""Fixtures of the record processors' tests: the test session's Spark runtime and record services."""

from __future__ import annotations

import pytest

from tests.engine.processors.records import JSON
from tests.engine.spark.fixtures import spark_runtime  # noqa: F401


@pytest.fixture
def json_services():
    """Services of a ProcessorTestRunner: a JSON reader and a JSON-lines writer."""
    return JSON.services()
