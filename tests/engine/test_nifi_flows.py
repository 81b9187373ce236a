"""A flow NiFi 2 wrote ("Download flow definition": processors ENABLED, one DISABLED, services
ENABLED, a parameter context whose ``#{Trigger Schedule}`` is a scheduling period) run by a real
``python -m engine run`` process: nothing runs until ``--start``, which starts what NiFi would."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

from tests.engine.node_process import NodeProcess

NIFI_FLOW = Path(__file__).parent / "flow" / "data" / "nifi-orders.json"
GENERATE, BACKFILL, CONVERT, PUT = (f"0a1b2c3d-000{i}-3000-8000-00000000000{i}" for i in range(1, 5))
READER, WRITER = "0a1b2c3d-0101-3000-8000-000000000101", "0a1b2c3d-0102-3000-8000-000000000102"


def _written(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if not p.name.startswith(".")) if directory.is_dir() else []


def _wait_for_files(directory: Path, count: int, timeout: float = 30) -> list[Path]:
    deadline = time.monotonic() + timeout
    while len(_written(directory)) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"{directory} did not get {count} files within {timeout} s")
        time.sleep(0.05)
    return _written(directory)


def _saved_states(data: Path) -> dict[str, str]:
    saved = json.loads(gzip.decompress((data / "flow.json.gz").read_bytes()))
    contents = saved["flowContents"]
    return {c["identifier"]: c["scheduledState"] for c in contents["processors"] + contents["controllerServices"]}


def test_a_nifi_flow_starts_with_start_and_its_disabled_processor_stays_stopped(tmp_path):
    out, data = tmp_path / "orders", tmp_path / "node"
    node = NodeProcess(tmp_path / "node.log", "--flow", str(NIFI_FLOW), "--data-dir", str(data),
                       "--parameter", f"Output Directory={out}", "--start")
    try:
        node.wait_for(r"running Orders to JSON from .*; 0 component\(s\) could not start")
        node.wait_for(r"3/4 processors running")
        files = _wait_for_files(out, 3)
    finally:
        assert node.stop() == 0, node.output()
    records = [json.loads(path.read_text()) for path in files]
    assert all(content == [{"id": 1, "customer": "ACME"}] for content in records), records
    assert _saved_states(data) == {GENERATE: "RUNNING", BACKFILL: "DISABLED", CONVERT: "RUNNING", PUT: "RUNNING",
                                   READER: "ENABLED", WRITER: "ENABLED"}

    count = len(_written(out))
    node = NodeProcess(tmp_path / "resumed.log", "--data-dir", str(data))
    try:
        _wait_for_files(out, count + 2)
    finally:
        assert node.stop() == 0, node.output()


def test_without_start_a_nifi_flow_is_loaded_stopped_as_nifi_left_it(tmp_path):
    out, data = tmp_path / "orders", tmp_path / "node"
    node = NodeProcess(tmp_path / "node.log", "--flow", str(NIFI_FLOW), "--data-dir", str(data),
                       "--parameter", f"Output Directory={out}", "--status-interval", "0.2")
    try:
        node.wait_for(r"0/4 processors running")
        time.sleep(1.0)
    finally:
        assert node.stop() == 0, node.output()
    assert _written(out) == [], "ENABLED processors are stopped: nothing may run before a start"
    assert _saved_states(data) == {GENERATE: "ENABLED", BACKFILL: "DISABLED", CONVERT: "ENABLED", PUT: "ENABLED",
                                   READER: "ENABLED", WRITER: "ENABLED"}


def test_a_missing_parameter_is_named_and_leaves_its_processor_stopped(tmp_path):
    document = json.loads(NIFI_FLOW.read_text())
    context = document["parameterContexts"]["Orders"]
    context["parameters"] = [p for p in context["parameters"] if p["name"] != "Trigger Schedule"]
    flow_file = tmp_path / "flow.json"
    flow_file.write_text(json.dumps(document))
    out, data = tmp_path / "orders", tmp_path / "node"
    node = NodeProcess(tmp_path / "node.log", "--flow", str(flow_file), "--data-dir", str(data),
                       "--parameter", f"Output Directory={out}", "--start", "--status-interval", "0.2")
    try:
        node.wait_for(r"flow problem: \$\.flowContents\.processors\[0\]\.schedulingPeriod: references parameter "
                      r"'Trigger Schedule', which is not defined in parameter context 'Orders'")
        node.wait_for(r"not started: .*Generate orders.*Trigger Schedule")
        node.wait_for(r"2/4 processors running")
    finally:
        assert node.stop() == 0, node.output()
    assert _written(out) == []
    assert _saved_states(data)[GENERATE] == "ENABLED", "what did not start stays stopped"
