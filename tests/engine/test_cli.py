"""``python -m engine``: run a node until SIGTERM, resume it, validate flows, list components."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from engine.testing.flows import connection, flow, processor

REPO_ROOT = Path(__file__).resolve().parents[2]


def engine(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=60, **kwargs)


def write_flow(path: Path, out_dir: Path, period: str = "100 millis") -> Path:
    document = flow(processors=[processor("gen", "GenerateFlowFile", {"File Size": "10 B"}, schedulingPeriod=period),
                                processor("put", "PutFile", {"Directory": "#{out}"},
                                          auto_terminate=["success", "failure"])],
                    connections=[connection("c", "gen", "put")],
                    parameter_context="ctx", parameter_contexts={"ctx": {"out": "unset"}})
    path.write_text(json.dumps(document))
    return path


def wait_for_files(directory: Path, count: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if directory.is_dir() and len([p for p in directory.iterdir() if not p.name.startswith(".")]) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{directory} did not get {count} files within {timeout} s")


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "engine", "run", *args], cwd=REPO_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_run_stops_cleanly_on_sigterm_and_resumes_without_the_flow_file(tmp_path):
    out, data = tmp_path / "out", tmp_path / "node"
    flow_file = write_flow(tmp_path / "flow.json", out)
    node = start("--flow", str(flow_file), "--data-dir", str(data), "--parameter", f"out={out}",
                 "--status-interval", "0.2")
    try:
        wait_for_files(out, 3)
    finally:
        node.send_signal(signal.SIGTERM)
        output, _ = node.communicate(timeout=30)
    assert node.returncode == 0, output
    assert "stopped cleanly" in output
    assert "processors running" in output, "the periodic status line is logged"
    saved = json.loads(gzip.decompress((data / "flow.json.gz").read_bytes()))
    assert saved["parameterContexts"]["ctx"]["parameters"][0]["value"] == str(out)
    journals = list((data / "flowfile_repository" / "journals").iterdir())
    assert len(journals) == 1 and journals[0].stat().st_size < 200, "a checkpoint was taken at shutdown"
    before = len(list(out.iterdir()))

    node = start("--data-dir", str(data))
    try:
        wait_for_files(out, before + 3)
    finally:
        node.send_signal(signal.SIGINT)
        output, _ = node.communicate(timeout=30)
    assert node.returncode == 0, output


def test_run_refuses_a_broken_flow_and_says_why(tmp_path):
    document = flow(processors=[processor("gen", "GenerateFlowFile")], connections=[connection("c", "gen", "ghost")])
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(document))
    result = engine("run", "--flow", str(path), "--data-dir", str(tmp_path / "node"))
    assert result.returncode == 2
    assert "$.flowContents.connections[0].destination.id: connects to nothing" in result.stderr


def test_run_without_any_flow_and_with_a_bad_parameter(tmp_path):
    result = engine("run", "--data-dir", str(tmp_path / "empty"))
    assert result.returncode == 2 and "no flow to run" in result.stderr
    flow_file = write_flow(tmp_path / "flow.json", tmp_path / "out")
    result = engine("run", "--flow", str(flow_file), "--data-dir", str(tmp_path / "n"), "--parameter", "nope=1")
    assert result.returncode == 2 and "no parameter context defines parameter 'nope'" in result.stderr
    result = engine("run", "--flow", str(flow_file), "--data-dir", str(tmp_path / "n"), "--parameter", "justtext")
    assert result.returncode == 2 and "NAME=VALUE" in result.stderr


def test_validate_exit_codes(tmp_path):
    good = write_flow(tmp_path / "good.json", tmp_path / "out")
    assert engine("validate", str(good)).returncode == 0
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps(flow(processors=[processor("put", "PutFile")])))
    result = engine("validate", str(invalid))
    assert result.returncode == 1
    assert "invalid: $.flowContents.processors[0].properties.Directory: 'Directory' is required" in result.stdout
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    result = engine("validate", str(broken))
    assert result.returncode == 2 and "error: $: not valid JSON" in result.stdout


def test_components_lists_the_registry():
    rows = json.loads(engine("components", "--json").stdout)
    generate = next(row for row in rows if row["type"] == "GenerateFlowFile")
    assert generate["nifi_type"] == "org.apache.nifi.processors.standard.GenerateFlowFile"
    assert generate["kind"] == "processor" and generate["description"]


def test_engine_command_line_does_not_need_django(tmp_path):
    env = dict(os.environ, PYTHONPATH="")
    result = subprocess.run([sys.executable, "-c", "import sys; sys.modules['django'] = None; "
                             "import engine.__main__, engine.node, engine.runtime"], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_a_damaged_log_refuses_to_start_until_the_operator_accepts_the_damage(tmp_path):
    out, data = tmp_path / "out", tmp_path / "node"
    flow_file = write_flow(tmp_path / "flow.json", out)
    node = start("--flow", str(flow_file), "--data-dir", str(data), "--parameter", f"out={out}")
    try:
        wait_for_files(out, 5)
    finally:
        node.send_signal(signal.SIGKILL)
        node.communicate(timeout=30)
    journal = max((data / "flowfile_repository" / "journals").glob("*.journal"), key=lambda p: p.stat().st_size)
    damaged = bytearray(journal.read_bytes())
    damaged[len(damaged) // 3] ^= 0xFF
    journal.write_bytes(bytes(damaged))
    before = {p: p.read_bytes() for p in (data / "flowfile_repository").rglob("*") if p.is_file()}

    refused = engine("run", "--data-dir", str(data), "--parameter", f"out={out}")
    assert refused.returncode == 2
    assert f"journal {journal} at byte offset" in refused.stderr and "--accept-damage" in refused.stderr
    assert {p: p.read_bytes() for p in (data / "flowfile_repository").rglob("*") if p.is_file()} == before

    node = start("--data-dir", str(data), "--parameter", f"out={out}", "--accept-damage")
    try:
        deadline = time.monotonic() + 30
        while not list((data / "quarantine").glob("*/flowfile_repository/journals/*.journal")):
            assert time.monotonic() < deadline and node.poll() is None, "no quarantine copy was made"
            time.sleep(0.05)
    finally:
        node.send_signal(signal.SIGTERM)
        output, _ = node.communicate(timeout=30)
    assert node.returncode == 0, output
    assert "started despite damage" in output and "given up" in output
    (copy,) = (data / "quarantine").glob(f"*/flowfile_repository/journals/{journal.name}")
    assert copy.read_bytes() == bytes(damaged)
    inspection = subprocess.run([sys.executable, "-m", "engine.inspect", str(data)], cwd=REPO_ROOT,
                                capture_output=True, text=True, timeout=60)
    assert inspection.returncode == 0, inspection.stdout  # the damage was folded away
