"""Node identity: what a node signs its load-balanced batches with, and how a receiver checks them.

A cluster has its own certificate authority (``engine.cluster.authority`` creates it on the
operator's machine). Each node holds a certificate of that CA naming it — the subject's common
name and a SAN URI ``flowsite-node:<node id>`` — and the certificate's Ed25519 key
(:class:`NodeIdentity`). Every node holds the CA's certificate and its revocation list
(:class:`TrustStore`), and refuses (:class:`IdentityRefused`) data signed under a certificate
the CA did not issue, of another node id, revoked, outside its validity, or whose signature does
not match. Both files are read again whenever they change on disk, so a revocation takes effect
on every node as soon as the new list is copied there, without a restart; a list that cannot be
read makes every verification fail until it is replaced (failing closed: the senders keep their
data and resend).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.x509.oid import NameOID

__all__ = ["NODE_URI_SCHEME", "IdentityError", "IdentityRefused", "NodeIdentity", "TrustStore",
           "certificate_node_id", "read_certificate", "read_crl", "read_private_key"]

log = logging.getLogger(__name__)

#: The scheme of the SAN URI that names a node in its certificate: ``flowsite-node:<node id>``.
NODE_URI_SCHEME = "flowsite-node:"

_T = TypeVar("_T")


class IdentityError(ValueError):
    """A file of the cluster's PKI is missing, damaged or does not fit; the message names the file
    and says what to do."""


class IdentityRefused(Exception):
    """Data whose signer is not accepted. ``kind`` is one of ``unknown-ca``, ``wrong-node``,
    ``revoked``, ``expired``, ``not-yet-valid``, ``bad-signature``, ``not-a-node-certificate``,
    ``trust-store``; ``reason`` says it in words."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def _read_pem(path: str | Path, what: str, remedy: str, parse: Callable[[bytes], _T]) -> _T:
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise IdentityError(f"{path}: no such file (the {what}); {remedy}") from None
    except OSError as error:
        raise IdentityError(f"{path}: cannot be read ({error.strerror}); {remedy}") from None
    begin = data.find(b"-----BEGIN")
    if begin < 0:
        raise IdentityError(f"{path}: damaged, no PEM block in its {len(data)} bytes (expected the {what}); "
                            f"{remedy}")
    try:
        return parse(data)
    except (ValueError, TypeError) as error:
        raise IdentityError(f"{path}: damaged, the PEM block at byte offset {begin} is not a readable {what} "
                            f"({error}); {remedy}") from None


def read_certificate(path: str | Path, what: str = "certificate", remedy: str = "replace it") -> x509.Certificate:
    """The certificate in the PEM file ``path`` (raises IdentityError naming the file and ``remedy``)."""
    return _read_pem(path, what, remedy, x509.load_pem_x509_certificate)


def read_crl(path: str | Path, remedy: str = "replace it") -> x509.CertificateRevocationList:
    """The revocation list in the PEM file ``path`` (raises IdentityError)."""
    return _read_pem(path, "certificate revocation list", remedy, x509.load_pem_x509_crl)


def read_private_key(path: str | Path, what: str = "private key", remedy: str = "replace it") -> Ed25519PrivateKey:
    """The unencrypted Ed25519 private key in the PEM file ``path`` (raises IdentityError)."""
    key = _read_pem(path, what, remedy, lambda data: serialization.load_pem_private_key(data, password=None))
    if not isinstance(key, Ed25519PrivateKey):
        raise IdentityError(f"{path}: a {type(key).__name__}, not an Ed25519 key; {remedy}")
    return key


