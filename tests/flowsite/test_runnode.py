"""``manage.py runnode``: one engine node run as a real process under a node id."""

from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from engine.testing.flows import connection, flow, processor
from tests.processes import OutputProcess

REPO_ROOT = Path(__file__).resolve().parents[2]


class NodeProcess(OutputProcess):
    """``manage.py runnode --standalone`` in a subprocess."""

    def __init__(self, *args: str) -> None:
        super().__init__([sys.executable, "manage.py", "runnode", "--standalone", *args], REPO_ROOT)


def wait_for_files(directory: Path, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if directory.is_dir() and len([p for p in directory.iterdir() if not p.name.startswith(".")]) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{directory} did not get {count} files within {timeout} s")


def write_flow(path: Path) -> Path:
    generate = processor("gen", "GenerateFlowFile", {"File Size": "10 B"}, schedulingPeriod="100 millis")
    document = flow(processors=[generate,
                                processor("put", "PutFile", {"Directory": "#{out}"},
                                          auto_terminate=["success", "failure"])],
                    connections=[connection("c", "gen", "put")],
                    parameter_context="ctx", parameter_contexts={"ctx": {"out": "unset"}})
    path.write_text(json.dumps(document))
    return path


def saved_flow(data_dir: Path) -> dict:
    return json.loads(gzip.decompress((data_dir / "flow.json.gz").read_bytes()))


def test_runnode_runs_a_flow_and_stops_cleanly_on_sigterm(tmp_path):
    out, data = tmp_path / "out", tmp_path / "node"
    flow_file = write_flow(tmp_path / "flow.json")
    node = NodeProcess("--node-id", "node-7", "--data-dir", str(data), "--flow", str(flow_file),
                       "--parameter", f"out={out}", "--status-interval", "0.2")
    try:
        wait_for_files(out, 3)
    finally:
        status = node.terminate()
    assert status == 0, node.output
    assert "node node-7: data directory" in node.output
    assert "node-7: running" in node.output and "node-7: stopped cleanly" in node.output
    assert "processors running" in node.output, "the engine's periodic status line is logged"
    assert saved_flow(data)["parameterContexts"]["ctx"]["parameters"][0]["value"] == str(out)


def test_runnode_starts_a_new_data_directory_with_an_empty_flow_and_resumes_it(tmp_path):
    data = tmp_path / "node"
    node = NodeProcess("--node-id", "node-1", "--data-dir", str(data))
    try:
        node.wait_for_output("node-1: running")
    finally:
        status = node.terminate()
    assert status == 0, node.output
    assert "no flow yet, starting with an empty one" in node.output
    assert saved_flow(data)["flowContents"]["identifier"] == "root"

    node = NodeProcess("--node-id", "node-1", "--data-dir", str(data))
    try:
        node.wait_for_output("node-1: running")
    finally:
        status = node.terminate()
    assert status == 0, node.output
    assert "no flow yet" not in node.output


def test_runnode_refuses_a_missing_flow_and_a_bad_parameter(tmp_path):
    with pytest.raises(CommandError, match="no flow to run") as refused:
        call_command("runnode", "--node-id", "node-1", "--data-dir", str(tmp_path / "n"),
                     "--flow", str(tmp_path / "missing.json"))
    assert refused.value.returncode == 2
    with pytest.raises(CommandError, match="NAME=VALUE"):
        call_command("runnode", "--node-id", "node-1", "--data-dir", str(tmp_path / "n"),
                     "--flow", str(write_flow(tmp_path / "flow.json")), "--parameter", "justtext")


@pytest.mark.parametrize("node_id", ["", "node 1", "-node", "n" * 64, "node/1"])
def test_runnode_refuses_a_node_id_that_cannot_name_a_host(node_id, tmp_path):
    with pytest.raises(CommandError, match="is not a node id"):
        call_command("runnode", f"--node-id={node_id}", "--data-dir", str(tmp_path / "n"))
    assert not (tmp_path / "n").exists()


def test_runnode_refuses_bad_labels_and_labels_on_a_standalone_node(tmp_path):
    with pytest.raises(CommandError, match="'a b' is not a node label"):
        call_command("runnode", "--node-id", "node-1", "--data-dir", str(tmp_path / "n"), "--labels", "acme,a b")
    with pytest.raises(CommandError, match="a --standalone node runs its whole flow"):
        call_command("runnode", "--node-id", "node-1", "--data-dir", str(tmp_path / "n"), "--labels", "acme",
                     "--standalone")
    assert not (tmp_path / "n").exists()
