"""``manage.py cluster_pki`` run as the operator runs it: create the CA, issue node certificates,
copy them to the nodes, revoke one; and the settings a node reads its identity from."""

from __future__ import annotations

import shutil
import stat
import subprocess

import pytest

from engine.cluster.identity import IdentityRefused, NodeIdentity, TrustStore
from tests.flowsite.deployment import REPO_ROOT, run_django

DATA = b"a batch's digest"


def pki(directory, *args: str) -> subprocess.CompletedProcess:
    return run_django(["manage.py", "cluster_pki", *args], {"FLOWSITE_CLUSTER_PKI_DIR": str(directory)})


def ok(directory, *args: str) -> str:
    result = pki(directory, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_init_issue_copy_and_revoke_as_an_operator_does(tmp_path):
    directory = tmp_path / "pki"
    out = ok(directory, "init")
    assert f"{directory / 'ca.pem'}  the CA certificate: copy it to every node" in out
    assert "never copy it to a node" in out
    nodes = {}
    for node in ("node-1", "node-2"):
        out = ok(directory, "issue", node)
        assert f"{directory / 'nodes' / node}.pem  copy to node {node} (FLOWSITE_NODE_CERT_FILE)" in out
        assert f"{directory / 'nodes' / node}.key  copy to node {node} only, keeping mode 0600" in out
        # The operator copies the node's files, the CA certificate and the list to the node.
        home = tmp_path / node
        home.mkdir()
        for name in (f"nodes/{node}.pem", f"nodes/{node}.key", "ca.pem", "crl.pem"):
            shutil.copy2(directory / name, home)
        assert stat.S_IMODE((home / f"{node}.key").stat().st_mode) == 0o600
        nodes[node] = (NodeIdentity.load(home / f"{node}.pem", home / f"{node}.key"),
                       TrustStore(home / "ca.pem", home / "crl.pem", check_interval=0))
    sender, _ = nodes["node-1"]
    _, receiver = nodes["node-2"]
    receiver.verify("node-1", sender.certificate_der, DATA, sender.sign(DATA))

    out = ok(directory, "revoke", "node-1")
    assert f"copy {directory / 'crl.pem'} to every node" in out
    shutil.copy(directory / "crl.pem", tmp_path / "node-2")
    with pytest.raises(IdentityRefused, match="revoked"):
        receiver.verify("node-1", sender.certificate_der, DATA, sender.sign(DATA))
    listing = ok(directory, "list").splitlines()
    assert [line.split()[0] for line in listing] == ["node-1", "node-2"]
    assert listing[0].endswith("revoked") and "valid until" in listing[1]


def test_the_command_refuses_what_would_lose_or_confuse_certificates(tmp_path):
    directory = tmp_path / "pki"
    result = pki(directory, "issue", "node-1")
    assert result.returncode == 1 and "holds no cluster CA" in result.stderr and "cluster_pki init" in result.stderr
    ok(directory, "init")
    result = pki(directory, "init")
    assert result.returncode == 1 and "holds a cluster CA already" in result.stderr
    ok(directory, "issue", "node-1")
    result = pki(directory, "issue", "node-1")
    assert result.returncode == 1 and "has a certificate already" in result.stderr and "--force" in result.stderr
    out = ok(directory, "issue", "node-1", "--force")
    assert "revoked the previous certificate of node-1" in out
    result = pki(directory, "revoke", "node-9")
    assert result.returncode == 1 and "has no certificate here" in result.stderr
    result = pki(directory, "issue", "../etc/passwd")
    assert result.returncode == 2 and "is not a node id" in result.stderr
    assert sorted(p.name for p in (directory / "nodes").iterdir()) == ["node-1.key", "node-1.pem"]


def test_dir_overrides_the_setting_and_a_damaged_ca_key_is_named(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    ok(tmp_path / "unused", "--dir", str(elsewhere), "init")
    assert (elsewhere / "ca.pem").exists() and not (tmp_path / "unused").exists()
    (elsewhere / "ca.key").write_text("-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----\n")
    result = pki(elsewhere, "issue", "node-1")
    assert result.returncode == 1
    assert f"{elsewhere / 'ca.key'}: damaged" in result.stderr and "restore it from the backup" in result.stderr


SHOW = ("import os, django; os.environ['DJANGO_SETTINGS_MODULE'] = 'flowsite.settings'; django.setup()\n"
        "from django.conf import settings\n"
        "print(settings.CELERY_BROKER_URL); print(settings.FLOWSITE_NODE_CERT_FILE)\n")


def test_settings_keep_rediss_options_in_the_broker_url_and_take_the_node_files(tmp_path):
    url = "rediss://redis.example:6380/0?ssl_ca_certs=/etc/flowsite/ca.pem&ssl_cert_reqs=required"
    result = run_django(["-c", SHOW], {"REDIS_URL": url, "FLOWSITE_NODE_CERT_FILE": "/etc/flowsite/node.pem",
                                       "FLOWSITE_NODE_KEY_FILE": "/etc/flowsite/node.key"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "rediss://redis.example:6380/1?ssl_ca_certs=/etc/flowsite/ca.pem&ssl_cert_reqs=required",
        "/etc/flowsite/node.pem"]
    result = run_django(["-c", SHOW], {"FLOWSITE_NODE_CERT_FILE": "/etc/flowsite/node.pem"})
    assert result.returncode != 0
    assert "set both FLOWSITE_NODE_CERT_FILE and FLOWSITE_NODE_KEY_FILE, or neither" in result.stderr


def test_the_command_is_documented():
    text = (REPO_ROOT / "docs" / "security.md").read_text()
    assert "manage.py cluster_pki init" in text and "rediss://" in text
