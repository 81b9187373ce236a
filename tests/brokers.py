"""Message brokers for the tests: a private RabbitMQ node and a private Mosquitto, each on free
ports with every file in a directory of the test's own."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from pathlib import Path

from tests.servers import free_port, stop_process

RABBITMQ_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"  # the /usr/sbin wrapper switches to user rabbitmq
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"  # /usr/sbin is not on every user's PATH
USER, PASSWORD = "flowsite", "secret-pw"


def _wait_for_port(port: int, process: subprocess.Popen, what: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{what} did not listen on {port} within {timeout} s:\n{log.read_text()[-3000:]}")


class RabbitMQServer:
    """A RabbitMQ node of the test's own (its own epmd too); ``start`` again after ``stop`` keeps
    its queues and messages. User ``flowsite`` may do anything on virtual host '/'. With ``tls``
    (a CA file, and a PEM file holding the server's key and certificate) it also listens with TLS
    on ``tls_port``, where a client may also log in with its certificate (SASL EXTERNAL, the
    certificate's common name being the user name)."""

    def __init__(self, directory: Path, tls: tuple[str, str] | None = None) -> None:
        self.directory = directory
        self.port = free_port()
        self.tls = tls
        self.tls_port = free_port() if tls else None
        self.dist_port = free_port()
        self.epmd_port = free_port()
        self.name = f"flowsite{self.port}@localhost"
        self.process: subprocess.Popen | None = None

    @property
    def env(self) -> dict[str, str]:
        d = self.directory
        return {**os.environ, "HOME": str(d), "RABBITMQ_NODE_PORT": str(self.port), "RABBITMQ_NODENAME": self.name,
                "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1", "RABBITMQ_DIST_PORT": str(self.dist_port),
                "ERL_EPMD_PORT": str(self.epmd_port), "ERL_EPMD_ADDRESS": "127.0.0.1",
                "RABBITMQ_MNESIA_BASE": str(d / "mnesia"), "RABBITMQ_LOG_BASE": str(d / "log"),
                "RABBITMQ_CONFIG_FILE": str(d / "rabbitmq"), "RABBITMQ_ENABLED_PLUGINS_FILE": str(d / "plugins"),
                "RABBITMQ_PID_FILE": str(d / "pid"), "RABBITMQ_ADVANCED_CONFIG_FILE": str(d / "advanced.config")}

    def start(self, timeout: float = 90) -> None:
        d = self.directory
        d.mkdir(parents=True, exist_ok=True)
        (d / "rabbitmq.conf").write_text(
            f"listeners.tcp.default = 127.0.0.1:{self.port}\nloopback_users = none\n"
            f"default_user = {USER}\ndefault_pass = {PASSWORD}\n"
            + (f"listeners.ssl.default = 127.0.0.1:{self.tls_port}\nssl_options.cacertfile = {self.tls[0]}\n"
               f"ssl_options.certfile = {self.tls[1]}\nssl_options.keyfile = {self.tls[1]}\n"
               "ssl_options.verify = verify_peer\nssl_options.fail_if_no_peer_cert = false\n"
               "auth_mechanisms.1 = PLAIN\nauth_mechanisms.2 = AMQPLAIN\nauth_mechanisms.3 = EXTERNAL\n"
               "ssl_cert_login_from = common_name\n" if self.tls else ""))
        (d / "plugins").write_text("[rabbitmq_auth_mechanism_ssl].\n" if self.tls else "[].\n")
        log = d / "server.log"
        self.process = subprocess.Popen([RABBITMQ_SERVER], env=self.env, cwd=d, stdout=open(log, "ab"),
                                        stderr=subprocess.STDOUT, start_new_session=True)
        _wait_for_port(self.port, self.process, "rabbitmq-server", log, timeout)
        self._wait_until_ready(timeout)

    def _wait_until_ready(self, timeout: float) -> None:
        import pika

        deadline = time.monotonic() + timeout
        while True:
            try:
                pika.BlockingConnection(self.parameters()).close()
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)

    def parameters(self):
        import pika

        return pika.ConnectionParameters("127.0.0.1", self.port, credentials=pika.PlainCredentials(USER, PASSWORD),
                                         connection_attempts=1, socket_timeout=5)

    def connection(self):
        """A pika BlockingConnection for the test's own use."""
        import pika

        return pika.BlockingConnection(self.parameters())

    def ctl(self, *args: str) -> str:
        """rabbitmqctl against this node."""
        return subprocess.run(["/usr/lib/rabbitmq/bin/rabbitmqctl", "-n", self.name, *args], env=self.env,
                              capture_output=True, text=True, timeout=60, check=True).stdout

    def queue_counts(self, queue: str) -> tuple[int, int]:
        """(ready, unacknowledged) messages of ``queue``, as the broker counts them."""
        out = self.ctl("list_queues", "-q", "--no-table-headers", "name", "messages_ready", "messages_unacknowledged")
        for line in out.splitlines():
            name, ready, unacked = line.split()
            if name == queue:
                return int(ready), int(unacked)
        raise KeyError(queue)

    def stop(self) -> None:
        stop_process(self.process, timeout=30)
        self.process = None

    def close(self) -> None:
        """Stop the node and the epmd it started."""
        self.stop()
        subprocess.run(["epmd", "-port", str(self.epmd_port), "-kill"], capture_output=True, timeout=10)


class MosquittoServer:
    """A mosquitto of the test's own, anonymous, with persistence in its directory (so a restart
    keeps persistent sessions and their queued messages). With ``tls`` (a CA file, and a PEM file
    holding the server's key and certificate) it also listens with TLS on ``tls_port`` and
    requires a client certificate signed by that CA."""

    def __init__(self, directory: Path, tls: tuple[str, str] | None = None) -> None:
        self.directory = directory
        self.port = free_port()
        self.tls = tls
        self.tls_port = free_port() if tls else None
        self.process: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def start(self) -> None:
        d = self.directory
        d.mkdir(parents=True, exist_ok=True)
        (d / "mosquitto.conf").write_text(
            # user: as root mosquitto would switch to user mosquitto, who cannot write the directory
            f"user {pwd.getpwuid(os.getuid()).pw_name}\n"
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location {d}/\n"
            "autosave_interval 1\nmax_queued_messages 10000\n"
            + (f"listener {self.tls_port} 127.0.0.1\ncafile {self.tls[0]}\ncertfile {self.tls[1]}\n"
               f"keyfile {self.tls[1]}\nrequire_certificate true\n" if self.tls else ""))
        log = d / "mosquitto.log"
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(d / "mosquitto.conf")], stdout=open(log, "ab"),
                                        stderr=subprocess.STDOUT)
        _wait_for_port(self.port, self.process, "mosquitto", log, 10)

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None
