"""SparkSettings: read like every other node setting, checked when read (no Spark needed)."""

import pytest

from engine.node import NodeConfig
from engine.spark.settings import SparkSettings, master_kind


def test_defaults():
    settings = SparkSettings()
    assert (settings.master, settings.staging_dir, settings.arrow_limit, settings.driver_memory,
            settings.ui_enabled, settings.conf) == ("local[*]", "", "64 MB", "1g", True, {})
    assert settings.kind == "local" and settings.arrow_limit_bytes == 64 << 20


def test_from_mapping_takes_dashes_nifi_sizes_and_spark_settings():
    settings = SparkSettings.from_mapping({
        "master": "spark://spark-master:7077", "staging-dir": "/spark-staging", "arrow.limit": "16 MB",
        "driver_memory": "2g", "ui-enabled": "false", "conf": {"spark.executor.memory": "2g", "spark.x.flag": True}})
    assert settings == SparkSettings("spark://spark-master:7077", "/spark-staging", "16 MB", "2g", False,
                                     {"spark.executor.memory": "2g", "spark.x.flag": "true"})
    assert settings.kind == "standalone" and settings.arrow_limit_bytes == 16 << 20
    assert SparkSettings.from_mapping({"arrow_limit": 1024}).arrow_limit_bytes == 1024


@pytest.mark.parametrize("master, kind", [("local", "local"), ("local[2]", "local"), ("local[*]", "local"),
                                          ("local[4,3]", "local"), ("spark://h:7077", "standalone"),
                                          ("spark://a:7077,b:7077", "standalone"), ("sc://h:15002", "connect")])
def test_master_kinds(master, kind):
    assert master_kind(master) == kind


@pytest.mark.parametrize("values, message", [
    ({"master": "yarn"}, "not a Spark master: 'yarn'"),
    ({"master": "spark://"}, "not a Spark master"),
    ({"arrow_limit": "lots"}, "spark setting 'arrow_limit'"),
    ({"ui_enabled": "maybe"}, "spark setting 'ui_enabled': not a boolean"),
    ({"conf": {"executor.memory": "1g"}}, "'executor.memory' is not a Spark setting"),
    ({"conf": "spark.a=b"}, "expected a mapping"),
    ({"masters": "local"}, "unknown spark setting 'masters'"),
])
def test_bad_settings_are_refused_naming_the_setting(values, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("*", r"\*")):
        SparkSettings.from_mapping(values)


def test_the_node_settings_have_a_spark_section():
    config = NodeConfig.from_mapping({"spark": {"master": "sc://connect:15002", "arrow-limit": "8 MB"},
                                      "runtime": {}})
    assert config.spark == SparkSettings(master="sc://connect:15002", arrow_limit="8 MB")
    assert NodeConfig().spark == SparkSettings()
    with pytest.raises(ValueError, match="unknown spark setting"):
        NodeConfig.from_mapping({"spark": {"bogus": 1}})
