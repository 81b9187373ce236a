"""Spark on the node and in the jobs process: only this package imports pyspark, and only when a
Spark-backed component or an analytics job runs."""
