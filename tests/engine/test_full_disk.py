"""A real node filling a real (tmpfs) disk by itself: it pauses instead of failing, resumes when
space comes back, stops cleanly on SIGTERM even with the disk full, and its restart recovers
every FlowFile it reported queued. Needs root (to mount the tmpfs)."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.testing.flows import connection, flow, processor

from .node_process import REPO_ROOT, NodeProcess
from .tmpfs import mounted_tmpfs

pytestmark = pytest.mark.slow

MB = 1 << 20
QUEUED = re.compile(r"([\d,]+) FlowFiles queued")


@pytest.fixture
def disk(tmp_path):
    """A 48 MB tmpfs, unmounted afterwards."""
    with mounted_tmpfs(tmp_path / "disk", "48m") as mount_point:
        yield mount_point


def ballast(path: Path, size: int | None = None) -> None:
    """Write ``size`` bytes to ``path``, or as many as fit when None (the disk is then full)."""
    chunk = b"\xa5" * MB
    with open(path, "wb", buffering=0) as handle:
        written = 0
        try:
            while size is None or written < size:
                written += handle.write(chunk[: MB if size is None else min(MB, size - written)])
        except OSError as error:
            if size is not None or error.errno != errno.ENOSPC:
                raise
    if size is None:  # a tmpfs still takes a few bytes into a partly used page: take those too
        with open(path.with_name(path.name + "-tail"), "wb", buffering=0) as handle:
            try:
                while True:
                    handle.write(b"\xa5")
            except OSError as error:
                assert error.errno == errno.ENOSPC


def start_node(tmp_path: Path, disk: Path, name: str) -> NodeProcess:
    flow_path, config_path = tmp_path / "flow.json", tmp_path / "node.json"
    flow_path.write_text(json.dumps(flow(
        processors=[processor("gen", "GenerateFlowFile", {"File Size": "64 KB", "Batch Size": "10"},
                              schedulingPeriod="50 millis"),
                    processor("log", "LogAttribute", state="ENABLED", auto_terminate=["success"])],
        connections=[connection("held", "gen", "log", backPressureObjectThreshold=1_000_000,
                                backPressureDataSizeThreshold="10 GB")])))
    config_path.write_text(json.dumps({"disk_space": {"min_free": "8 MB", "check_interval": "200 millis"}}))
    return NodeProcess(tmp_path / f"{name}.log", "--flow", str(flow_path), "--data-dir", str(disk / "node"),
                       "--config", str(config_path), "--status-interval", "0.3")


def status_counts(node: NodeProcess, after: int = 0) -> list[int]:
    """The queued counts of the status lines logged past offset ``after``."""
    return [int(count.replace(",", "")) for count in QUEUED.findall(node.output()[after:])]


def settled_count(node: NodeProcess) -> int:
    """The queued count once two status lines in a row agree (the node is paused)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        mark = len(node.output())
        node.wait_for(QUEUED.pattern, after=mark)
        first = status_counts(node, mark)[-1]
        mark = len(node.output())
        node.wait_for(QUEUED.pattern, after=mark)
        if status_counts(node, mark)[-1] == first:
            return first
    raise AssertionError("the queued count never settled:\n" + node.output()[-3000:])


def stop_cleanly(node: NodeProcess) -> str:
    """SIGTERM; the node must exit 0 without a traceback. Returns what it logged while stopping."""
    assert node.stop() == 0, node.output()[-4000:]
    stopping = node.output().split(": stopping", 1)[1]
    assert "Traceback" not in stopping, stopping
    return stopping


def check_restart(tmp_path: Path, disk: Path, expected: int) -> None:
    """A restart recovers exactly ``expected`` FlowFiles and inspection finds the directory OK."""
    node = NodeProcess(tmp_path / "restart.log", "--data-dir", str(disk / "node"), "--config",
                       str(tmp_path / "node.json"), "--status-interval", "0.3")
    try:
        recovered = node.wait_for(r"recovered ([\d,]+) FlowFile\(s\)")
        node.wait_for(r": running \S+ from ")
    finally:
        stop_cleanly(node)
    assert int(recovered.group(1).replace(",", "")) == expected, "every FlowFile reported queued, and no other"
    report = subprocess.run([sys.executable, "-m", "engine.inspect", str(disk / "node")], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0 and report.stdout.rstrip().endswith("OK"), report.stdout + report.stderr


def test_a_node_filling_its_disk_pauses_resumes_and_stops_cleanly(tmp_path, disk):
    ballast(disk / "ballast", 16 * MB)
    node = start_node(tmp_path, disk, "node")
    try:
        node.wait_for(r"is short of disk space: .* free, below the minimum of 8 MB; processing is paused")
        node.wait_for(r"PAUSED, disk space low")
        paused_at = settled_count(node)
        assert paused_at > 100, "it filled the disk by itself"
        time.sleep(1.0)
        assert node.process.poll() is None, "it keeps running"
        assert settled_count(node) == paused_at, "paused: nothing lost, nothing made"

        mark = len(node.output())
        (disk / "ballast").unlink()
        node.wait_for(r"has disk space again: .*processing resumes", after=mark)
        node.wait_for(r"is short of disk space", after=mark)  # it filled the freed space too
        queued = settled_count(node)
        assert queued > paused_at
    finally:
        stopping = stop_cleanly(node)
    assert "stopped" in stopping
    check_restart(tmp_path, disk, queued)


def test_sigterm_on_a_full_disk_exits_cleanly_and_loses_nothing(tmp_path, disk):
    ballast(disk / "ballast", 16 * MB)
    node = start_node(tmp_path, disk, "node")
    try:
        node.wait_for(r"PAUSED, disk space low")
        ballast(disk / "full")  # nothing left at all: the final checkpoint meets ENOSPC
        assert os.statvfs(disk).f_bavail == 0
        queued = settled_count(node)
    finally:
        stopping = stop_cleanly(node)
    assert re.search(r"could not write the checkpoint of \S+/flowfile_repository: No space left on device; every "
                     r"committed FlowFile is in the journals and will be recovered at the next start", stopping)
    assert "could not be closed cleanly" in stopping
    for path in disk.glob("full*"):
        path.unlink()
    check_restart(tmp_path, disk, queued)
