"""StandardSSLContextService: PKCS12 and PEM stores, validation messages, real TLS handshakes."""

from __future__ import annotations

import socket
import ssl
import tempfile
import threading

import pytest
from cryptography.hazmat.primitives import serialization

from engine.components import ConfigurationContext, default_registry, validate_properties
from engine.components.validation import component_descriptors
from engine.processors.invoke_http import InvokeHTTP
from engine.runtime.processor_node import InvalidComponentError
from engine.services.apis import SSLContextProvider
from engine.services.ssl_context import StandardRestrictedSSLContextService, StandardSSLContextService
from engine.testing import ProcessorTestRunner
from tests.engine.pki import PASSWORD, Pki, make_ca, make_leaf, write_pem_keystore


@pytest.fixture
def pki(tmp_path):
    return Pki.create(tmp_path / "pki")


def configure(properties, cls=StandardSSLContextService):
    """The service's problems, and the service enabled when there are none."""
    descriptors, _ = component_descriptors(cls, properties)
    context = ConfigurationContext(descriptors, properties)
    problems = [str(p) for p in validate_properties(cls, properties)]
    service = cls()
    if not problems:
        problems = list(service.validate(context))
    if not problems:
        service.on_enabled(context, None)
    return problems, service


def enabled(properties, cls=StandardSSLContextService):
    problems, service = configure(properties, cls)
    assert problems == []
    return service


