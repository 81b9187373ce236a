"""TailFile in a real node that is stopped and SIGKILLed again and again while a writer appends
lines to a log file and rolls it over: every line reaches the output exactly once, whole.

The flow tails the log (with its rolling filename pattern), names each FlowFile after its UUID
(UpdateAttribute) and writes it out (PutFile, replacing: writing the same FlowFile twice after a
crash leaves one file). A line ingested twice by TailFile would be in two FlowFiles, so in two
output files; a line missed would be in none.
"""

from __future__ import annotations

import collections
import json
import os
import random
import signal
import threading
import time
from pathlib import Path

import pytest

from engine.testing.flows import connection, flow, processor
from tests.engine.node_process import NodeProcess

SEED = int(os.environ.get("CRASH_SEED", "20261128"))
LINES = 4000
LINES_PER_FILE = 150
RESTARTS = 7


def write_flow(path: Path, log: Path, outputs: Path) -> None:
    document = flow(
        processors=[
            processor("tail", "TailFile", {"Files to Tail": str(log), "Rolling Filename Pattern": "${filename}.log.*",
                                           "Initial Start Position": "Beginning of Time"},
                      schedulingPeriod="50 millis"),
            processor("name", "UpdateAttribute", {"filename": "${uuid}"}),
            processor("put", "PutFile", {"Directory": str(outputs), "Conflict Resolution Strategy": "replace"},
                      auto_terminate=["success"]),
        ],
        connections=[connection("tailed", "tail", "name"), connection("named", "name", "put"),
                     connection("retry", "put", "put", ["failure"])],
    )
    path.write_text(json.dumps(document))


class Writer(threading.Thread):
    """Appends numbered lines to ``log`` (one write each) and rolls it over every
    ``LINES_PER_FILE`` lines by renaming it to ``app.log.<n>`` and starting a new one."""

    def __init__(self, log: Path, rng: random.Random) -> None:
        super().__init__(daemon=True)
        self.log, self.rng, self.error = log, rng, None

    def run(self) -> None:
        try:
            rolled = 0
            handle = open(self.log, "ab")
            for number in range(LINES):
                if number and number % LINES_PER_FILE == 0:
                    handle.close()
                    rolled += 1
                    self.log.rename(self.log.with_name(f"app.log.{rolled:05d}"))
                    handle = open(self.log, "ab")
                handle.write(f"line {number:06d} {'x' * self.rng.randrange(0, 120)}\n".encode())
                handle.flush()
                time.sleep(0.003)
            handle.close()
        except BaseException as error:  # noqa: BLE001 - reported by the test
            self.error = error


def received_lines(outputs: Path) -> collections.Counter:
    lines: collections.Counter = collections.Counter()
    for path in outputs.iterdir() if outputs.is_dir() else ():
        if path.name.startswith("."):
            continue
        data = path.read_bytes()
        assert data.endswith(b"\n"), f"{path.name} ends in the middle of a line: {data[-40:]!r}"
        lines.update(line.split(b" ")[1].decode() for line in data.splitlines())
    return lines


@pytest.mark.slow
def test_every_line_arrives_exactly_once_across_restarts_and_kills(tmp_path):
    rng = random.Random(SEED)
    logs, outputs, data_dir = tmp_path / "logs", tmp_path / "out", tmp_path / "node"
    logs.mkdir()
    log = logs / "app.log"
    flow_file = tmp_path / "flow.json"
    write_flow(flow_file, log, outputs)
    writer = Writer(log, rng)
    node = NodeProcess(tmp_path / "node-0.log", "--flow", str(flow_file), "--data-dir", str(data_dir))
    node.wait_for(r": running \S+ from ")
    writer.start()
    for restart in range(1, RESTARTS + 1):
        time.sleep(rng.uniform(0.8, 2.0))
        if restart % 3 == 0:
            node.wait_for(r": running \S+ from ")  # a clean stop, once the node has started
            assert node.stop(signal.SIGTERM) == 0, node.output()[-3000:]
        else:
            node.kill()
        node = NodeProcess(tmp_path / f"node-{restart}.log", "--flow", str(flow_file), "--data-dir", str(data_dir))
    writer.join(120)
    assert writer.error is None, writer.error
    assert log.with_name("app.log.00001").exists(), "the writer rolled the file over"
    expected = {f"{number:06d}" for number in range(LINES)}
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and set(received_lines(outputs)) != expected:
            time.sleep(0.3)
        time.sleep(1.0)  # anything read twice would arrive by now
    finally:
        node.wait_for(r": running \S+ from ")  # SIGTERM stops a node cleanly once it has started
        assert node.stop(signal.SIGTERM) == 0, node.output()[-3000:]
    received = received_lines(outputs)
    missing = sorted(expected - set(received))
    assert not missing, f"{len(missing)} line(s) never arrived, first {missing[:5]}"
    twice = sorted(line for line, count in received.items() if count > 1)
    assert not twice, f"{len(twice)} line(s) arrived more than once, first {twice[:5]}"
