"""Real processes the tests start, with their output collected, and waiting for what they do."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable

import redis


def wait_until(condition: Callable[[], Any], timeout: float = 60, what: str = "the condition") -> Any:
    """Poll ``condition`` until it returns something true and return that; fail after ``timeout``
    seconds. A Redis that does not answer (yet) counts as not true."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = condition()
        except redis.RedisError:
            value = None
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"{what} did not happen within {timeout} s")


class OutputProcess:
    """A subprocess whose combined stdout and stderr is collected line by line."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_for_output(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output:
            if time.monotonic() > deadline or not self.alive:
                raise AssertionError(f"no {text!r} in the output:\n{self.output}")
            time.sleep(0.05)

    def terminate(self) -> int:
        """SIGTERM (if still running), wait for the exit and return its status."""
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
        try:
            status = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            # SIGABRT: a Python child run with faulthandler on prints every thread's stack first.
            self.process.send_signal(signal.SIGABRT)
            self.process.wait(timeout=30)
            self._reader.join(timeout=10)
            raise AssertionError(f"{' '.join(self.process.args)} did not exit within 60 s of SIGTERM; aborted, "
                                 f"its output ends:\n{''.join(self.lines[-200:])}") from None
        self._reader.join(timeout=10)
        return status

    def kill(self) -> None:
        """SIGKILL: no goodbye, no checkpoint."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
