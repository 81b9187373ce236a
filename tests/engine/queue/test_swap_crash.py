"""200,000 FlowFiles in a prioritized queue, swapped in and out, survive SIGKILL in order."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.queue import FlowFileQueue
from engine.session import ProcessSession, SessionComponent
from engine.storage import NodeStorage
from tests.engine.queue.swap_child import SETTINGS

REPO_ROOT = Path(__file__).resolve().parents[3]
COUNT = 200_000


def wait_for(path: Path, text: str, timeout: float, child: subprocess.Popen) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text():
            return
        assert child.poll() is None, "the child died on its own"
        time.sleep(0.1)
    raise AssertionError(f"{text!r} did not appear in {path} within {timeout} s")


def read_log(path: Path) -> tuple[set[str], set[str]]:
    """Indexes removed by committed sessions, and those of a session whose commit is in doubt."""
    removed, doubt = set(), set()
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            break  # a line cut by the kill
        if "removing" in entry:
            doubt = set(entry["removing"])
        elif "committed" in entry:
            removed |= doubt
            doubt = set()
    return removed, doubt


@pytest.mark.slow
def test_swapped_queue_keeps_order_and_loses_nothing_across_sigkill(tmp_path):
    data_dir, log = tmp_path / "node", tmp_path / "intent.log"
    child = subprocess.Popen([sys.executable, "-m", "tests.engine.queue.swap_child", str(data_dir), str(log),
                              str(COUNT), "11"], cwd=REPO_ROOT, stderr=subprocess.PIPE)
    try:
        wait_for(log, '"filled"', 240, child)
        wait_for(log, '"committed"', 60, child)
        time.sleep(0.7)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    removed, doubt = read_log(log)
    assert removed, "the child committed nothing before the kill"

    storage = NodeStorage(data_dir)
    storage.open(background=False)
    try:
        recovered = storage.recovered
        assert recovered.swap_files.get("q"), "the crash left swapped FlowFiles to recover"
        queue = FlowFileQueue("q", SETTINGS, swapper=storage.flowfiles.swap)
        queue.restore(recovered.queues.get("q", []), recovered.swap_files.get("q", []))
        assert storage.verify().ok
        sink = SessionComponent("sink", "Sink", incoming=[queue], auto_terminated=frozenset({"done"}))
        seen: list[tuple[int, str]] = []
        while True:
            session = ProcessSession(storage, sink)
            batch = session.get_batch(5000)
            if not batch:
                break
            seen += [(int(f.attributes["priority"]), f.attributes["index"]) for f in batch]
            for flowfile in batch:
                session.transfer(flowfile, "done")
            session.commit()
    finally:
        storage.close()
    indexes = [index for _, index in seen]
    assert len(indexes) == len(set(indexes)), "a FlowFile came out twice"
    left = set(indexes)
    expected = {str(i) for i in range(COUNT)} - removed
    assert left == expected or left == expected - doubt, (
        f"{len(expected - left - doubt)} FlowFiles lost, {len(left - expected)} resurrected")
    priorities = [priority for priority, _ in seen]
    assert priorities == sorted(priorities), "FlowFiles did not come out in priority order"
