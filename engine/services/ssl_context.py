"""StandardSSLContextService: TLS contexts built from a keystore and a truststore."""

from __future__ import annotations

import os
import secrets
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from engine.components import (
    AllowableValue,
    ControllerService,
    ExpressionScope,
    PropertyDescriptor,
)
from engine.components import validators as v
from engine.confinement import OPERATOR, ConfinementError, Policy
from engine.services.apis import SSLContextProvider
from engine.services.java_keystore import jks_key_entry, jks_trusted_certificates, open_jks

__all__ = ["StandardRestrictedSSLContextService", "StandardSSLContextService", "StoreError", "load_keystore",
           "load_truststore"]

JKS = "JKS"
PKCS12 = "PKCS12"
PEM = "PEM"
STORE_TYPES = (JKS, PKCS12, PEM)
#: Java-only formats Flowsite cannot read; a flow naming them is told to convert.
_JAVA_STORE_TYPES = ("BCFKS", "JCEKS")


def _store_type(value: str, context) -> str | None:
    if value in STORE_TYPES:
        return None
    if value.upper() in _JAVA_STORE_TYPES:
        return (f"is {value!r}, a Java keystore format Flowsite cannot read: convert the file to PKCS12 "
                f"(keytool -importkeystore -srckeystore store.bcfks -destkeystore store.p12 -deststoretype "
                f"PKCS12) or to PEM")
    return f"is {value!r}, which is not one of the supported types: {', '.join(STORE_TYPES)}"


KEYSTORE = PropertyDescriptor(
    "Keystore Filename", description="The keystore: the private key and certificate chain this side presents. "
    "A Java keystore (JKS), a PKCS12 file (.p12, .pfx), or a PEM file holding the certificate chain (the node's "
    "own certificate first) and the private key.", expression_language=ExpressionScope.ENVIRONMENT, validators=[v.NON_EMPTY])
KEYSTORE_PASSWORD = PropertyDescriptor(
    "Keystore Password", description="The password of the keystore (for PEM: of the private key, when it is "
    "encrypted).", sensitive=True, validators=[v.NON_EMPTY])
KEY_PASSWORD = PropertyDescriptor(
    "key-password", display_name="Key Password", description="The password of the private key, when it differs "
    "from the Keystore Password.", sensitive=True, validators=[v.NON_EMPTY])
KEYSTORE_TYPE = PropertyDescriptor(
    "Keystore Type", description="The format of the keystore: JKS, PKCS12 or PEM. BCFKS keystores must be "
    "converted to PKCS12 first.", validators=[_store_type])
TRUSTSTORE = PropertyDescriptor(
    "Truststore Filename", description="The truststore: the certificates of the authorities this side trusts. A "
    "Java keystore (JKS, its trusted certificate entries), a PKCS12 file, or a PEM file of CA certificates. "
    "Without one, a client trusts the system's authorities and a server trusts no client certificate.",
    expression_language=ExpressionScope.ENVIRONMENT, validators=[v.NON_EMPTY])
TRUSTSTORE_PASSWORD = PropertyDescriptor(
    "Truststore Password", description="The password of a PKCS12 truststore (none for a PEM truststore); a JKS "
    "truststore's integrity is checked with it when it is set.", sensitive=True)
TRUSTSTORE_TYPE = PropertyDescriptor(
    "Truststore Type", description="The format of the truststore: JKS, PKCS12 or PEM.", validators=[_store_type])
_PROTOCOLS = (
    AllowableValue("SSL", "SSL", "Negotiate the latest TLS version both sides support"),
    AllowableValue("TLS", "TLS", "Negotiate the latest TLS version both sides support"),
    AllowableValue("TLSv1.2", "TLSv1.2", "Require TLS 1.2"),
    AllowableValue("TLSv1.3", "TLSv1.3", "Require TLS 1.3"),
)
TLS_PROTOCOL = PropertyDescriptor(
    "SSL Protocol", display_name="TLS Protocol", description="The TLS version to use: TLS (or SSL) negotiates the "
    "latest version both sides support (1.2 at least); TLSv1.2 and TLSv1.3 require that version.",
    default="TLS", allowed_values=_PROTOCOLS)

