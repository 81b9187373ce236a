"""The registry finds built-in types by every name and third-party types through entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.components import ComponentRegistry, UnknownComponentTypeError

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_types_answer_to_short_nifi_and_python_names():
    registry = ComponentRegistry(use_entry_points=False)
    cls = registry.processor("PutFile")
    assert registry.processor("org.apache.nifi.processors.standard.PutFile") is cls
    assert registry.processor(f"{cls.__module__}.{cls.__qualname__}") is cls
    with pytest.raises(UnknownComponentTypeError, match="unknown processor type 'com.example.PutFile'"):
        registry.processor("com.example.PutFile")


def test_third_party_processors_are_found_through_entry_points(tmp_path):
    package = tmp_path / "site" / "acme_flowsite"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "processors.py").write_text(textwrap.dedent('''
        from engine.components import Processor, Relationship

        class Shout(Processor):
            """Upper-cases the content of each FlowFile."""

            relationships = (Relationship("success", "Shouted"),)

            def on_trigger(self, context, session):
                flowfile = session.get()
                if flowfile is not None:
                    data = session.read_bytes(flowfile).upper()
                    session.transfer(session.write_bytes(flowfile, data), "success")
    '''))
    dist = tmp_path / "site" / "acme_flowsite-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-flowsite\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[flowsite.processors]\nacme = acme_flowsite.processors\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    result = subprocess.run([sys.executable, "-m", "engine", "components", "--json"], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    rows = {row["type"]: row for row in json.loads(result.stdout)}
    assert rows["Shout"]["origin"] == "entry point acme (acme_flowsite.processors)"
    assert rows["Shout"]["description"] == "Upper-cases the content of each FlowFile."
