from __future__ import annotations

import pytest

from engine.provenance import ProvenanceConfig


def test_from_mapping_parses_nifi_strings() -> None:
    config = ProvenanceConfig.from_mapping(
        {
            "rollover-time": "30 secs",
            "rollover_size": "100 MB",
            "max.storage.time": "24 hours",
            "max-storage-size": "1 GB",
            "shard-duration": "1 hr",
            "indexed-attributes": "tenant, mime.type",
            "always-sync": "true",
            "journal-count": "8",
            "max-backlog-events": "5000",
        }
    )
    assert config.rollover_time == 30.0
    assert config.rollover_size == 100 << 20
    assert config.max_storage_time == 86400.0
    assert config.max_storage_size == 1 << 30
    assert config.shard_duration == 3600.0
    assert config.indexed_attributes == ("tenant", "mime.type")
    assert config.always_sync is True
    assert config.journal_count == 8
    assert config.max_backlog_events == 5000


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"rollover-time": "soon"}, "rollover-time"),
        ({"max-storage-size": "1 parsec"}, "max-storage-size"),
        ({"always-sync": "maybe"}, "always-sync"),
        ({"no-such-key": "1"}, "no-such-key"),
        ({"compression": "lz4"}, "compression"),
        ({"journal_count": "0"}, "journal_count"),
    ],
)
def test_errors_name_the_key(values: dict[str, str], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        ProvenanceConfig.from_mapping(values)


def test_current_shard_is_capped_to_a_quarter_of_storage() -> None:
    config = ProvenanceConfig(shard_size=1 << 30, max_storage_size=100 << 20)
    assert config.effective_shard_size == 25 << 20