_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


class StoreError(ValueError):
    """A keystore or truststore that cannot be used (the message names the file and what failed)."""


@dataclass(frozen=True)
class KeyMaterial:
    """What a keystore holds: a private key and its certificate chain (the key's own certificate first)."""

    key: object
    chain: tuple[x509.Certificate, ...]


def load_keystore(path: str, store_type: str, password: str | None, key_password: str | None = None,
                  policy: Policy = OPERATOR) -> KeyMaterial:
    """The private key and certificate chain of a keystore, read through ``policy``; raises StoreError."""
    data = _read(path, "keystore", policy)
    if store_type == JKS:
        store = _open_jks(data, path, password, "keystore", "Keystore Password")
        try:
            return KeyMaterial(*jks_key_entry(store, key_password if key_password is not None else password or ""))
        except ValueError as error:
            raise StoreError(f"keystore {path!r}: {error}") from None
    if store_type == PKCS12:
        store = _open_pkcs12(data, path, password, "keystore", "Keystore Password")
        if key_password is not None and key_password != password:
            # PKCS12 protects the file and its keys with one password: a different Key Password
            # must open it as well, or the key could not be used.
            store = _open_pkcs12(data, path, key_password, "keystore", "Key Password")
        if store.key is None:
            raise StoreError(f"keystore {path!r} holds no private key")
        if store.cert is None:
            raise StoreError(f"keystore {path!r} holds no certificate for its private key")
        chain = (store.cert.certificate, *(extra.certificate for extra in store.additional_certs))
        return KeyMaterial(store.key, chain)
    key = _pem_private_key(data, path, key_password if key_password is not None else password)
    chain = tuple(_pem_certificates(data, path, "keystore"))
    public = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    for index, certificate in enumerate(chain):
        own = certificate.public_key().public_bytes(serialization.Encoding.DER,
                                                    serialization.PublicFormat.SubjectPublicKeyInfo)
        if own == public:
            return KeyMaterial(key, (certificate, *chain[:index], *chain[index + 1:]))
    raise StoreError(f"keystore {path!r} holds no certificate for its private key")


def load_truststore(path: str, store_type: str, password: str | None,
                    policy: Policy = OPERATOR) -> tuple[x509.Certificate, ...]:
    """The trusted certificates of a truststore, read through ``policy``; raises StoreError."""
    data = _read(path, "truststore", policy)
    if store_type == JKS:
        store = _open_jks(data, path, password, "truststore", "Truststore Password")
        try:
            certificates = jks_trusted_certificates(store)
        except ValueError as error:
            raise StoreError(f"truststore {path!r}: {error}") from None
    elif store_type == PKCS12:
        store = _open_pkcs12(data, path, password or None, "truststore", "Truststore Password")
        certificates = [extra.certificate for extra in store.additional_certs]
        if store.cert is not None:
            certificates.insert(0, store.cert.certificate)
    else:
        certificates = _pem_certificates(data, path, "truststore")
    if not certificates:
        raise StoreError(f"truststore {path!r} holds no certificate")
    return tuple(certificates)


def _read(path: str, kind: str, policy: Policy) -> bytes:
    try:
        policy.check_path(path)
    except ConfinementError as error:
        raise StoreError(f"{kind} {error}") from None
    file = Path(path)
    if not file.exists():
        raise StoreError(f"{kind} {path!r} does not exist")
    if not file.is_file():
        raise StoreError(f"{kind} {path!r} is not a file")
    try:
        with open(policy.open(path, os.O_RDONLY), "rb") as source:
            return source.read()
    except ConfinementError as error:
        raise StoreError(f"{kind} {error}") from None
    except OSError as error:
        raise StoreError(f"{kind} {path!r} cannot be read: {error.strerror or error}") from error


