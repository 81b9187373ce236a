"""Encryption of sensitive property values at rest.

Values are sealed with AES-256-GCM under a key derived (HKDF-SHA256) from
``FLOWSITE_SENSITIVE_KEY``; the associated data binds each value to the component and property
it belongs to, so a value copied elsewhere in the database does not decrypt. A sealed value
reads ``enc:v1:<key id>:<base64 of nonce and ciphertext>``; the key id says which key sealed it
(``manage.py rotate_sensitive_key`` re-seals everything under a new key). Nodes hold the same key
and open the sealed values of the cluster's flow with it (``engine.flow.sealed``).
"""

from __future__ import annotations

import base64
import hashlib
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = ["PREFIX", "SensitiveKey", "SensitiveValueError"]

PREFIX = "enc:v1:"


class SensitiveValueError(ValueError):
    """A sealed value that cannot be opened: another key sealed it, or it was altered."""


class SensitiveKey:
    """One key for sensitive values, derived from a passphrase of any length."""

    def __init__(self, passphrase: str) -> None:
        if not passphrase:
            raise ValueError("the sensitive-properties key is empty")
        material = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"flowsite sensitive properties",
                        info=b"aes-256-gcm").derive(passphrase.encode())
        self._aead = AESGCM(material)
        self.key_id = hashlib.sha256(material).hexdigest()[:8]

    def seal(self, value: str, context: str) -> str:
        """``value`` encrypted and bound to ``context`` (e.g. ``<component id>/<property>``)."""
        nonce = os.urandom(12)
        sealed = self._aead.encrypt(nonce, value.encode(), context.encode())
        return f"{PREFIX}{self.key_id}:{base64.b64encode(nonce + sealed).decode()}"

    def open(self, sealed: str, context: str) -> str:
        """The value ``seal`` sealed with this key and ``context``."""
        if not sealed.startswith(PREFIX):
            raise SensitiveValueError("not a sealed value")
        key_id, _, payload = sealed[len(PREFIX):].partition(":")
        if key_id != self.key_id:
            raise SensitiveValueError(f"sealed under key {key_id}, not the current key {self.key_id}")
        try:
            raw = base64.b64decode(payload, validate=True)
            return self._aead.decrypt(raw[:12], raw[12:], context.encode()).decode()
        except (InvalidTag, ValueError) as error:
            raise SensitiveValueError("the sealed value was altered or belongs elsewhere") from error
