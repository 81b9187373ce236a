"""The cluster's certificate authority, on the operator's machine: create it, issue and revoke node
certificates, keep the revocation list.

Layout of the PKI directory::

    ca.pem              the CA's certificate: copy it to every node
    ca.key              the CA's key (0600): stays here, never on a node
    crl.pem             the revocation list, signed by the CA: copy it to every node after a revoke
    nodes/<node>.pem    a node's certificate: copy it, with its key, to that node
    nodes/<node>.key    the node's key (0600)

Every file is written through ``engine.fileops`` (a new file whole, or the old one). Keys are
Ed25519. A node certificate names the node in its subject's common name and in a SAN URI
``flowsite-node:<node id>`` (``engine.cluster.identity``).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from engine import fileops
from engine.cluster.identity import (NODE_URI_SCHEME, IdentityError, certificate_node_id, read_certificate, read_crl,
                                     read_private_key)

__all__ = ["CA_CERTIFICATE", "CA_KEY", "CRL", "NODES", "ClusterAuthority", "IssuedNode", "NodeEntry"]

CA_CERTIFICATE = "ca.pem"
CA_KEY = "ca.key"
CRL = "crl.pem"
NODES = "nodes"

_NODE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
#: How long the CA, a node certificate and a revocation list are valid by default, in days.
CA_DAYS = 3650
NODE_DAYS = 825
CRL_DAYS = 3650


@dataclass(frozen=True)
class IssuedNode:
    """Where a new node certificate and its key were written, and what was revoked to make room."""

    node_id: str
    certificate_file: Path
    key_file: Path
    serial: int
    not_after: datetime.datetime
    replaced_serial: int | None = None


@dataclass(frozen=True)
class NodeEntry:
    """One node certificate of the directory, as ``list`` shows it."""

    node_id: str
    serial: int
    not_after: datetime.datetime
    revoked: bool


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _key_pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


class ClusterAuthority:
    """The CA in ``directory`` (see the module docstring). ``create`` makes one, ``open`` reads one."""

    def __init__(self, directory: Path, certificate: x509.Certificate, key: Ed25519PrivateKey) -> None:
        self.directory = directory
        self.certificate = certificate
        self._key = key

    # -- the CA --------------------------------------------------------------------------

    @classmethod
    def create(cls, directory: str | Path, name: str = "Flowsite cluster CA", days: int = CA_DAYS) -> ClusterAuthority:
        """A new CA in ``directory`` with an empty revocation list; refuses (IdentityError) when
        the directory holds one already."""
        directory = Path(directory)
        if (directory / CA_CERTIFICATE).exists():
            raise IdentityError(f"{directory} holds a cluster CA already ({CA_CERTIFICATE}); a new CA would make "
                                "every node certificate it issued worthless: use another directory")
        key = Ed25519PrivateKey.generate()
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = _now()
        certificate = (
            x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, None)
        )
        fileops.make_directory(directory / NODES)
        # The certificate last: until it is written the directory holds no CA, and a failed
        # attempt (a full disk) can simply be run again.
        fileops.write_atomically(directory / CA_KEY, _key_pem(key), mode=0o600)
        authority = cls(directory, certificate, key)
        authority._write_crl({})
        fileops.write_atomically(directory / CA_CERTIFICATE, certificate.public_bytes(serialization.Encoding.PEM))
        return authority

    @classmethod
    def open(cls, directory: str | Path) -> ClusterAuthority:
        """The CA in ``directory``; raises IdentityError when it is missing or damaged."""
        directory = Path(directory)
        if not (directory / CA_CERTIFICATE).exists():
            raise IdentityError(f"{directory} holds no cluster CA ({CA_CERTIFICATE} is missing): create one with "
                                "python manage.py cluster_pki init")
        remedy = (f"restore it from the backup of {directory}; without the CA's certificate and key no node "
                  "certificate can be issued or revoked")
        certificate = read_certificate(directory / CA_CERTIFICATE, "cluster CA certificate", remedy)
        key = read_private_key(directory / CA_KEY, "cluster CA key", remedy)
        if key.public_key().public_bytes_raw() != certificate.public_key().public_bytes_raw():
            raise IdentityError(f"{directory / CA_KEY} is not the key of {directory / CA_CERTIFICATE}; {remedy}")
        return cls(directory, certificate, key)

    @property
    def certificate_file(self) -> Path:
        """The CA certificate every node trusts."""
        return self.directory / CA_CERTIFICATE

    @property
    def crl_file(self) -> Path:
        """The revocation list every node reads."""
        return self.directory / CRL

    # -- node certificates ----------------------------------------------------------------

    def node_files(self, node_id: str) -> tuple[Path, Path]:
        """The certificate and key files of node ``node_id``."""
        return self.directory / NODES / f"{node_id}.pem", self.directory / NODES / f"{node_id}.key"

    def issue(self, node_id: str, *, days: int = NODE_DAYS, force: bool = False) -> IssuedNode:
        """A new key and certificate for ``node_id``. A node whose certificate is not revoked is
        refused (IdentityError) unless ``force``: then its old certificate is revoked first, so
        its old key is worthless."""
        if not _NODE_ID.fullmatch(node_id):
            raise IdentityError(f"{node_id!r} is not a node id (1-63 letters, digits, '.', '_' or '-', starting "
                                "with a letter or digit)")
        certificate_file, key_file = self.node_files(node_id)
        replaced = None
        if certificate_file.exists():
            old = read_certificate(certificate_file, "node certificate",
                                   f"delete it, and {key_file}, to issue a new one")
            if old.serial_number not in self.revoked():
                if not force:
                    raise IdentityError(f"node {node_id!r} has a certificate already ({certificate_file}, serial "
                                        f"{old.serial_number:x}): revoke it first, or issue with --force to replace "
                                        "and revoke it")
                replaced = old.serial_number
        key = Ed25519PrivateKey.generate()
        now = _now()
        certificate = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, node_id)]))
            .issuer_name(self.certificate.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.SubjectAlternativeName([x509.UniformResourceIdentifier(NODE_URI_SCHEME + node_id)]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), critical=False)
            .sign(self._key, None)
        )
        if replaced is not None:
            # Revoked before the new files are written: should writing them fail, the node holds a
            # revoked certificate (issue again, no --force needed), never two valid ones.
            self._write_crl(self._revocations() | {replaced: now})
        fileops.make_directory(certificate_file.parent)
        fileops.write_atomically(key_file, _key_pem(key), mode=0o600)
        fileops.write_atomically(certificate_file, certificate.public_bytes(serialization.Encoding.PEM))
        return IssuedNode(node_id, certificate_file, key_file, certificate.serial_number,
                          certificate.not_valid_after_utc, replaced)

    def revoke(self, node_id: str) -> int:
        """Revoke the certificate of ``node_id`` (the revocation list is rewritten); returns its
        serial. Raises IdentityError when the node has no certificate or it is revoked already."""
        certificate_file, _ = self.node_files(node_id)
        if not certificate_file.exists():
            raise IdentityError(f"node {node_id!r} has no certificate here ({certificate_file})")
        serial = read_certificate(certificate_file, "node certificate", "issue it again with --force").serial_number
        revocations = self._revocations()
        if serial in revocations:
            raise IdentityError(f"the certificate of node {node_id!r} (serial {serial:x}) is revoked already")
        self._write_crl(revocations | {serial: _now()})
        return serial

    def revoked(self) -> frozenset[int]:
        """The serials on the revocation list."""
        return frozenset(self._revocations())

    def _revocations(self) -> dict[int, datetime.datetime]:
        crl = read_crl(self.crl_file, "restore it from the backup of this directory (it lists the revoked "
                                      "certificates)")
        if not crl.is_signature_valid(self.certificate.public_key()):
            raise IdentityError(f"{self.crl_file}: not signed by this CA; restore it from the backup of this directory")
        return {entry.serial_number: entry.revocation_date_utc for entry in crl}

    def nodes(self) -> list[NodeEntry]:
        """Every node certificate of the directory, by node id."""
        revoked = self.revoked()
        entries = []
        for path in sorted((self.directory / NODES).glob("*.pem")):
            certificate = read_certificate(path, "node certificate", "delete it, or issue it again with --force")
            entries.append(NodeEntry(certificate_node_id(certificate) or path.stem, certificate.serial_number,
                                     certificate.not_valid_after_utc, certificate.serial_number in revoked))
        return entries

    def _write_crl(self, revocations: dict[int, datetime.datetime]) -> None:
        now = _now()
        builder = (x509.CertificateRevocationListBuilder().issuer_name(self.certificate.subject)
                   .last_update(now).next_update(now + datetime.timedelta(days=CRL_DAYS)))
        for serial, date in sorted(revocations.items()):
            builder = builder.add_revoked_certificate(
                x509.RevokedCertificateBuilder().serial_number(serial).revocation_date(date).build())
        crl = builder.sign(self._key, None)
        fileops.write_atomically(self.crl_file, crl.public_bytes(serialization.Encoding.PEM))