def _open_pkcs12(data: bytes, path: str, password: str | None, kind: str, password_name: str):
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError as error:
        raise StoreError(f"{kind} {path!r} could not be opened as PKCS12 with the {password_name} "
                         f"(wrong password, or not a PKCS12 file): {error}") from error


def _open_jks(data: bytes, path: str, password: str | None, kind: str, password_name: str):
    try:
        return open_jks(data, password)
    except ValueError as error:
        raise StoreError(f"{kind} {path!r} could not be opened as JKS with the {password_name}: {error}") from None


def _pem_private_key(data: bytes, path: str, password: str | None):
    if b"PRIVATE KEY-----" not in data:
        raise StoreError(f"keystore {path!r} holds no PEM private key")
    try:
        return serialization.load_pem_private_key(data, password.encode() if password else None)
    except TypeError as error:
        if password:  # a password given for a key that is not encrypted: the key is usable as it is
            return serialization.load_pem_private_key(data, None)
        raise StoreError(f"keystore {path!r}: the private key is encrypted and no password is set") from error
    except ValueError as error:
        raise StoreError(f"keystore {path!r}: the private key could not be read (wrong password, or a damaged "
                         f"key): {error}") from error


def _pem_certificates(data: bytes, path: str, kind: str) -> list[x509.Certificate]:
    if b"-----BEGIN CERTIFICATE-----" not in data:
        raise StoreError(f"{kind} {path!r} holds no PEM certificate")
    try:
        return x509.load_pem_x509_certificates(data)
    except ValueError as error:
        raise StoreError(f"{kind} {path!r} holds a certificate that cannot be read: {error}") from error


