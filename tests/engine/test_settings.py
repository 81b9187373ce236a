import pytest

from engine.config import StorageConfig
from engine.wal import SyncPolicy


def test_storage_settings_from_nifi_strings(tmp_path):
    config = StorageConfig.from_mapping({
        "flowfile_repository": {"sync-policy": "OS", "checkpoint.interval": "20 secs", "accept_damage": "yes"},
        "content_repository": {"max_appendable_size": "1 MB", "archive_max_usage_percentage": "80%"},
        "provenance_repository": {"rollover_time": "10 secs", "indexed_attributes": "filename, mime.type"},
        "content_containers": {"fast": "/mnt/ssd/content", "bulk": "bulk"},
    })
    assert config.flowfile_repository.sync_policy is SyncPolicy.OS
    assert config.flowfile_repository.checkpoint_interval == 20
    assert config.flowfile_repository.accept_damage is True
    assert config.content_repository.max_appendable_size == 1 << 20
    assert config.content_repository.archive_max_usage_percentage == 80
    assert config.provenance_repository.indexed_attributes == ("filename", "mime.type")
    assert config.container_paths(tmp_path) == {"fast": tmp_path / "/mnt/ssd/content", "bulk": tmp_path / "bulk"}


def test_defaults_follow_the_seed():
    config = StorageConfig()
    assert config.flowfile_repository.sync_policy is SyncPolicy.GROUPED
    assert config.flowfile_repository.checkpoint_interval == 120
    assert config.content_repository.max_appendable_size == 50 << 10
    assert config.provenance_repository.rollover_time == 30
    assert config.provenance_repository.max_storage_time == 24 * 3600
    assert config.provenance_repository.journal_count == 16


@pytest.mark.parametrize("values, message", [
    ({"flowfile_repository": {"sync_policy": "sometimes"}},
     "FlowFile repository setting 'sync_policy': expected one of always, grouped, os"),
    ({"flowfile_repository": {"checkpoint_interval": "often"}}, "FlowFile repository setting 'checkpoint_interval'"),
    ({"flowfile_repository": {"checkpoint_interval": "0 sec"}}, "checkpoint_interval must be positive"),
    ({"flowfile_repository": {"sync": "os"}}, "unknown FlowFile repository setting 'sync'"),
    ({"content_repository": {"max_appendable_size": "big"}}, "content repository setting 'max_appendable_size'"),
    ({"provenance_repository": {"compression": "lz4"}}, "provenance repository setting 'compression'"),
    ({"wal": {}}, "unknown storage setting section"),
])
def test_bad_settings_name_what_is_wrong(values, message):
    with pytest.raises(ValueError, match=message):
        StorageConfig.from_mapping(values)
