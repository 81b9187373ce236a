from __future__ import annotations

import pytest

from engine.content.config import MAX_APPENDABLE_SIZE_CAP, ContentConfig


def test_defaults_follow_nifi() -> None:
    config = ContentConfig()
    assert config.sections == 1024
    assert config.max_appendable_size == 50 * 1024
    assert config.archive_enabled is True
    assert config.archive_max_retention == 3 * 3600
    assert config.archive_max_usage_percentage == 90.0
    assert config.cleanup_interval == 60.0


def test_from_mapping_parses_nifi_style_strings() -> None:
    config = ContentConfig.from_mapping(
        {
            "sections": "16",
            "max_appendable_size": "1 MB",
            "archive_enabled": "false",
            "archive_max_retention": "12 hours",
            "archive_max_usage_percentage": "75%",
            "cleanup_interval": "30 sec",
        }
    )
    assert config == ContentConfig(
        sections=16,
        max_appendable_size=1 << 20,
        archive_enabled=False,
        archive_max_retention=12 * 3600.0,
        archive_max_usage_percentage=75.0,
        cleanup_interval=30.0,
    )


def test_from_mapping_accepts_hyphens_numbers_and_unlimited_retention() -> None:
    config = ContentConfig.from_mapping(
        {"max-appendable-size": 4096, "archive-max-retention": "unlimited", "archive_max_usage_percentage": 50}
    )
    assert config.max_appendable_size == 4096
    assert config.archive_max_retention is None
    assert config.archive_max_usage_percentage == 50.0
    assert ContentConfig.from_mapping({"archive_max_retention": None}).archive_max_retention is None
    assert ContentConfig.from_mapping({}) == ContentConfig()


def test_max_appendable_size_is_capped_at_100_mb() -> None:
    assert ContentConfig.from_mapping({"max_appendable_size": "1 GB"}).max_appendable_size == MAX_APPENDABLE_SIZE_CAP
    assert MAX_APPENDABLE_SIZE_CAP == 100 << 20


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max_appendable_size", "fifty"),
        ("max_appendable_size", "50 XB"),
        ("archive_max_retention", "3 fortnights"),
        ("archive_max_usage_percentage", "ninety"),
        ("archive_enabled", "maybe"),
        ("sections", "many"),
        ("cleanup_interval", True),
    ],
)
def test_unparsable_values_name_the_key(key: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"'{key}'"):
        ContentConfig.from_mapping({key: value})


def test_unknown_key_is_named() -> None:
    with pytest.raises(ValueError, match="unknown content repository setting 'archive_max_age'"):
        ContentConfig.from_mapping({"archive_max_age": "1 hour"})


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("archive_max_usage_percentage", "150%", "archive_max_usage_percentage"),
        ("archive_max_usage_percentage", "0%", "archive_max_usage_percentage"),
        ("sections", 0, "sections"),
        ("max_appendable_size", "0 B", "max_appendable_size"),
        ("cleanup_interval", "0 sec", "cleanup_interval"),
        ("archive_max_retention", "0 sec", "archive_max_retention"),
    ],
)
def test_out_of_range_values_are_rejected(key: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ContentConfig.from_mapping({key: value})
