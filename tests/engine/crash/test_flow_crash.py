"""SIGKILL a running node again and again: after restarts, every input reaches the output, whole.

The flow picks files up (GetFile, which deletes them only after its session commits), tags them
(UpdateAttribute), splits the processing across a funnel, and writes them out (PutFile, which
writes a hidden file and renames it into place). Kills land at random moments, during listing,
sessions, checkpoints and writes. GetFile and PutFile are at-least-once across a crash (a file
may be read or written twice); nothing may be lost and no output may be partial.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.testing.flows import connection, flow, funnel, processor
from tests.engine.node_process import NodeProcess

REPO_ROOT = Path(__file__).resolve().parents[3]
SEED = int(os.environ.get("CRASH_SEED", "20261123"))
FILES = 600
KILLS = 8
RUNNING = r": running \S+ from "


def make_inputs(directory: Path, rng: random.Random) -> dict[str, str]:
    directory.mkdir()
    digests = {}
    for index in range(FILES):
        size = rng.choice([0, 10, 1000, 20_000, 70_000, 250_000])
        data = rng.randbytes(size)
        name = f"file-{index:04d}.bin"
        (directory / name).write_bytes(data)
        digests[name] = hashlib.sha256(data).hexdigest()
    return digests


def write_flow(path: Path, inputs: Path, outputs: Path) -> None:
    document = flow(
        processors=[
            processor("get", "GetFile", {"Input Directory": str(inputs), "Batch Size": "7"},
                      schedulingPeriod="100 millis"),
            processor("tag", "UpdateAttribute", {"stage": "tagged"}, concurrentlySchedulableTaskCount=2),
            processor("put", "PutFile", {"Directory": str(outputs), "Conflict Resolution Strategy": "replace"},
                      auto_terminate=["success"], concurrentlySchedulableTaskCount=2),
        ],
        funnels=[funnel("merge")],
        connections=[connection("got", "get", "tag", backPressureObjectThreshold=50),
                     connection("tagged", "tag", "merge", destination_type="FUNNEL"),
                     connection("to-put", "merge", "put", source_type="FUNNEL"),
                     connection("retry", "put", "put", ["failure"])],
    )
    path.write_text(json.dumps(document))


def start(flow_file: Path, data_dir: Path, log: Path) -> NodeProcess:
    return NodeProcess(log, "--flow", str(flow_file), "--data-dir", str(data_dir), "--status-interval", "0.5")


def inspect(data_dir: Path) -> str:
    result = subprocess.run([sys.executable, "-m", "engine.inspect", str(data_dir)], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"inspection found a problem after a kill:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.mark.slow
def test_no_flowfile_is_lost_and_every_output_is_whole_across_sigkills(tmp_path):
    rng = random.Random(SEED)
    inputs, outputs, data_dir = tmp_path / "in", tmp_path / "out", tmp_path / "node"
    digests = make_inputs(inputs, rng)
    flow_file = tmp_path / "flow.json"
    write_flow(flow_file, inputs, outputs)
    kills = 0
    while kills < KILLS:
        node = start(flow_file, data_dir, tmp_path / f"node-{kills}.log")
        # The clock starts once the node runs: started from process launch, a slow machine's first
        # kill could land before the node had created its data directory, leaving nothing to inspect.
        node.wait_for(RUNNING)
        time.sleep(rng.uniform(0.2, 1.5))
        if node.process.poll() is not None:
            pytest.fail(f"the node stopped on its own:\n{node.output()[-3000:]}")
        node.kill()
        kills += 1
        inspect(data_dir)
        if kills == KILLS // 2:
            assert any(inputs.iterdir()), "the inputs ran out before half of the kills: the test kills idle nodes"
    node = start(flow_file, data_dir, tmp_path / "node-last.log")
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if not any(inputs.iterdir()) and _written(outputs) == set(digests):
                break
            time.sleep(0.2)
        time.sleep(1.0)
    finally:
        node.wait_for(RUNNING)  # SIGTERM stops a node cleanly once it has started
        assert node.stop(signal.SIGTERM) == 0, node.output()[-3000:]
    assert not any(inputs.iterdir()), "some input files were never picked up"
    assert _written(outputs) == set(digests), "some files never reached the output"
    for name, digest in digests.items():
        assert hashlib.sha256((outputs / name).read_bytes()).hexdigest() == digest, f"{name} is not whole"
    assert not [p.name for p in outputs.iterdir() if p.name.startswith(".")], "a partial (hidden) file remains"
    report = inspect(data_dir)
    assert "Verified 0 FlowFiles in memory and 0 swapped" in report, report


def _written(directory: Path) -> set[str]:
    if not directory.is_dir():
        return set()
    return {p.name for p in directory.iterdir() if not p.name.startswith(".")}
