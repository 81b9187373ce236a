"""The node's ``confinement`` settings section (``--files-root`` is exercised by test_node_process)."""

from __future__ import annotations

import json

import pytest

from engine.confinement import ConfinementSettings
from engine.node import NodeConfig


def test_the_confinement_section_of_the_node_settings(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"confinement": {
        "files_root": "/srv/files", "protected-paths": ["/srv/platform", "/etc/flowsite"],
        "platform_addresses": "redis:6379, [::1]:5432"}}))
    settings = NodeConfig.from_file(path).confinement
    assert settings == ConfinementSettings("/srv/files", ("/srv/platform", "/etc/flowsite"),
                                           ("redis:6379", "[::1]:5432"))


@pytest.mark.parametrize("section, message", [
    ({"files_root": "relative"}, "'relative' is not an absolute path"),
    ({"protected_paths": ["here"]}, "'here' is not an absolute path"),
    ({"platform_addresses": ["redis"]}, "platform address 'redis' is not host:port"),
    ({"files": "/x"}, "unknown confinement setting 'files'"),
])
def test_wrong_settings_are_refused_with_the_reason(section, message):
    with pytest.raises(ValueError, match=message):
        NodeConfig.from_mapping({"confinement": section})