def certificate_node_id(certificate: x509.Certificate) -> str | None:
    """The node id a certificate names (its ``flowsite-node:`` SAN URI, which its common name
    must repeat), or None when it names no node or names it inconsistently."""
    try:
        uris = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value \
            .get_values_for_type(x509.UniformResourceIdentifier)
    except x509.ExtensionNotFound:
        return None
    ids = {uri[len(NODE_URI_SCHEME):] for uri in uris if uri.startswith(NODE_URI_SCHEME)}
    names = [a.value for a in certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    if len(ids) != 1 or names != list(ids):
        return None
    return ids.pop()


def _node_remedy(path: Path) -> str:
    return ("issue it again on the operator's machine (python manage.py cluster_pki issue NODE --force) and copy "
            f"the node's .pem and .key to {path.parent}")


class NodeIdentity:
    """This node's certificate and key: ``node_id``, ``certificate_der`` and ``sign(data)``."""

    def __init__(self, certificate: x509.Certificate, key: Ed25519PrivateKey) -> None:
        node_id = certificate_node_id(certificate)
        if node_id is None:
            raise IdentityError(f"the certificate {certificate.subject.rfc4514_string()} names no node "
                                f"(a SAN URI {NODE_URI_SCHEME}<node id> repeated as its common name)")
        if key.public_key().public_bytes_raw() != _ed25519(certificate).public_bytes_raw():
            raise IdentityError(f"the key is not the key of the certificate of node {node_id}")
        self.node_id = node_id
        self.certificate = certificate
        self.certificate_der = certificate.public_bytes(serialization.Encoding.DER)
        self._key = key

    @classmethod
    def load(cls, certificate_file: str | Path, key_file: str | Path) -> NodeIdentity:
        """The identity in ``certificate_file`` and ``key_file`` (PEM); raises IdentityError naming
        the file that is missing, damaged or does not fit."""
        certificate_file, key_file = Path(certificate_file), Path(key_file)
        certificate = read_certificate(certificate_file, "node certificate", _node_remedy(certificate_file))
        key = read_private_key(key_file, "node key", _node_remedy(key_file))
        try:
            return cls(certificate, key)
        except IdentityError as error:
            raise IdentityError(f"{certificate_file} and {key_file}: {error}; {_node_remedy(key_file)}") from None

    def sign(self, data: bytes) -> bytes:
        """The Ed25519 signature of ``data`` (64 bytes)."""
        return self._key.sign(data)


def _ed25519(certificate: x509.Certificate) -> Ed25519PublicKey:
    key = certificate.public_key()
    if not isinstance(key, Ed25519PublicKey):
        raise IdentityError(f"the certificate {certificate.subject.rfc4514_string()} holds a "
                            f"{type(key).__name__}, not an Ed25519 key")
    return key


@dataclass(frozen=True)
class _Checked:
    """What verification needs of one presented certificate, worked out once."""

    node_id: str | None
    serial: int
    not_before: float
    not_after: float
    key: Ed25519PublicKey | None
    problem: IdentityRefused | None = None


class _Watched:
    """A file read again when its (mtime, size, inode) changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stamp: tuple[int, int, int] | None = None

    def changed(self) -> bool:
        try:
            status = os.stat(self.path)
            stamp = (status.st_mtime_ns, status.st_size, status.st_ino)
        except OSError:
            stamp = (0, 0, 0)
        if stamp == self.stamp:
            return False
        self.stamp = stamp
        return True


class TrustStore:
    """The cluster CA's certificate and revocation list, as a receiving node checks signers.

    ``ca_file`` and ``crl_file`` (optional: no list, nothing revoked) are PEM files, read again
    when they change (looked at no more often than every ``check_interval`` seconds). The
    constructor raises IdentityError when they cannot be read; later, a file that becomes
    unreadable makes :meth:`verify` refuse everything until it is replaced. Parsed certificates
    are kept by their DER bytes, so verifying many batches of one node parses its certificate once.
    The list's ``next_update`` is not enforced: the operator replaces the list on each revocation,
    and an old list still holds every revocation it ever had.
    """

    CACHE_SIZE = 1024

    def __init__(self, ca_file: str | Path, crl_file: str | Path | None = None, *, check_interval: float = 1.0) -> None:
        self.ca_file = Path(ca_file)
        self.crl_file = Path(crl_file) if crl_file is not None else None
        self.check_interval = check_interval
        self._watched = [_Watched(self.ca_file)] + ([_Watched(self.crl_file)] if self.crl_file else [])
        self._lock = threading.Lock()
        self._checked_at = 0.0
        self._cache: dict[bytes, _Checked] = {}
        self._problem: IdentityRefused | None = None
        self._ca: x509.Certificate | None = None
        self._revoked: frozenset[int] = frozenset()
        self._refresh(time.monotonic())
        if self._problem is not None:
            raise IdentityError(self._problem.reason)

    def _refresh(self, now: float) -> None:
        with self._lock:
            self._checked_at = now
            changed = [w.changed() for w in self._watched]  # every stamp taken, not just the first change
            if not any(changed):
                return
            try:
                ca, revoked = self._load()
            except IdentityError as error:
                log.error("cluster trust store: %s", error)
                self._problem = IdentityRefused("trust-store", f"this node's trust store cannot be used: {error}")
                return
            if self._ca is not None and ca != self._ca:
                log.info("cluster trust store: the CA certificate %s changed", self.ca_file)
            self._ca, self._revoked, self._problem = ca, revoked, None
            self._cache = {}

    def _load(self) -> tuple[x509.Certificate, frozenset[int]]:
        ca = read_certificate(self.ca_file, "cluster CA certificate",
                              "copy ca.pem of the cluster's PKI directory here again")
        ca_key = _ed25519(ca)
        if self.crl_file is None:
            return ca, frozenset()
        remedy = "copy crl.pem of the cluster's PKI directory here again"
        crl = read_crl(self.crl_file, remedy)
        if crl.issuer != ca.subject or not crl.is_signature_valid(ca_key):
            raise IdentityError(f"{self.crl_file}: the revocation list is not signed by the CA of {self.ca_file}; "
                                f"{remedy}")
        return ca, frozenset(entry.serial_number for entry in crl)

    def verify(self, node_id: str, certificate_der: bytes, data: bytes, signature: bytes) -> None:
        """Accept ``signature`` over ``data`` by node ``node_id`` presenting ``certificate_der``, or
        raise IdentityRefused saying why not."""
        now = time.monotonic()
        if now - self._checked_at >= self.check_interval:
            self._refresh(now)
        if self._problem is not None:
            raise self._problem
        checked = self._cache.get(certificate_der)
        if checked is None:
            checked = self._check(certificate_der)
        if checked.problem is not None:
            raise checked.problem
        if checked.node_id != node_id:
            raise IdentityRefused("wrong-node", f"the certificate presented as node {node_id!r} is the certificate "
                                                f"of node {checked.node_id!r}")
        if checked.serial in self._revoked:
            raise IdentityRefused("revoked", f"the certificate of node {node_id!r} (serial {checked.serial:x}) is "
                                             "revoked")
        wall = time.time()
        if wall < checked.not_before:
            raise IdentityRefused("not-yet-valid", f"the certificate of node {node_id!r} is not valid yet (from "
                                                   f"{_utc(checked.not_before)})")
        if wall > checked.not_after:
            raise IdentityRefused("expired", f"the certificate of node {node_id!r} expired at "
                                             f"{_utc(checked.not_after)}")
        try:
            checked.key.verify(signature, data)  # type: ignore[union-attr]
        except InvalidSignature:
            raise IdentityRefused("bad-signature", f"the signature does not match the data and the certificate of "
                                                   f"node {node_id!r} (forged or altered)") from None

    def _check(self, certificate_der: bytes) -> _Checked:
        ca = self._ca
        assert ca is not None
        try:
            certificate = x509.load_der_x509_certificate(certificate_der)
        except ValueError as error:
            return self._keep(certificate_der, _Checked(None, 0, 0, 0, None, IdentityRefused(
                "not-a-node-certificate", f"the presented certificate cannot be read ({error})")))
        try:
            certificate.verify_directly_issued_by(ca)
            issued = True
        except (ValueError, TypeError, InvalidSignature):
            issued = False
        problem = None
        key = certificate.public_key()
        if not issued:
            problem = IdentityRefused("unknown-ca", f"the certificate {certificate.subject.rfc4514_string()} is not "
                                                    f"issued by this cluster's CA ({ca.subject.rfc4514_string()})")
        elif not isinstance(key, Ed25519PublicKey) or certificate_node_id(certificate) is None:
            problem = IdentityRefused("not-a-node-certificate", f"the certificate {certificate.subject.rfc4514_string()}"
                                                                " is not a node certificate")
        return self._keep(certificate_der, _Checked(
            certificate_node_id(certificate), certificate.serial_number,
            certificate.not_valid_before_utc.timestamp(), certificate.not_valid_after_utc.timestamp(),
            key if isinstance(key, Ed25519PublicKey) else None, problem))

    def _keep(self, certificate_der: bytes, checked: _Checked) -> _Checked:
        cache = self._cache
        if len(cache) >= self.CACHE_SIZE:
            cache.pop(next(iter(cache)), None)
        cache[certificate_der] = checked
        return checked


def _utc(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(timestamp))