class StandardSSLContextService(ControllerService, SSLContextProvider):
    """Provides TLS contexts, for clients and servers, from a keystore (the key and certificate
    this side presents) and a truststore (the authorities it trusts).

    The stores may be Java keystores (JKS, NiFi's usual type: a keystore's first private key
    entry with its chain, a truststore's trusted certificate entries), PKCS12 files or PEM files
    (a PEM keystore holds the certificate chain and the private key, a PEM truststore the CA
    certificates). A BCFKS store is reported invalid with the command that converts it.
    Validation opens both stores with their passwords, so a wrong password or a damaged file is
    reported before anything uses the service; the stores are read again when it is enabled.

    A client context verifies the server's certificate and host name against the truststore (the
    system's authorities when there is none) and presents the keystore's certificate when asked.
    A server context needs a keystore; whether it asks clients for a certificate is the
    processor's choice. The private key is handed to the TLS library through a short-lived file
    readable by the node's user only, encrypted with a one-time password.
    """

    nifi_type = "org.apache.nifi.ssl.StandardSSLContextService"
    tags = ("ssl", "secure", "certificate", "keystore", "truststore", "jks", "p12", "pkcs12", "pem", "tls")
    properties = (KEYSTORE, KEYSTORE_PASSWORD, KEY_PASSWORD, KEYSTORE_TYPE, TRUSTSTORE, TRUSTSTORE_PASSWORD,
                  TRUSTSTORE_TYPE, TLS_PROTOCOL)
    provides = (SSLContextProvider,)

    def __init__(self) -> None:
        self._keys: KeyMaterial | None = None
        self._trusted: tuple[x509.Certificate, ...] = ()
        self._protocol = "TLS"

    def validate(self, context):
        keystore = _evaluated(context, KEYSTORE)
        keystore_type = context.property(KEYSTORE_TYPE).value
        keystore_password = context.property(KEYSTORE_PASSWORD).value
        truststore = _evaluated(context, TRUSTSTORE)
        truststore_type = context.property(TRUSTSTORE_TYPE).value
        if not (keystore or keystore_type or keystore_password or truststore or truststore_type):
            yield "either a keystore or a truststore must be configured"
        if keystore or keystore_type or keystore_password:
            if not keystore or not keystore_type:
                yield "a keystore needs both 'Keystore Filename' and 'Keystore Type'"
            elif keystore_type in (JKS, PKCS12) and not keystore_password:
                yield f"a {keystore_type} keystore needs a 'Keystore Password'"
            elif keystore_type in STORE_TYPES:
                try:
                    load_keystore(keystore, keystore_type, keystore_password, context.property(KEY_PASSWORD).value,
                                  context.confinement)
                except StoreError as error:
                    yield str(error)
        if truststore or truststore_type:
            if not truststore or not truststore_type:
                yield "a truststore needs both 'Truststore Filename' and 'Truststore Type'"
            elif truststore_type in STORE_TYPES:
                try:
                    load_truststore(truststore, truststore_type, context.property(TRUSTSTORE_PASSWORD).value,
                                    context.confinement)
                except StoreError as error:
                    yield str(error)

    def on_enabled(self, context, init):
        keystore = _evaluated(context, KEYSTORE)
        truststore = _evaluated(context, TRUSTSTORE)
        self._keys = None
        self._trusted = ()
        if keystore:
            self._keys = load_keystore(keystore, context.property(KEYSTORE_TYPE).value,
                                       context.property(KEYSTORE_PASSWORD).value, context.property(KEY_PASSWORD).value,
                                       context.confinement)
        if truststore:
            self._trusted = load_truststore(truststore, context.property(TRUSTSTORE_TYPE).value,
                                            context.property(TRUSTSTORE_PASSWORD).value, context.confinement)
        self._protocol = context.property(TLS_PROTOCOL).value or "TLS"

    def on_disabled(self):
        self._keys = None
        self._trusted = ()

    def create_context(self, server_side: bool = False) -> ssl.SSLContext:
        if server_side and self._keys is None:
            raise ssl.SSLError("a TLS server needs a keystore: the SSL Context Service has none")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server_side else ssl.PROTOCOL_TLS_CLIENT)
        version = _VERSIONS.get(self._protocol)
        context.minimum_version = version or ssl.TLSVersion.TLSv1_2
        if version is not None:
            context.maximum_version = version
        if self._trusted:
            context.load_verify_locations(cadata="".join(
                certificate.public_bytes(serialization.Encoding.PEM).decode("ascii") for certificate in self._trusted))
        elif not server_side:
            context.load_default_certs(ssl.Purpose.SERVER_AUTH)
        if self._keys is not None:
            _load_key_material(context, self._keys)
        return context


class StandardRestrictedSSLContextService(StandardSSLContextService):
    """Provides TLS contexts like StandardSSLContextService, offering only current TLS versions.

    The same keystore and truststore rules apply (JKS, PKCS12 or PEM files).
    """

    nifi_type = "org.apache.nifi.ssl.StandardRestrictedSSLContextService"
    properties = (KEYSTORE, KEYSTORE_PASSWORD, KEY_PASSWORD, KEYSTORE_TYPE, TRUSTSTORE, TRUSTSTORE_PASSWORD,
                  TRUSTSTORE_TYPE,
                  PropertyDescriptor("SSL Protocol", display_name="TLS Protocol",
                                     description=TLS_PROTOCOL.description, default="TLS",
                                     allowed_values=_PROTOCOLS[1:]))


def _evaluated(context, descriptor: PropertyDescriptor) -> str | None:
    value = context.property(descriptor).evaluate().value
    return value.strip() if value and value.strip() else None


def _load_key_material(context: ssl.SSLContext, keys: KeyMaterial) -> None:
    """Give the key and chain to ``context``: the ssl module only reads them from a file."""
    one_time = secrets.token_hex(16)
    pem = b"".join(certificate.public_bytes(serialization.Encoding.PEM) for certificate in keys.chain)
    pem += keys.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.BestAvailableEncryption(one_time.encode()))
    descriptor, path = tempfile.mkstemp(prefix="flowsite-tls-", suffix=".pem")
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(pem)
        context.load_cert_chain(path, password=one_time)
    finally:
        os.unlink(path)