def handshake(server_context: ssl.SSLContext, client_context: ssl.SSLContext):
    """A real TLS connection over loopback; returns (client's view, server's view of the peer)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    seen = {}

    def serve():
        connection, _ = listener.accept()
        try:
            with server_context.wrap_socket(connection, server_side=True) as tls:
                seen["peer"] = tls.getpeercert()
                tls.sendall(b"hello")
        except (ssl.SSLError, OSError) as error:
            seen["error"] = error

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        raw = socket.create_connection(listener.getsockname(), timeout=5)
        with client_context.wrap_socket(raw, server_hostname="localhost") as tls:
            data = tls.recv(5)
            version = tls.version()
        thread.join(5)
        return data, version, seen
    finally:
        listener.close()


def subject_cn(peer) -> str:
    return dict(item[0] for item in peer["subject"])["commonName"]


# -- loading stores ---------------------------------------------------------------------------

@pytest.mark.parametrize("server_kind,client_kind", [("PKCS12", "PEM"), ("PEM", "PKCS12")])
def test_mutual_tls_with_pkcs12_and_pem_stores(pki, server_kind, client_kind):
    server = enabled(pki.server_service(server_kind))
    client = enabled(pki.client_service(client_kind))
    server_context = server.create_context(server_side=True)
    server_context.verify_mode = ssl.CERT_REQUIRED
    data, _, seen = handshake(server_context, client.create_context())
    assert data == b"hello"
    assert subject_cn(seen["peer"]) == "client-one"


def test_client_context_verifies_the_server_and_its_host_name(pki, tmp_path):
    server = enabled(pki.server_service("PKCS12", client_truststore=False))
    client_context = enabled(pki.client_service("PEM", with_key=False)).create_context()
    assert client_context.verify_mode == ssl.CERT_REQUIRED and client_context.check_hostname
    other = Pki.create(tmp_path / "other")
    stranger = enabled(other.client_service("PEM", with_key=False)).create_context()
    with pytest.raises(ssl.SSLCertVerificationError):
        handshake(server.create_context(server_side=True), stranger)


def test_encrypted_pem_key_with_keystore_or_key_password(pki):
    path = pki.pem_keystore(pki.client, "encrypted.pem", password="pem-secret")
    enabled({"Keystore Filename": path, "Keystore Type": "PEM", "Keystore Password": "pem-secret"})
    enabled({"Keystore Filename": path, "Keystore Type": "PEM", "Keystore Password": "other",
             "key-password": "pem-secret"})
    problems, _ = configure({"Keystore Filename": path, "Keystore Type": "PEM"})
    assert problems == [f"keystore {path!r}: the private key is encrypted and no password is set"]
    problems, _ = configure({"Keystore Filename": path, "Keystore Type": "PEM", "Keystore Password": "wrong"})
    assert problems[0].startswith(f"keystore {path!r}: the private key could not be read (wrong password")


def test_unencrypted_pem_key_accepts_a_password(pki):
    path = pki.pem_keystore(pki.client, "plain.pem")
    enabled({"Keystore Filename": path, "Keystore Type": "PEM", "Keystore Password": "ignored"})


def test_pem_keystore_whose_key_is_first(pki, tmp_path):
    key = pki.client.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                       serialization.NoEncryption())
    path = tmp_path / "key-first.pem"
    path.write_bytes(key + pki.ca.certificate.public_bytes(serialization.Encoding.PEM)
                     + pki.client.certificate.public_bytes(serialization.Encoding.PEM))
    service = enabled({"Keystore Filename": str(path), "Keystore Type": "PEM",
                       "Truststore Filename": pki.pem_truststore(), "Truststore Type": "PEM"})
    server_context = enabled(pki.server_service("PEM")).create_context(server_side=True)
    server_context.verify_mode = ssl.CERT_REQUIRED
    _, _, seen = handshake(server_context, service.create_context())
    assert subject_cn(seen["peer"]) == "client-one"


def test_key_material_leaves_no_file_behind(pki, tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    service = enabled(pki.server_service("PKCS12"))
    service.create_context(server_side=True)
    service.create_context(server_side=False)
    assert list(scratch.iterdir()) == []


def test_filenames_may_use_environment_expressions(pki, monkeypatch):
    monkeypatch.setenv("TLS_DIR", str(pki.directory))
    pki.pkcs12_truststore("env-trust.p12")
    enabled({"Truststore Filename": "${TLS_DIR}/env-trust.p12", "Truststore Type": "PKCS12",
             "Truststore Password": PASSWORD})


def test_passwordless_pkcs12_truststore(pki, tmp_path):
    from cryptography.hazmat.primitives.serialization import pkcs12

    path = tmp_path / "open-trust.p12"
    path.write_bytes(pkcs12.serialize_key_and_certificates(None, None, None, [pki.ca.certificate],
                                                           serialization.NoEncryption()))
    service = enabled({"Truststore Filename": str(path), "Truststore Type": "PKCS12"})
    assert service.create_context().cert_store_stats()["x509_ca"] == 1


# -- protocol versions ------------------------------------------------------------------------

def test_tls_protocol_pins_the_version(pki):
    server = enabled({**pki.server_service("PKCS12", client_truststore=False), "SSL Protocol": "TLSv1.3"})
    client_12 = enabled({**pki.client_service("PEM", with_key=False), "SSL Protocol": "TLSv1.2"})
    client_any = enabled(pki.client_service("PEM", with_key=False))
    assert handshake(server.create_context(server_side=True), client_any.create_context())[1] == "TLSv1.3"
    with pytest.raises(ssl.SSLError):
        handshake(server.create_context(server_side=True), client_12.create_context())
    context = client_12.create_context()
    assert context.minimum_version == context.maximum_version == ssl.TLSVersion.TLSv1_2


def test_restricted_service_offers_no_ssl_value(pki):
    problems, _ = configure({**pki.client_service("PEM", with_key=False), "SSL Protocol": "SSL"},
                            StandardRestrictedSSLContextService)
    assert problems and "'SSL Protocol'" in problems[0]
    enabled({**pki.client_service("PEM", with_key=False), "SSL Protocol": "TLSv1.3"},
            StandardRestrictedSSLContextService)
    enabled({**pki.client_service("PEM", with_key=False), "SSL Protocol": "SSL"})


def test_server_context_needs_a_keystore(pki):
    service = enabled({"Truststore Filename": pki.pem_truststore(), "Truststore Type": "PEM"})
    with pytest.raises(ssl.SSLError, match="needs a keystore"):
        service.create_context(server_side=True)


# -- validation -------------------------------------------------------------------------------

def test_bcfks_stores_are_refused_with_a_conversion_hint(pki):
    problems, _ = configure({"Keystore Filename": "/x/ks.bcfks", "Keystore Password": "p", "Keystore Type": "BCFKS",
                             "Truststore Filename": "/x/ts.bcfks", "Truststore Type": "BCFKS"})
    assert len(problems) == 2
    assert all("convert the file to PKCS12" in problem for problem in problems)
    assert problems[0].startswith("'Keystore Type' is 'BCFKS', a Java keystore format")
    problems, _ = configure({"Truststore Filename": "/x/ts", "Truststore Type": "DER"})
    assert problems == ["'Truststore Type' is 'DER', which is not one of the supported types: JKS, PKCS12, PEM"]


def test_nothing_configured(pki):
    assert configure({})[0] == ["either a keystore or a truststore must be configured"]


def test_incomplete_store_settings(pki):
    assert configure({"Keystore Filename": pki.pkcs12_keystore(pki.client, "c.p12")})[0] == [
        "a keystore needs both 'Keystore Filename' and 'Keystore Type'"]
    assert configure({"Keystore Filename": pki.pkcs12_keystore(pki.client, "c.p12"), "Keystore Type": "PKCS12"})[0] \
        == ["a PKCS12 keystore needs a 'Keystore Password'"]
    assert configure({"Truststore Type": "PEM"})[0] == [
        "a truststore needs both 'Truststore Filename' and 'Truststore Type'"]


def test_missing_files_are_named(tmp_path):
    missing = str(tmp_path / "nowhere.p12")
    problems, _ = configure({"Keystore Filename": missing, "Keystore Password": "p", "Keystore Type": "PKCS12",
                             "Truststore Filename": str(tmp_path), "Truststore Type": "PEM"})
    assert problems == [f"keystore {missing!r} does not exist", f"truststore {str(tmp_path)!r} is not a file"]


def test_wrong_passwords_are_reported_per_store(pki):
    keystore = pki.pkcs12_keystore(pki.client, "c.p12")
    truststore = pki.pkcs12_truststore("t.p12")
    problems, _ = configure({"Keystore Filename": keystore, "Keystore Password": "wrong", "Keystore Type": "PKCS12",
                             "Truststore Filename": truststore, "Truststore Password": "bad",
                             "Truststore Type": "PKCS12"})
    assert problems[0].startswith(f"keystore {keystore!r} could not be opened as PKCS12 with the Keystore Password")
    assert problems[1].startswith(f"truststore {truststore!r} could not be opened as PKCS12 with the Truststore "
                                  f"Password")
    problems, _ = configure({"Keystore Filename": keystore, "Keystore Password": PASSWORD, "Keystore Type": "PKCS12",
                             "key-password": "different"})
    assert problems[0].startswith(f"keystore {keystore!r} could not be opened as PKCS12 with the Key Password")
    enabled({"Keystore Filename": keystore, "Keystore Password": PASSWORD, "Keystore Type": "PKCS12",
             "key-password": PASSWORD})


def test_files_of_the_wrong_kind(pki, tmp_path):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00\x01 not a store")
    problems, _ = configure({"Keystore Filename": str(garbage), "Keystore Password": "p", "Keystore Type": "PKCS12"})
    assert "could not be opened as PKCS12" in problems[0]
    problems, _ = configure({"Keystore Filename": str(garbage), "Keystore Type": "PEM"})
    assert problems == [f"keystore {str(garbage)!r} holds no PEM private key"]
    problems, _ = configure({"Truststore Filename": str(garbage), "Truststore Type": "PEM"})
    assert problems == [f"truststore {str(garbage)!r} holds no PEM certificate"]
    only_key = tmp_path / "only-key.pem"
    only_key.write_bytes(pki.client.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                      serialization.NoEncryption()))
    problems, _ = configure({"Keystore Filename": str(only_key), "Keystore Type": "PEM"})
    assert problems == [f"keystore {str(only_key)!r} holds no PEM certificate"]


def test_keystore_without_the_keys_certificate(pki, tmp_path):
    other = make_leaf(make_ca("Other"), "someone", server=False)
    mismatched = write_pem_keystore(tmp_path / "mismatch.pem", other, pki.ca)
    data = mismatched.read_bytes()
    key_start = data.index(b"-----BEGIN PRIVATE KEY-----")
    mismatched.write_bytes(pki.client.certificate.public_bytes(serialization.Encoding.PEM) + data[key_start:])
    problems, _ = configure({"Keystore Filename": str(mismatched), "Keystore Type": "PEM"})
    assert problems == [f"keystore {str(mismatched)!r} holds no certificate for its private key"]
    truststore_as_keystore = pki.pkcs12_truststore("only-certs.p12")
    problems, _ = configure({"Keystore Filename": truststore_as_keystore, "Keystore Password": PASSWORD,
                             "Keystore Type": "PKCS12"})
    assert problems == [f"keystore {truststore_as_keystore!r} holds no private key"]


# -- in a flow --------------------------------------------------------------------------------

def test_registered_under_nifi_names():
    registry = default_registry()
    assert registry.service("org.apache.nifi.ssl.StandardSSLContextService") is StandardSSLContextService
    assert registry.service("org.apache.nifi.ssl.StandardRestrictedSSLContextService") \
        is StandardRestrictedSSLContextService
    assert StandardSSLContextService in [t.cls for t in registry.services_providing(SSLContextProvider)]
    sensitive = {d.name for d in StandardSSLContextService.properties if d.sensitive}
    assert sensitive == {"Keystore Password", "key-password", "Truststore Password"}


def test_an_invalid_service_cannot_be_enabled_in_a_flow(tmp_path, pki):
    services = {"ssl": ("StandardSSLContextService", {"Truststore Filename": pki.pkcs12_truststore(),
                                                      "Truststore Password": "wrong", "Truststore Type": "PKCS12"})}
    with pytest.raises(InvalidComponentError, match="could not be opened as PKCS12 with the Truststore Password"):
        ProcessorTestRunner(InvokeHTTP, tmp_path, {"HTTP URL": "https://localhost/"}, services=services)
