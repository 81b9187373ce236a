"""Spark for the record processors and provenance analytics: the process's SparkSession and how
data reaches it.

Only this package imports pyspark, and only when a Spark-backed component or an analytics job
runs: importing ``engine.spark`` (or ``engine.spark.settings`` / ``engine.spark.runtime``)
starts nothing and imports no pyspark. ``engine.spark.runtime`` holds the runtime (``SparkRuntime``,
``node_runtime``); docs/spark.md describes the settings and the failure behaviour.
``engine.spark.provenance_sql`` and ``engine.spark.provenance_query`` run provenance analytics
(docs/analytics.md).
"""

from engine.spark.settings import SparkSettings

__all__ = ["SparkSettings"]
