"""Node identity: a receiver accepts what a node of its cluster signed, and refuses, saying why, a
forged signature, another CA's certificate, one node's certificate presented as another's, a
revoked certificate (as soon as the new revocation list arrives) and an expired one."""

from __future__ import annotations

import datetime
import shutil
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import NameOID

from engine.cluster.authority import ClusterAuthority
from engine.cluster.identity import NODE_URI_SCHEME, IdentityError, IdentityRefused, NodeIdentity, TrustStore, \
    read_private_key

DATA = b"digest of a batch: header, contents and end entries"


@pytest.fixture
def authority(tmp_path):
    return ClusterAuthority.create(tmp_path / "pki")


@pytest.fixture
def node_dir(tmp_path, authority):
    """A node's copies of the CA certificate and revocation list, as an operator would place them."""
    directory = tmp_path / "node"
    directory.mkdir()
    shutil.copy(authority.certificate_file, directory / "ca.pem")
    shutil.copy(authority.crl_file, directory / "crl.pem")
    return directory


def identity(authority, node_id) -> NodeIdentity:
    issued = authority.issue(node_id)
    return NodeIdentity.load(issued.certificate_file, issued.key_file)


def store(node_dir) -> TrustStore:
    return TrustStore(node_dir / "ca.pem", node_dir / "crl.pem", check_interval=0)


def refused(trust: TrustStore, *args) -> IdentityRefused:
    with pytest.raises(IdentityRefused) as raised:
        trust.verify(*args)
    return raised.value


def test_a_signature_of_a_node_of_the_cluster_is_accepted(authority, node_dir):
    node = identity(authority, "node-1")
    assert node.node_id == "node-1"
    assert NODE_URI_SCHEME + "node-1" in node.certificate.extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value.get_values_for_type(x509.UniformResourceIdentifier)
    trust = store(node_dir)
    trust.verify("node-1", node.certificate_der, DATA, node.sign(DATA))
    trust.verify("node-1", node.certificate_der, DATA, node.sign(DATA))  # again, from the cache


def test_a_forged_or_altered_signature_is_refused(authority, node_dir):
    node = identity(authority, "node-1")
    trust = store(node_dir)
    forged = Ed25519PrivateKey.generate().sign(DATA)
    error = refused(trust, "node-1", node.certificate_der, DATA, forged)
    assert error.kind == "bad-signature" and "forged" in error.reason and "node-1" in error.reason
    assert refused(trust, "node-1", node.certificate_der, DATA + b"!", node.sign(DATA)).kind == "bad-signature"
    assert refused(trust, "node-1", node.certificate_der, DATA, b"").kind == "bad-signature"


def test_a_certificate_of_another_ca_is_refused_even_under_the_same_names(tmp_path, authority, node_dir):
    # The other CA has the same name and issues a certificate for the same node id.
    other = identity(ClusterAuthority.create(tmp_path / "other"), "node-1")
    error = refused(store(node_dir), "node-1", other.certificate_der, DATA, other.sign(DATA))
    assert error.kind == "unknown-ca"
    assert "not issued by this cluster's CA" in error.reason


def test_the_certificate_of_node_a_presented_as_node_b_is_refused(authority, node_dir):
    node_a = identity(authority, "node-a")
    identity(authority, "node-b")
    error = refused(store(node_dir), "node-b", node_a.certificate_der, DATA, node_a.sign(DATA))
    assert error.kind == "wrong-node"
    assert "'node-b'" in error.reason and "'node-a'" in error.reason


def test_a_revocation_takes_effect_when_the_new_list_is_copied_to_the_node_without_a_restart(authority, node_dir):
    node = identity(authority, "node-1")
    trust = store(node_dir)
    signature = node.sign(DATA)
    trust.verify("node-1", node.certificate_der, DATA, signature)
    serial = authority.revoke("node-1")
    trust.verify("node-1", node.certificate_der, DATA, signature)  # the node has not got the new list yet
    shutil.copy(authority.crl_file, node_dir / "crl.pem")
    error = refused(trust, "node-1", node.certificate_der, DATA, signature)
    assert error.kind == "revoked" and f"{serial:x}" in error.reason and "node-1" in error.reason
    # A new certificate of the node is accepted; the old one stays refused.
    renewed = identity(authority, "node-1")
    trust.verify("node-1", renewed.certificate_der, DATA, renewed.sign(DATA))
    assert refused(trust, "node-1", node.certificate_der, DATA, signature).kind == "revoked"


def test_the_list_is_looked_at_no_more_often_than_the_check_interval(authority, node_dir):
    node = identity(authority, "node-1")
    trust = TrustStore(node_dir / "ca.pem", node_dir / "crl.pem", check_interval=0.3)
    signature = node.sign(DATA)
    trust.verify("node-1", node.certificate_der, DATA, signature)
    authority.revoke("node-1")
    shutil.copy(authority.crl_file, node_dir / "crl.pem")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            trust.verify("node-1", node.certificate_der, DATA, signature)
        except IdentityRefused as error:
            assert error.kind == "revoked"
            break
        time.sleep(0.05)
    else:
        pytest.fail("the revocation was never read")


