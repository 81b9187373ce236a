"""Spark for the record processors: the node's SparkSession and how data reaches it.

Only this package imports pyspark, and only when a Spark-backed component runs: importing
``engine.spark`` (or ``engine.spark.settings`` / ``engine.spark.runtime``) starts nothing and
imports no pyspark. ``engine.spark.runtime`` holds the runtime (``SparkRuntime``,
``node_runtime``); docs/spark.md describes the settings and the failure behaviour.
"""

from engine.spark.settings import SparkSettings

__all__ = ["SparkSettings"]
