"""Reading Java keystores (JKS, NiFi's default keystore type) with pyjks: the private key and
certificate chain of a keystore, the trusted certificates of a truststore. Errors are
ValueErrors saying what failed; the SSL context service names the file."""

from __future__ import annotations

import jks
from cryptography import x509
from cryptography.hazmat.primitives import serialization

__all__ = ["jks_key_entry", "jks_trusted_certificates", "open_jks"]


def open_jks(data: bytes, password: str | None) -> jks.KeyStore:
    """The keystore in ``data``, its integrity checked with ``password`` (unchecked without one,
    as Java reads a truststore without a password). Raises ValueError."""
    try:
        store = jks.KeyStore.loads(data, password or None, try_decrypt_keys=False)
    except jks.util.KeystoreSignatureException:
        raise ValueError("the password does not open it (its integrity check failed: a wrong password, or a "
                         "damaged file)") from None
    except (jks.util.KeystoreException, ValueError, EOFError) as error:
        raise ValueError(f"it is not a readable JKS keystore ({error or type(error).__name__})") from None
    if store.store_type != "jks":
        raise ValueError(f"it is a {store.store_type.upper()} keystore, not JKS")
    return store


def jks_key_entry(store: jks.KeyStore, key_password: str) -> tuple[object, tuple[x509.Certificate, ...]]:
    """The private key of the keystore's (only, or first) private key entry and its certificate
    chain, the key decrypted with ``key_password``. Raises ValueError."""
    if not store.private_keys:
        raise ValueError("it holds no private key")
    alias, entry = next(iter(store.private_keys.items()))
    try:
        entry.decrypt(key_password)
    except jks.util.DecryptionFailureException:
        raise ValueError(f"the private key {alias!r} cannot be decrypted with that password (a wrong password: set "
                         "'Key Password' when the key's password differs from the Keystore Password)") from None
    if not entry.cert_chain:
        raise ValueError(f"the private key {alias!r} has no certificate")
    try:
        key = serialization.load_der_private_key(entry.pkey_pkcs8, None)
        chain = tuple(x509.load_der_x509_certificate(der) for _, der in entry.cert_chain)
    except ValueError as error:
        raise ValueError(f"the private key {alias!r} or its certificates cannot be read: {error}") from None
    return key, chain


def jks_trusted_certificates(store: jks.KeyStore) -> list[x509.Certificate]:
    """The certificates of the keystore's trusted certificate entries. Raises ValueError."""
    try:
        return [x509.load_der_x509_certificate(entry.cert) for entry in store.certs.values()]
    except ValueError as error:
        raise ValueError(f"it holds a certificate that cannot be read: {error}") from None
