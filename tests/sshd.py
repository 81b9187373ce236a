"""A real OpenSSH server for the SFTP tests: /usr/sbin/sshd on a free port, with its own config,
host key and authorized_keys in a temporary directory, logging in the user running the tests
with a key."""

from __future__ import annotations

import getpass
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.servers import free_port, stop_process

SSHD = "/usr/sbin/sshd"


class SshServer:
    """An sshd process of the test's own, serving SFTP (internal-sftp) to the running user."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        self.directory = directory
        self.port = port or free_port()
        self.user = getpass.getuser()
        self.home = Path(pwd.getpwnam(self.user).pw_dir)
        self.process: subprocess.Popen | None = None
        self.client_key = directory / "id_ed25519"
        self.host_key = directory / "ssh_host_ed25519_key"
        self.known_hosts = directory / "known_hosts"

    def prepare(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        os.chmod(self.directory, 0o700)
        if not self.host_key.exists():
            _keygen(self.host_key)
            _keygen(self.client_key)
        # sshd reads authorized_keys as the user logging in: keep it where 'nobody' can too.
        self.keys = Path(tempfile.mkdtemp(prefix="sshd-keys-"))
        os.chmod(self.keys, 0o755)
        (self.keys / "authorized_keys").write_text(Path(f"{self.client_key}.pub").read_text())
        os.chmod(self.keys / "authorized_keys", 0o644)
        host_public = Path(f"{self.host_key}.pub").read_text().split()
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {host_public[0]} {host_public[1]}\n")

    def start(self) -> None:
        self.prepare()
        # sshd insists on its privilege separation directory (the Debian service creates it at boot).
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        config = self.directory / "sshd_config"
        config.write_text("\n".join([
            f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {self.host_key}",
            f"AuthorizedKeysFile {self.keys}/authorized_keys", f"PidFile {self.directory}/sshd.pid",
            "PubkeyAuthentication yes", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "UsePAM no", "PermitRootLogin yes", "StrictModes no",
            "Subsystem sftp internal-sftp", "LogLevel INFO", ""]))
        with open(self.directory / "sshd.log", "a") as log:
            self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL,
                                            stderr=log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"sshd exited with {self.process.returncode}: "
                                   + (self.directory / "sshd.log").read_text()[-2000:])
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    if sock.recv(4).startswith(b"SSH-"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("sshd did not answer within 10 s")

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None
        shutil.rmtree(self.keys, ignore_errors=True)

    def authorize(self, key: Path, passphrase: str = "", kind: str = "ed25519") -> Path:
        """Make a new ``kind`` key pair at ``key`` (protected by ``passphrase``) that may log in too."""
        _keygen(key, passphrase, kind)
        with open(self.keys / "authorized_keys", "a") as authorized:
            authorized.write(Path(f"{key}.pub").read_text())
        return key

    def logins(self) -> int:
        """How many logins the server accepted so far."""
        return (self.directory / "sshd.log").read_text().count("Accepted publickey")

    def properties(self, **extra: str) -> dict[str, str]:
        """The connection properties of an SFTP processor logging in with the key."""
        return {"Hostname": "127.0.0.1", "Port": str(self.port), "Username": self.user,
                "Private Key Path": str(self.client_key), **extra}


def _keygen(path: Path, passphrase: str = "", kind: str = "ed25519") -> None:
    subprocess.run([shutil.which("ssh-keygen") or "ssh-keygen", "-q", "-t", kind, "-N", passphrase, "-f", str(path)],
                   check=True)


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    """An sshd serving the tests of one module."""
    server = SshServer(tmp_path_factory.mktemp("sshd"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def world(tmp_path_factory):
    """A directory every user may enter (tmp_path is private to root), for logins as nobody."""
    directory = Path(tempfile.mkdtemp(prefix="sftp-world-"))
    os.chmod(directory, 0o777)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)
