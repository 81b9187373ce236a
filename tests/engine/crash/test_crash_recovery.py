"""SIGKILL a committing node at random moments; after each restart nothing committed is lost.

A child process (``tests/engine/crash/child.py``) commits sessions with content in a loop and
logs each commit's expected effect before committing and the fact that it committed after.
The test kills it at a random moment, inspects the data directory with the inspection tool,
restarts it, and compares what it recovered with the model built from the log: every
committed transaction present exactly once, nothing of an uncommitted one, and for the one
transaction that may have been cut short, all of it or none. Kill timings and workloads are
seeded (``CRASH_SEED``) so that a failure can be replayed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine import inspect as inspection

REPO_ROOT = Path(__file__).resolve().parents[3]
POLICIES = ("grouped", "always", "os")
KILLS_PER_TEST = 70
BASE_SEED = int(os.environ.get("CRASH_SEED", "20261122"))


class Model:
    """Expected FlowFiles (uuid -> [queue, sha256, attributes]) built from the intent log."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.position = 0
        self.flowfiles: dict[str, list] = {}
        self.committed = 0

    def read_new_entries(self) -> tuple[list[dict], dict | None]:
        """Newly committed intents, and the last intent if its commit is in doubt."""
        data = self.log.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            # A line cut by the kill: the commit it announced never started.
            with open(self.log, "r+b") as handle:
                handle.truncate(end)
        entries = [json.loads(line) for line in data[self.position:end].splitlines()]
        self.position = end
        committed, pending = [], None
        for entry in entries:
            if "committed" in entry:
                assert pending is not None and pending["txn"] == entry["committed"]
                committed.append(pending)
                pending = None
            else:
                assert pending is None, f"intent {pending} was followed by another without committing"
                pending = entry
        return committed, pending

    @staticmethod
    def applied(flowfiles: dict[str, list], intent: dict) -> dict[str, list]:
        result = dict(flowfiles)
        for uuid in intent["dels"]:
            del result[uuid]
        result.update(intent["puts"])
        return result

    def absorb_log(self) -> dict | None:
        """Apply what the stopped child committed; return the intent left in doubt, if any.

        Called only while no child runs, so the log is read whole and quiet.
        """
        committed, pending = self.read_new_entries()
        for intent in committed:
            self.flowfiles = self.applied(self.flowfiles, intent)
            self.committed += 1
        return pending

    def check(self, recovered: dict[str, list], pending: dict | None) -> None:
        """Compare a child's recovered FlowFiles with the model (the in-doubt commit: all or nothing)."""
        if pending is None:
            assert_same(recovered, self.flowfiles)
            return
        with_pending = self.applied(self.flowfiles, pending)
        if recovered == with_pending:
            self.flowfiles = with_pending
            self.committed += 1
        else:
            assert_same(recovered, self.flowfiles, f"in-doubt transaction {pending['txn']} is half applied")


def assert_same(actual: dict, expected: dict, context: str = "") -> None:
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    changed = sorted(u for u in set(actual) & set(expected) if actual[u] != expected[u])
    assert not (missing or extra or changed), (
        f"{context}: {len(missing)} committed FlowFile(s) lost (e.g. {missing[:3]}), "
        f"{len(extra)} unexpected (e.g. {extra[:3]}), {len(changed)} differ "
        f"(e.g. {[(actual[u], expected[u]) for u in changed[:1]]})"
    )


def start_child(data_dir: Path, log: Path, seed: int, policy: str, stderr) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.engine.crash.child", str(data_dir), str(log), str(seed), policy],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )


def run_inspection(data_dir: Path) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = inspection.main([str(data_dir)])
    assert status == 0, out.getvalue()
    return out.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("variant", range(3))
def test_sigkill_at_random_moments_loses_no_committed_transaction(tmp_path, variant):
    seed = BASE_SEED + variant
    rng = random.Random(seed)
    data_dir = tmp_path / "node"
    log = tmp_path / "intents.jsonl"
    log.touch()
    model = Model(log)
    stderr_path = tmp_path / "child.stderr"
    with open(stderr_path, "a") as stderr:
        for kill in range(KILLS_PER_TEST + 1):
            pending = model.absorb_log()
            policy = POLICIES[(kill + variant) % len(POLICIES)]
            child = start_child(data_dir, log, seed * 1000 + kill, policy, stderr)
            try:
                ready = child.stdout.readline().strip()
                assert ready == "READY", f"child did not start (seed {seed}, kill {kill}): {stderr_path.read_text()[-3000:]}"
                state = json.loads((tmp_path / "recovered.json").read_text())
                assert state["problems"] == [], f"after kill {kill} (seed {seed}): {state['problems'][:5]}"
                model.check(state["flowfiles"], pending)
                if kill == KILLS_PER_TEST:
                    break
                time.sleep(rng.uniform(0.0, 0.35))
                assert child.poll() is None, f"child died on its own: {stderr_path.read_text()[-3000:]}"
            finally:
                child.kill()
                child.wait()
            run_inspection(data_dir)
    assert model.committed > KILLS_PER_TEST, "the workload committed too little for the test to mean much"
