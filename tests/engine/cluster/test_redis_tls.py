"""Redis over TLS: a node's cluster agent joins, heartbeats, holds its roles and answers commands
through a ``rediss://`` URL (its TLS options in the query) to a real redis-server that speaks only
TLS; a client that does not trust the server's CA, or speaks plain Redis, gets nowhere."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import redis
from cryptography.hazmat.primitives import serialization

from engine.cluster.agent import ClusterAgent
from engine.cluster.bundle import EMPTY_FLOW
from engine.cluster.bus import CommandBus
from engine.cluster.config import ClusterConfig
from engine.cluster.keys import ClusterKeys
from engine.cluster.records import ClusterView
from engine.cluster.signing import CommandSigner
from engine.cluster.state import ClusterStateProvider
from engine.node import FLOW_FILE, StandaloneNode, save_flow
from engine.runtime.connectable import NodeRole
from engine.runtime.state import LocalStateProvider
from tests.engine.pki import Identity, make_ca, make_leaf, write_pem_truststore
from tests.servers import free_port

SIGNER = CommandSigner("tls-test-cluster-key")


def _write_identity(identity: Identity, certificate: Path, key: Path) -> None:
    certificate.write_bytes(identity.certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(identity.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
    key.chmod(0o600)


class TlsRedis:
    """A redis-server listening only on a TLS port, with its certificates in ``directory``."""

    def __init__(self, directory: Path, *, client_certificates: bool) -> None:
        directory.mkdir(parents=True)
        self.directory = directory
        self.port = free_port()
        ca = make_ca()
        _write_identity(make_leaf(ca, "localhost", server=True), directory / "server.pem", directory / "server.key")
        _write_identity(make_leaf(ca, "node-1", server=False), directory / "client.pem", directory / "client.key")
        self.ca_file = write_pem_truststore(directory / "ca.pem", ca.certificate)
        self.other_ca_file = write_pem_truststore(directory / "other-ca.pem", make_ca("Another CA").certificate)
        self.process = subprocess.Popen(
            ["redis-server", "--port", "0", "--tls-port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(directory),
             "--tls-cert-file", str(directory / "server.pem"), "--tls-key-file", str(directory / "server.key"),
             "--tls-ca-cert-file", str(self.ca_file),
             "--tls-auth-clients", "yes" if client_certificates else "no"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def url(self, ca_file: Path | None = None, *, client_certificate: bool = False) -> str:
        url = (f"rediss://127.0.0.1:{self.port}/0?ssl_ca_certs={ca_file or self.ca_file}&ssl_cert_reqs=required"
               "&ssl_check_hostname=true")
        if client_certificate:
            url += f"&ssl_certfile={self.directory / 'client.pem'}&ssl_keyfile={self.directory / 'client.key'}"
        return url

    def wait(self, url: str) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                output = self.process.stdout.read().decode(errors="replace")
                if "TLS" in output and ("not supported" in output or "Bad directive" in output):
                    pytest.skip(f"this redis-server is built without TLS support: {output.strip()[-300:]}")
                raise RuntimeError(f"redis-server exited with {self.process.returncode}: {output[-2000:]}")
            try:
                with redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1) as client:
                    client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not answer over TLS within 10 s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(params=[False, True], ids=["server-certificate", "mutual-tls"])
def tls_redis(request, tmp_path):
    if shutil.which("redis-server") is None:
        pytest.fail("the redis-server binary is not installed (scripts/test installs it: apt-get install redis-server)")
    server = TlsRedis(tmp_path / "redis", client_certificates=request.param)
    server.client_certificate = request.param
    try:
        server.wait(server.url(client_certificate=request.param))
        yield server
    finally:
        server.stop()


def test_a_node_joins_heartbeats_and_answers_commands_over_tls(tls_redis, tmp_path):
    url = tls_redis.url(client_certificate=tls_redis.client_certificate)
    keys = ClusterKeys(f"tls{uuid.uuid4().hex[:8]}")
    role = NodeRole(clustered=False, primary=True)
    state = ClusterStateProvider(LocalStateProvider(tmp_path / "node" / "state" / "local"), keys)
    (tmp_path / "node").mkdir()
    save_flow(tmp_path / "node" / FLOW_FILE, EMPTY_FLOW)
    node = StandaloneNode(tmp_path / "node", role=role, cluster_state=state, name="node-1")
    node.load_flow(None, {})
    config = ClusterConfig(heartbeat_interval=0.5, election_max_wait=0.5)
    agent = ClusterAgent(node, "node-1", url, keys, config, role, state, SIGNER,
                         lambda listener, _node: listener.register("echo", lambda command: command.args))
    client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
    try:
        assert agent.connect()
        node.start()
        agent.start()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            view = ClusterView(client, keys).nodes.get("node-1")
            if view is not None and view.heartbeat is not None and "coordinator" in view.roles:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"no heartbeat and coordinator role over TLS: {ClusterView(client, keys).nodes}")
        replies = CommandBus(client, keys, SIGNER).request(["node-1"], "echo", {"over": "tls"}, timeout=10)
        assert replies["node-1"].ok and replies["node-1"].result == {"over": "tls"}
    finally:
        agent.stop()
        node.stop()
        client.close()


def test_a_client_that_does_not_trust_the_servers_ca_or_speaks_plain_redis_is_refused(tls_redis):
    untrusting = redis.Redis.from_url(tls_redis.url(tls_redis.other_ca_file,
                                                    client_certificate=tls_redis.client_certificate),
                                      socket_timeout=2, socket_connect_timeout=2)
    with pytest.raises(redis.ConnectionError, match="certificate verify failed"):
        untrusting.ping()
    plain = redis.Redis.from_url(f"redis://127.0.0.1:{tls_redis.port}/0", socket_timeout=2, socket_connect_timeout=2)
    with pytest.raises(redis.ConnectionError):
        plain.ping()
    if tls_redis.client_certificate:
        anonymous = redis.Redis.from_url(tls_redis.url(), socket_timeout=2, socket_connect_timeout=2)
        with pytest.raises(redis.ConnectionError):
            anonymous.ping()
