"""Encryption of sensitive property values at rest and on the way to the nodes.

``MasterKey`` is ``FLOWSITE_SENSITIVE_KEY``. It never seals anything itself: each tenant has a
key of its own derived from it (HKDF-SHA256, the tenant's id as the info), and components
outside every tenant use a platform key derived the same way, so a tenant's value does not open
with another tenant's key. Values are sealed with AES-256-GCM; the associated data binds each
value to the component and property it belongs to, so a value copied elsewhere does not open.

A sealed value reads ``enc:v2:<base64 of nonce and ciphertext>``: nothing in it tells which key
sealed it, so a guessed key can only be tested by a full decryption. Opening tries the current
master key, then the previous ones given during a rotation. Values of the former format
(``enc:v1:<key id>:…``, one key for everything) still open until they are re-sealed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from typing import Iterable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = ["LEGACY_PREFIX", "PREFIX", "MasterKey", "SensitiveKey", "SensitiveValueError", "is_sealed",
           "key_strength_problem"]

PREFIX = "enc:v2:"
#: The former format, which carried a hash of the key (``enc:v1:<key id>:<base64>``).
LEGACY_PREFIX = "enc:v1:"
#: The shortest master key production accepts, in bytes of key material.
MINIMUM_KEY_BYTES = 32
_SALT = b"flowsite sensitive properties"


class SensitiveValueError(ValueError):
    """A sealed value that cannot be opened: another key sealed it, or it was altered."""


def is_sealed(value: object) -> bool:
    """Whether ``value`` is a sealed value (either format)."""
    return isinstance(value, str) and (value.startswith(PREFIX) or value.startswith(LEGACY_PREFIX))


def _decode_key(text: str) -> bytes | None:
    """The bytes of a key written as hex or (URL-safe or standard) base64, else None."""
    stripped = text.strip()
    if len(stripped) % 2 == 0 and all(c in "0123456789abcdefABCDEF" for c in stripped):
        return bytes.fromhex(stripped)
    try:
        text = stripped.rstrip("=").replace("+", "-").replace("/", "_")
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        return None


def key_strength_problem(text: str, name: str = "FLOWSITE_SENSITIVE_KEY") -> str | None:
    """Why ``text`` is not a strong enough key (None when it is): production keys are at least
    32 random bytes written as hex (64 characters) or base64 (43 characters, as
    ``secrets.token_urlsafe(32)`` makes them)."""
    how = ("generate one with: python -c 'import secrets; print(secrets.token_urlsafe(32))' "
           "(or openssl rand -hex 32)")
    material = _decode_key(text)
    if material is None or len(material) < MINIMUM_KEY_BYTES:
        return (f"{name} must be at least {MINIMUM_KEY_BYTES} random bytes written as hex or base64 "
                f"(it is {len(text)} characters that do not decode to {MINIMUM_KEY_BYTES} bytes); {how}")
    if len(set(material)) < MINIMUM_KEY_BYTES // 2 or len(set(text.strip())) < 12:
        return f"{name} does not look random (too few distinct bytes); {how}"
    return None


def _derive(passphrase: str, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=info).derive(passphrase.encode())


class _LegacyKey:
    """The single key of the ``enc:v1:`` format, for opening values sealed before per-tenant keys."""

    def __init__(self, passphrase: str) -> None:
        material = _derive(passphrase, b"aes-256-gcm")
        self.aead = AESGCM(material)
        self.key_id = hashlib.sha256(material).hexdigest()[:8]


class SensitiveKey:
    """The key of one scope (a tenant or the platform): seals with the current master key's
    derivation and opens with it or, during a rotation, a previous one's."""

    def __init__(self, keys: list[AESGCM], legacy: list[_LegacyKey]) -> None:
        self._keys = keys
        self._legacy = legacy

    def seal(self, value: str, context: str) -> str:
        """``value`` encrypted and bound to ``context`` (e.g. ``<component id>/<property>``)."""
        nonce = os.urandom(12)
        sealed = self._keys[0].encrypt(nonce, value.encode(), context.encode())
        return f"{PREFIX}{base64.b64encode(nonce + sealed).decode()}"

    def open(self, sealed: str, context: str) -> str:
        """The value ``seal`` sealed with this scope's key and ``context``."""
        if sealed.startswith(LEGACY_PREFIX):
            key_id, _, payload = sealed[len(LEGACY_PREFIX):].partition(":")
            candidates = [legacy.aead for legacy in self._legacy if legacy.key_id == key_id]
        elif sealed.startswith(PREFIX):
            payload, candidates = sealed[len(PREFIX):], self._keys
        else:
            raise SensitiveValueError("not a sealed value")
        try:
            raw = base64.b64decode(payload, validate=True)
        except ValueError:
            raise SensitiveValueError("the sealed value is not base64") from None
        for aead in candidates:
            try:
                return aead.decrypt(raw[:12], raw[12:], context.encode()).decode()
            except (InvalidTag, ValueError):
                continue
        raise SensitiveValueError("it does not open with this key: another key (or another tenant's) sealed it, "
                                  "or it was altered or belongs elsewhere")


class MasterKey:
    """``FLOWSITE_SENSITIVE_KEY`` (and, during a rotation, the ``previous`` ones): the source of
    every tenant's key and of the platform key."""

    def __init__(self, passphrase: str, previous: Iterable[str] = ()) -> None:
        self._passphrases = [passphrase, *previous]
        if not all(self._passphrases):
            raise ValueError("the sensitive-properties key is empty")
        self._legacy = [_LegacyKey(p) for p in self._passphrases]
        self._scopes: dict[str, SensitiveKey] = {}

    def _scope(self, info: str) -> SensitiveKey:
        key = self._scopes.get(info)
        if key is None:
            key = self._scopes[info] = SensitiveKey([AESGCM(_derive(p, info.encode())) for p in self._passphrases],
                                                    self._legacy)
        return key

    def tenant(self, tenant_id: str) -> SensitiveKey:
        """The key of the tenant whose id is ``tenant_id``."""
        if not tenant_id:
            raise ValueError("a tenant key needs the tenant's id")
        return self._scope(f"tenant:{tenant_id}")

    def platform(self) -> SensitiveKey:
        """The key of values outside every tenant (the operator's own flow)."""
        return self._scope("platform")

    def same_as(self, other: MasterKey) -> bool:
        """Whether ``other``'s current key is this one's."""
        return self._passphrases[0] == other._passphrases[0]
