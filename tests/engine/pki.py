"""Test certificates: a CA, a server certificate for localhost and a client certificate, written
as PKCS12 and PEM key- and truststores."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PASSWORD = "store-secret"


def _name(common_name: str, organization: str = "Flowsite Test") -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


@dataclass
class Identity:
    """A private key and its certificate, signed by ``issuer`` (None: self-signed)."""

    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate

    @property
    def subject(self) -> str:
        return self.certificate.subject.rfc4514_string()


def make_ca(common_name: str = "Flowsite Test CA") -> Identity:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(_name(common_name))
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return Identity(key, certificate)


def make_leaf(ca: Identity, common_name: str, *, server: bool, organization: str = "Flowsite Test") -> Identity:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (
        x509.CertificateBuilder().subject_name(_name(common_name, organization)).issuer_name(ca.certificate.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False)
    )
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return Identity(key, builder.sign(ca.key, hashes.SHA256()))


def write_pkcs12_keystore(path: Path, identity: Identity, ca: Identity, password: str = PASSWORD) -> Path:
    data = pkcs12.serialize_key_and_certificates(
        b"key", identity.key, identity.certificate, [ca.certificate],
        serialization.BestAvailableEncryption(password.encode()))
    path.write_bytes(data)
    return path


def write_pkcs12_truststore(path: Path, *certificates: x509.Certificate, password: str = PASSWORD) -> Path:
    data = pkcs12.serialize_key_and_certificates(
        None, None, None, list(certificates), serialization.BestAvailableEncryption(password.encode()))
    path.write_bytes(data)
    return path


def write_pem_keystore(path: Path, identity: Identity, ca: Identity, password: str | None = None) -> Path:
    encryption = (serialization.BestAvailableEncryption(password.encode()) if password
                  else serialization.NoEncryption())
    key = identity.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)
    chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in (identity.certificate, ca.certificate))
    path.write_bytes(chain + key)
    return path


def write_pem_truststore(path: Path, *certificates: x509.Certificate) -> Path:
    path.write_bytes(b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certificates))
    return path


@dataclass
class Pki:
    """A CA with a server and a client identity, and their stores in ``directory``."""

    directory: Path
    ca: Identity
    server: Identity
    client: Identity

    @classmethod
    def create(cls, directory: Path) -> Pki:
        directory.mkdir(parents=True, exist_ok=True)
        ca = make_ca()
        return cls(directory, ca, make_leaf(ca, "localhost", server=True), make_leaf(ca, "client-one", server=False))

    def pkcs12_keystore(self, identity: Identity, name: str, password: str = PASSWORD) -> str:
        return str(write_pkcs12_keystore(self.directory / name, identity, self.ca, password))

    def pkcs12_truststore(self, name: str = "trust.p12", password: str = PASSWORD) -> str:
        return str(write_pkcs12_truststore(self.directory / name, self.ca.certificate, password=password))

    def pem_keystore(self, identity: Identity, name: str, password: str | None = None) -> str:
        return str(write_pem_keystore(self.directory / name, identity, self.ca, password))

    def pem_truststore(self, name: str = "trust.pem") -> str:
        return str(write_pem_truststore(self.directory / name, self.ca.certificate))

    def server_service(self, kind: str = "PKCS12", client_truststore: bool = True) -> dict[str, str]:
        """Properties of an SSL Context Service for a server (with a truststore for client certificates)."""
        if kind == "PKCS12":
            properties = {"Keystore Filename": self.pkcs12_keystore(self.server, "server.p12"),
                          "Keystore Password": PASSWORD, "Keystore Type": "PKCS12"}
        else:
            properties = {"Keystore Filename": self.pem_keystore(self.server, "server.pem"), "Keystore Type": "PEM"}
        if client_truststore:
            properties.update({"Truststore Filename": self.pem_truststore("server-trust.pem"),
                               "Truststore Type": "PEM"})
        return properties

    def client_service(self, kind: str = "PKCS12", with_key: bool = True) -> dict[str, str]:
        """Properties of an SSL Context Service for a client trusting the CA (and presenting its certificate)."""
        if kind == "PKCS12":
            properties = {"Truststore Filename": self.pkcs12_truststore("client-trust.p12"),
                          "Truststore Password": PASSWORD, "Truststore Type": "PKCS12"}
            if with_key:
                properties.update({"Keystore Filename": self.pkcs12_keystore(self.client, "client.p12"),
                                   "Keystore Password": PASSWORD, "Keystore Type": "PKCS12"})
        else:
            properties = {"Truststore Filename": self.pem_truststore("client-trust.pem"), "Truststore Type": "PEM"}
            if with_key:
                properties.update({"Keystore Filename": self.pem_keystore(self.client, "client.pem", PASSWORD),
                                   "Keystore Password": PASSWORD, "Keystore Type": "PEM"})
        return properties
