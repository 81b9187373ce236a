"""The SSL context services read Java keystores (JKS, NiFi's usual type) and the PKCS12 files
Java 17's keytool writes: stores made by ``keytool`` in the test, real TLS handshakes (through
ListenHTTP too), and clear errors naming the file for wrong passwords and damaged stores."""

from __future__ import annotations

import ssl
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from engine.confinement import ConfinementSettings
from engine.flow import load_flow
from engine.processors.listen_http import ListenHTTP
from engine.runtime import FlowController
from engine.storage import NodeStorage
from engine.testing import ProcessorTestRunner
from engine.testing.flows import flow, group, service
from tests.engine.pki import PASSWORD, Pki
from tests.engine.processors.test_listen_http import post
from tests.engine.services.test_ssl_context import configure, enabled, handshake, subject_cn
from tests.servers import free_port

KEY_PASSWORD = "key-secret"


def keytool(*args: str) -> None:
    result = subprocess.run(["keytool", *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def java_identity(directory: Path, name: str, store_type: str = "JKS", key_password: str = PASSWORD) -> Path:
    """A key pair keytool makes, self-signed for localhost (a CA, so it can be its own trust anchor)."""
    store = directory / f"{name}.{store_type.lower()}"
    keytool("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1",
            "-dname", f"CN=localhost, O={name}", "-ext", "SAN=dns:localhost", "-ext", "bc:c", "-validity", "2",
            "-keystore", str(store), "-storetype", store_type, "-storepass", PASSWORD, "-keypass", key_password)
    return store


def java_truststore(directory: Path, keystore: Path, alias: str, store_type: str = "JKS") -> Path:
    """A truststore keytool makes holding the certificate of ``keystore``'s ``alias``."""
    certificate, store = directory / f"{alias}.crt", directory / f"trust-{alias}.{store_type.lower()}"
    keytool("-exportcert", "-rfc", "-alias", alias, "-keystore", str(keystore), "-storepass", PASSWORD,
            "-file", str(certificate))
    keytool("-importcert", "-noprompt", "-alias", alias, "-file", str(certificate), "-keystore", str(store),
            "-storetype", store_type, "-storepass", PASSWORD)
    return store


def to_jks(pkcs12: str, name: str) -> str:
    """The PKCS12 keystore of the test PKI converted by keytool into a JKS keystore."""
    target = str(Path(pkcs12).with_name(name))
    keytool("-importkeystore", "-srckeystore", pkcs12, "-srcstoretype", "PKCS12", "-srcstorepass", PASSWORD,
            "-destkeystore", target, "-deststoretype", "JKS", "-deststorepass", PASSWORD, "-destkeypass", PASSWORD)
    return target


def ca_truststore(pki: Pki, name: str) -> str:
    pem = pki.directory / "ca.pem"
    pem.write_bytes(pki.ca.certificate.public_bytes(serialization.Encoding.PEM))
    target = pki.directory / name
    keytool("-importcert", "-noprompt", "-alias", "ca", "-file", str(pem), "-keystore", str(target),
            "-storetype", "JKS", "-storepass", PASSWORD)
    return str(target)


@pytest.fixture
def pki(tmp_path):
    return Pki.create(tmp_path / "pki")


def test_mutual_tls_with_jks_keystores_and_truststores(pki):
    server = enabled({"Keystore Filename": to_jks(pki.pkcs12_keystore(pki.server, "server.p12"), "server.jks"),
                      "Keystore Password": PASSWORD, "Keystore Type": "JKS",
                      "Truststore Filename": ca_truststore(pki, "server-trust.jks"),
                      "Truststore Password": PASSWORD, "Truststore Type": "JKS"})
    client = enabled({"Keystore Filename": to_jks(pki.pkcs12_keystore(pki.client, "client.p12"), "client.jks"),
                      "Keystore Password": PASSWORD, "Keystore Type": "JKS",
                      "Truststore Filename": ca_truststore(pki, "client-trust.jks"), "Truststore Type": "JKS"})
    server_context = server.create_context(server_side=True)
    server_context.verify_mode = ssl.CERT_REQUIRED
    data, _, seen = handshake(server_context, client.create_context())
    assert data == b"hello" and subject_cn(seen["peer"]) == "client-one"


@pytest.mark.parametrize("store_type", ["JKS", "PKCS12"])
def test_listen_http_serves_https_from_a_keystore_keytool_made(tmp_path, store_type):
    keystore = java_identity(tmp_path, "listener", store_type)
    truststore = java_truststore(tmp_path, keystore, "listener", store_type)
    port = free_port()
    server = {"Keystore Filename": str(keystore), "Keystore Password": PASSWORD, "Keystore Type": store_type}
    client = enabled({"Truststore Filename": str(truststore), "Truststore Password": PASSWORD,
                      "Truststore Type": store_type})
    runner = ProcessorTestRunner(ListenHTTP, tmp_path / "run", {"Listening Port": str(port),
                                                                "SSL Context Service": "ssl"},
                                 input=False, services={"ssl": ("StandardSSLContextService", server)})
    runner.run(1, stop=False)
    try:
        status, _, _ = post(port, b"over TLS", context=client.create_context())
        assert status == 200
        assert [runner.content(f) for f in runner.output("success")] == [b"over TLS"]
    finally:
        runner.stop()
        runner.close()


def test_a_key_password_other_than_the_store_password(tmp_path):
    keystore = str(java_identity(tmp_path, "keyed", key_password=KEY_PASSWORD))
    properties = {"Keystore Filename": keystore, "Keystore Password": PASSWORD, "Keystore Type": "JKS"}
    problems, _ = configure(properties)
    assert problems == [f"keystore {keystore!r}: the private key 'keyed' cannot be decrypted with that password (a "
                        "wrong password: set 'Key Password' when the key's password differs from the Keystore "
                        "Password)"]
    service = enabled({**properties, "key-password": KEY_PASSWORD})
    assert service.create_context(server_side=True) is not None


def test_wrong_passwords_and_damaged_stores_name_the_file(tmp_path):
    keystore = java_identity(tmp_path, "server")
    truststore = java_truststore(tmp_path, keystore, "server")
    problems, _ = configure({"Keystore Filename": str(keystore), "Keystore Password": "not-it", "Keystore Type": "JKS",
                             "Truststore Filename": str(truststore), "Truststore Password": "not-it",
                             "Truststore Type": "JKS"})
    assert problems == [
        f"keystore {str(keystore)!r} could not be opened as JKS with the Keystore Password: the password does not "
        "open it (its integrity check failed: a wrong password, or a damaged file)",
        f"truststore {str(truststore)!r} could not be opened as JKS with the Truststore Password: the password does "
        "not open it (its integrity check failed: a wrong password, or a damaged file)"]

    damaged = tmp_path / "damaged.jks"
    data = bytearray(keystore.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    problems, _ = configure({"Keystore Filename": str(damaged), "Keystore Password": PASSWORD, "Keystore Type": "JKS"})
    assert len(problems) == 1 and problems[0].startswith(f"keystore {str(damaged)!r} could not be opened as JKS")

    truncated = tmp_path / "truncated.jks"
    truncated.write_bytes(keystore.read_bytes()[:100])
    problems, _ = configure({"Keystore Filename": str(truncated), "Keystore Password": PASSWORD,
                             "Keystore Type": "JKS"})
    assert len(problems) == 1 and str(truncated) in problems[0] and "not a readable JKS keystore" in problems[0]


def test_a_pkcs12_file_named_jks_is_refused_and_a_jks_truststore_needs_no_password(tmp_path, pki):
    pkcs12 = pki.pkcs12_keystore(pki.server, "really.p12")
    problems, _ = configure({"Keystore Filename": pkcs12, "Keystore Password": PASSWORD, "Keystore Type": "JKS"})
    assert len(problems) == 1 and pkcs12 in problems[0] and "not a readable JKS keystore" in problems[0]
    truststore = ca_truststore(pki, "open-trust.jks")
    assert enabled({"Truststore Filename": truststore, "Truststore Type": "JKS"}).create_context() is not None


def test_a_keystore_without_a_private_key(tmp_path, pki):
    truststore = ca_truststore(pki, "only-certificates.jks")
    problems, _ = configure({"Keystore Filename": truststore, "Keystore Password": PASSWORD, "Keystore Type": "JKS"})
    assert problems == [f"keystore {truststore!r}: it holds no private key"]


def test_a_tenant_reads_no_jks_keystore_outside_its_file_roots(tmp_path):
    files_root = tmp_path / "files"
    (files_root / "acme").mkdir(parents=True)
    (files_root / "other").mkdir()
    theirs = java_identity(files_root / "other", "theirs")
    document = flow(group("root", groups=[group("acme-group", services=[service(
        "tls", "StandardSSLContextService", {"Keystore Filename": str(theirs), "Keystore Password": PASSWORD,
                                             "Keystore Type": "JKS"})])]))
    document["tenants"] = {"acme": {"group": "acme-group"}}
    storage = NodeStorage(tmp_path / "node")
    controller = FlowController(storage, confinement=ConfinementSettings(files_root=str(files_root)))
    try:
        controller.load(load_flow(document), storage.open(background=False))
        problems = [str(problem) for problem in controller.service("tls").validate()]
        assert any(f"keystore refused {theirs}: outside tenant acme's file roots" in p for p in problems), \
            problems
    finally:
        storage.close()
