"""Real servers for the tests: a free TCP port, and a private redis-server process."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import time
from pathlib import Path


def stop_process(process: subprocess.Popen | None, timeout: float = 10) -> None:
    """Terminate ``process`` (if still running), killing it when it outlives ``timeout`` seconds."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


_handed_out: set[int] = set()
# Under pytest-xdist each worker process takes its own residue class of ports, so two workers
# never hand out the same one (each only remembers its own).
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))


def _first_ephemeral_port() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A TCP port nothing is bound to right now, below the kernel's ephemeral range.

    A port the kernel hands out for ``bind(0)`` comes from the range it also takes the local
    ports of outgoing connections from, so in a suite full of clients another process's
    connection could take it before the test's server binds it (EADDRINUSE). Ports below that
    range are only ever taken by a bind, and this process never hands out the same one twice.
    """
    limit = max(_first_ephemeral_port(), 10000 + _WORKERS)
    for _ in range(1000):
        port = random.randrange(10000 + _WORKER, limit, _WORKERS)
        if port in _handed_out:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("0.0.0.0", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError("no free TCP port below the ephemeral range after 1,000 tries")


class RedisServer:
    """A redis-server process of the test's own."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        self.directory = directory
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, *extra: str) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.directory), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}")
            if self.ping():
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("redis-server did not answer PING within 10 s")

    def ping(self, password: str | None = None) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                command = b"PING\r\n" if password is None else f"AUTH {password}\r\nPING\r\n".encode()
                sock.sendall(command)
                reply = sock.recv(100)
                return b"+PONG" in reply or b"NOAUTH" in reply or b"+OK" in reply
        except OSError:
            return False

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None
