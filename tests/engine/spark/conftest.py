"""A local SparkSession shared by the Spark tests of one test session.

Minimal on purpose: the Spark runtime (engine/spark/) brings its own fixture that replaces this one.
"""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(scope="session")
def spark():
    """A ``local[2]`` SparkSession without UI, time zone UTC; stopped at the end of the test session."""
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("flowsite-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .getOrCreate())
    yield session
    session.stop()
    # py4j logs "Closing down clientserver connection" from a finalizer at exit, after pytest has closed
    # the stream its handler writes to
    logging.getLogger("py4j").setLevel(logging.WARNING)
