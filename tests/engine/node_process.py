"""A real ``python -m engine run`` process for tests, its output kept in a log file."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


class NodeProcess:
    """``python -m engine run ARGS``, logging to ``log_path`` (outside the data directory, so a
    full disk there does not silence it)."""

    def __init__(self, log_path: Path, *args: str) -> None:
        self.log_path = log_path
        self._log = open(log_path, "w")
        self.process = subprocess.Popen([sys.executable, "-m", "engine", "run", *args], cwd=REPO_ROOT,
                                        stdout=self._log, stderr=subprocess.STDOUT, text=True)

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return self.log_path.read_text()

    def wait_for(self, pattern: str, timeout: float = 60, after: int = 0) -> re.Match:
        """The first match of ``pattern`` in the output past offset ``after``, waiting for it."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.output()[after:])
            if found:
                return found
            if self.process.poll() is not None:
                raise AssertionError(f"the node exited ({self.process.returncode}) before logging {pattern!r}:\n"
                                     + self.output()[-4000:])
            if time.monotonic() > deadline:
                raise AssertionError(f"no {pattern!r} within {timeout} s:\n" + self.output()[-4000:])
            time.sleep(0.1)

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 60) -> int:
        """Send ``signum`` and wait for the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            return self.process.wait(timeout)
        finally:
            self._log.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._log.close()
