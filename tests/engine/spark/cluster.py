"""Spark servers started by the tests from pyspark's own distribution: a standalone master with
one worker (``spark_cluster``), and a Spark Connect server (``spark_connect_server``).

Each server runs in its own process group, killed whole at teardown (the worker's executors with
it). The JVMs are kept small: the machine running the tests is shared. Use the fixtures from any
test module (``from tests.engine.spark.cluster import spark_cluster``), or the context managers
``standalone_cluster`` / ``connect_server`` directly.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from tests.servers import free_port

__all__ = ["SPARK_HOME", "ConnectServer", "SparkServer", "StandaloneCluster", "connect_server",
           "spark_cluster", "spark_connect_server", "standalone_cluster"]


def _spark_home() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    assert spec is not None and spec.origin, "pyspark is not installed"
    return Path(spec.origin).parent


#: pyspark's own Spark distribution (bin/spark-class, bin/spark-submit, jars/).
SPARK_HOME = _spark_home()


class SparkServer:
    """One JVM started with ``args``, in its own process group, its output in ``log``."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str]) -> None:
        self.log = log
        self._output = open(log, "wb")
        self.process = subprocess.Popen(args, stdout=self._output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        env=env, start_new_session=True)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL the whole process group (the worker's executors too) and wait."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=30)
        self._output.close()


def _environment(work: Path) -> dict[str, str]:
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_DAEMON_MEMORY": "256m",
           "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_WORKER_DIR": str(work / "worker"),
           "SPARK_LOCAL_DIRS": str(work / "local"), "PYSPARK_PYTHON": sys.executable}
    for name in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "PYSPARK_SUBMIT_ARGS", "SPARK_CONF_DIR"):
        env.pop(name, None)
    return env


def _wait_for(condition, timeout: float, what: str, servers: list[SparkServer]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for server in servers:
            if not server.alive:
                raise AssertionError(f"{what}: a server exited:\n{server.output()[-4000:]}")
        with contextlib.suppress(OSError, ValueError):
            if condition():
                return
        time.sleep(0.2)
    raise AssertionError(f"{what} did not happen within {timeout} s:\n"
                         + "\n".join(server.output()[-3000:] for server in servers))


def _listening(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


@dataclass
class StandaloneCluster:
    """A standalone master (``url``, its web UI at ``ui_url``) and its worker."""

    url: str
    ui_url: str
    master: SparkServer
    worker: SparkServer

    def alive_workers(self) -> int:
        with urllib.request.urlopen(self.ui_url + "/json/", timeout=5) as answer:
            return int(json.load(answer).get("aliveworkers", 0))

    def kill(self) -> None:
        self.worker.kill()
        self.master.kill()


@contextlib.contextmanager
def standalone_cluster(work: Path, cores: int = 1, memory: str = "1g") -> Iterator[StandaloneCluster]:
    """A master on 127.0.0.1 and one worker of ``cores`` and ``memory``, started from pyspark's
    distribution, ready (the worker registered) on entry, killed on exit. ``work`` holds their
    logs and the worker's directory."""
    work.mkdir(parents=True, exist_ok=True)
    env = _environment(work)
    port, ui_port, worker_ui_port = free_port(), free_port(), free_port()
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    master = SparkServer([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                          "--port", str(port), "--webui-port", str(ui_port)], work / "master.log", env)
    url = f"spark://127.0.0.1:{port}"
    servers = [master]
    try:
        _wait_for(lambda: _listening(port), 90, "the Spark master listening", servers)
        worker = SparkServer([spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                              "--cores", str(cores), "--memory", memory, "--webui-port", str(worker_ui_port),
                              "--work-dir", str(work / "worker")], work / "worker.log", env)
        servers.append(worker)
        cluster = StandaloneCluster(url, f"http://127.0.0.1:{ui_port}", master, worker)
        _wait_for(lambda: cluster.alive_workers() >= 1, 90, "the Spark worker registering", servers)
        yield cluster
    finally:
        for server in reversed(servers):
            server.kill()


@dataclass
class ConnectServer:
    """A Spark Connect server (``url`` is ``sc://127.0.0.1:<port>``)."""

    url: str
    port: int
    server: SparkServer

    def kill(self) -> None:
        self.server.kill()


@contextlib.contextmanager
def connect_server(work: Path, master: str = "local[1]", port: int | None = None) -> Iterator[ConnectServer]:
    """A Spark Connect server over ``master``, started with pyspark's ``spark-submit``, listening
    on 127.0.0.1 (``port``, or a free one) on entry, killed on exit."""
    work.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    args = [str(SPARK_HOME / "bin" / "spark-submit"), "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
            "--name", "Spark Connect server (tests)", "--master", master, "--driver-memory", "512m",
            "--conf", f"spark.connect.grpc.binding.port={port}",
            "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
            "--conf", f"spark.local.dir={work / 'local'}"]
    env = _environment(work)
    del env["SPARK_DAEMON_MEMORY"]  # spark-class would give the server's driver this heap
    server = SparkServer(args, work / "connect.log", env)
    try:
        _wait_for(lambda: _listening(port), 120, "the Spark Connect server listening", [server])
        yield ConnectServer(f"sc://127.0.0.1:{port}", port, server)
    finally:
        server.kill()


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory) -> Iterator[StandaloneCluster]:
    """A standalone master and one worker (1 core, 1 GiB) for the whole test session."""
    with standalone_cluster(tmp_path_factory.mktemp("spark-cluster")) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def spark_connect_server(tmp_path_factory) -> Iterator[ConnectServer]:
    """A Spark Connect server (local[1] inside) for the whole test session."""
    with connect_server(tmp_path_factory.mktemp("spark-connect")) as server:
        yield server
