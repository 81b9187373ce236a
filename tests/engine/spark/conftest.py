"""Spark fixtures for the tests under tests/engine/spark: the shared ``spark_runtime``
(``tests.engine.spark.fixtures``), a standalone cluster and a Spark Connect server
(``tests.engine.spark.cluster``)."""

from tests.engine.spark.cluster import spark_cluster, spark_connect_server  # noqa: F401
from tests.engine.spark.fixtures import spark_runtime  # noqa: F401
