"""One node per data directory: a second opener — in this process or another — is refused,
naming the holder, before it touches anything; a killed holder leaves no stale lock; inspection
does not take the lock but says who holds it."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys

import pytest

from engine.lock import LOCK_FILE, DataDirectoryInUseError, lock_holder
from engine.storage import NodeStorage
from engine.testing.faults import FaultPlan
from engine.testing.flows import connection, flow, processor

from .node_process import REPO_ROOT, NodeProcess


def tree(path) -> dict[str, tuple[int, int]]:
    """Every file and directory under ``path``, with its size and modification time."""
    found = {}
    for root, directories, files in os.walk(path):
        for name in directories + files:
            stat = os.stat(os.path.join(root, name))
            found[os.path.relpath(os.path.join(root, name), path)] = (stat.st_size, stat.st_mtime_ns)
    return found


def test_a_second_storage_in_the_same_process_is_refused_before_touching_anything(tmp_path):
    data_dir = tmp_path / "node"
    first = NodeStorage(data_dir, node="first")
    first.open(background=False)
    record = json.loads((data_dir / LOCK_FILE).read_text())
    assert record["pid"] == os.getpid() and record["host"] == socket.gethostname() and record["node"] == "first"
    before = tree(data_dir)
    with pytest.raises(DataDirectoryInUseError) as refused:
        NodeStorage(data_dir)
    message = str(refused.value)
    assert message.startswith(f"data directory {data_dir} is in use by pid {os.getpid()} on host "
                              f"{socket.gethostname()} (node 'first') since {record['since']}")
    assert message.endswith("; stop that node first")
    assert tree(data_dir) == before
    assert lock_holder(data_dir).pid == os.getpid()
    first.close()
    assert lock_holder(data_dir) is None
    second = NodeStorage(data_dir)
    second.close()


def test_a_holder_that_could_not_record_itself_still_holds_the_directory(tmp_path):
    data_dir = tmp_path / "node"
    with FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write"}, matches=LOCK_FILE).installed():
        first = NodeStorage(data_dir)
    try:
        with pytest.raises(DataDirectoryInUseError, match="in use by another process; stop that node first"):
            NodeStorage(data_dir)
        assert lock_holder(data_dir).pid == os.getpid(), "the kernel's lock table names the holder"
    finally:
        first.close()


def inspect(data_dir) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.inspect", str(data_dir)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)


def test_two_node_processes_over_one_data_directory(tmp_path):
    data_dir, flow_path = tmp_path / "node", tmp_path / "flow.json"
    flow_path.write_text(json.dumps(flow(
        processors=[processor("gen", "GenerateFlowFile", {"File Size": "10 B"}, schedulingPeriod="100 millis"),
                    processor("log", "LogAttribute", state="ENABLED", auto_terminate=["success"])],
        connections=[connection("c", "gen", "log")])))
    first = NodeProcess(tmp_path / "first.log", "--flow", str(flow_path), "--data-dir", str(data_dir))
    try:
        first.wait_for(r": running \S+ from ")
        second = subprocess.run([sys.executable, "-m", "engine", "run", "--flow", str(flow_path), "--data-dir",
                                 str(data_dir)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
        assert second.returncode == 1, second.stderr
        assert second.stderr.startswith(f"error: data directory {data_dir} is in use by pid {first.pid} on host "
                                         f"{socket.gethostname()} (node 'node') since ")
        assert second.stderr.rstrip().endswith("; stop that node first") and "Traceback" not in second.stderr
        report = inspect(data_dir)
        assert f"In use by pid {first.pid} on host" in report.stdout, report.stdout + report.stderr
    finally:
        first.kill()  # SIGKILL: the kernel releases the lock with the process
    assert "In use" not in inspect(data_dir).stdout
    again = NodeProcess(tmp_path / "again.log", "--data-dir", str(data_dir))
    try:
        again.wait_for(r": running \S+ from ")
    finally:
        assert again.stop(signal.SIGTERM) == 0, again.output()
    assert "stopped cleanly" in again.output()