def _certificate(authority, node_id: str, not_before: datetime.datetime, not_after: datetime.datetime):
    """A certificate of the CA with chosen validity (the CA's key read from its file, as an operator's
    own tool would)."""
    ca_key = read_private_key(authority.directory / "ca.key")
    key = Ed25519PrivateKey.generate()
    certificate = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, node_id)]))
        .issuer_name(authority.certificate.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(not_before).not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName([x509.UniformResourceIdentifier(NODE_URI_SCHEME + node_id)]),
                       critical=False)
        .sign(ca_key, None))
    return NodeIdentity(certificate, key)


def test_an_expired_or_not_yet_valid_certificate_is_refused(authority, node_dir):
    now = datetime.datetime.now(datetime.UTC)
    trust = store(node_dir)
    expired = _certificate(authority, "node-1", now - datetime.timedelta(days=30), now - datetime.timedelta(days=1))
    error = refused(trust, "node-1", expired.certificate_der, DATA, expired.sign(DATA))
    assert error.kind == "expired" and "expired at" in error.reason
    early = _certificate(authority, "node-1", now + datetime.timedelta(days=1), now + datetime.timedelta(days=30))
    error = refused(trust, "node-1", early.certificate_der, DATA, early.sign(DATA))
    assert error.kind == "not-yet-valid"


def test_what_is_not_a_node_certificate_is_refused(authority, node_dir):
    trust = store(node_dir)
    ca_der = authority.certificate.public_bytes(serialization.Encoding.DER)
    assert refused(trust, "node-1", ca_der, DATA, b"x" * 64).kind == "not-a-node-certificate"
    error = refused(trust, "node-1", b"\x30\x03garbage", DATA, b"x" * 64)
    assert error.kind == "not-a-node-certificate" and "cannot be read" in error.reason


def test_a_damaged_revocation_list_refuses_everything_until_it_is_replaced(authority, node_dir):
    node = identity(authority, "node-1")
    trust = store(node_dir)
    signature = node.sign(DATA)
    (node_dir / "crl.pem").write_bytes(authority.crl_file.read_bytes()[:60])
    error = refused(trust, "node-1", node.certificate_der, DATA, signature)
    assert error.kind == "trust-store"
    assert str(node_dir / "crl.pem") in error.reason and "copy crl.pem" in error.reason
    shutil.copy(authority.crl_file, node_dir / "crl.pem")
    trust.verify("node-1", node.certificate_der, DATA, signature)


def test_a_revocation_list_of_another_ca_is_not_taken(tmp_path, authority, node_dir):
    node = identity(authority, "node-1")
    trust = store(node_dir)
    shutil.copy(ClusterAuthority.create(tmp_path / "other").crl_file, node_dir / "crl.pem")
    error = refused(trust, "node-1", node.certificate_der, DATA, node.sign(DATA))
    assert error.kind == "trust-store" and "not signed by the CA" in error.reason


def test_damaged_files_are_named_with_what_to_do(authority, node_dir):
    (node_dir / "ca.pem").write_text("not a certificate\n")
    with pytest.raises(IdentityError, match=r"ca\.pem: damaged, no PEM block.*copy ca\.pem"):
        TrustStore(node_dir / "ca.pem")
    pem = authority.certificate_file.read_text()
    (node_dir / "ca.pem").write_text(pem[:40] + "AAAA" + pem[60:])
    with pytest.raises(IdentityError, match=r"ca\.pem: damaged, the PEM block at byte offset 0"):
        TrustStore(node_dir / "ca.pem")
    with pytest.raises(IdentityError, match="no such file"):
        TrustStore(node_dir / "missing.pem")

    issued = authority.issue("node-1")
    damaged = node_dir / "node-1.key"
    damaged.write_bytes(issued.key_file.read_bytes()[:50])
    with pytest.raises(IdentityError) as raised:
        NodeIdentity.load(issued.certificate_file, damaged)
    assert str(damaged) in str(raised.value) and "cluster_pki issue NODE --force" in str(raised.value)
    other = authority.issue("node-2")
    with pytest.raises(IdentityError, match="is not the key of the certificate of node node-1"):
        NodeIdentity.load(issued.certificate_file, other.key_file)


def test_verification_is_cheap(authority, node_dir):
    node = identity(authority, "node-1")
    trust = TrustStore(node_dir / "ca.pem", node_dir / "crl.pem")
    signature = node.sign(DATA)
    trust.verify("node-1", node.certificate_der, DATA, signature)
    started = time.perf_counter()
    for _ in range(1000):
        trust.verify("node-1", node.certificate_der, DATA, signature)
    per_verify = (time.perf_counter() - started) / 1000
    # An Ed25519 verification costs about 0.1 ms on this machine; parsing and checking the
    # certificate again each time would cost several times that.
    assert per_verify < 0.002, f"{per_verify * 1e6:.0f} µs per verification"
