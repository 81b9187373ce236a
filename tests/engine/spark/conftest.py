"""Spark fixtures for the tests under tests/engine/spark: the shared ``spark_runtime``
(``tests.engine.spark.fixtures``), its SparkSession as ``spark``, a standalone cluster and a
Spark Connect server (``tests.engine.spark.cluster``)."""

import pytest

from tests.engine.spark.cluster import spark_cluster, spark_connect_server  # noqa: F401
from tests.engine.spark.fixtures import spark_runtime  # noqa: F401


@pytest.fixture
def spark(spark_runtime):  # noqa: F811
    """The shared runtime's SparkSession (asked anew per test: a cluster test may replace it)."""
    return spark_runtime.session()
