"""Who signed a batch or an acknowledgement: the signer and verifier the transfer relies on.

The node PKI (``engine.cluster.identity``) provides both; when none is configured,
:class:`ClusterKeyTrust` signs with an HMAC under a key derived from the cluster key, so an
unconfigured cluster still refuses what anyone without the key forged.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Protocol

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = ["ClusterKeyTrust", "Signer", "SignatureRefused", "Verifier"]


class Signer(Protocol):
    """This node's identity: its id, its certificate (DER, empty without PKI) and its key."""

    node_id: str
    certificate_der: bytes

    def sign(self, data: bytes) -> bytes: ...


class Verifier(Protocol):
    """Checks that ``signature`` over ``data`` is by node ``node_id``; raises when it is not."""

    def verify(self, node_id: str, certificate_der: bytes, data: bytes, signature: bytes) -> None: ...


class SignatureRefused(ValueError):
    """A signature that does not prove what it claims."""


class ClusterKeyTrust:
    """Signer and verifier by HMAC-SHA256 under a key derived (HKDF) from the cluster key.

    The MAC covers the node id, so a node cannot be impersonated by one that lacks the key;
    it cannot tell nodes that hold the key apart (that is what the PKI adds).
    """

    certificate_der = b""

    def __init__(self, secret: str, node_id: str = "") -> None:
        if not secret:
            raise ValueError("the cluster key is empty")
        self.node_id = node_id
        self._key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"flowsite cluster",
                         info=b"load balance hmac-sha256").derive(secret.encode())

    def _mac(self, node_id: str, data: bytes) -> bytes:
        return hmac.new(self._key, node_id.encode() + b"\n" + data, hashlib.sha256).digest()

    def sign(self, data: bytes) -> bytes:
        """The MAC of ``data`` as this node's."""
        return self._mac(self.node_id, data)

    def verify(self, node_id: str, certificate_der: bytes, data: bytes, signature: bytes) -> None:
        """Raise :class:`SignatureRefused` unless ``signature`` is node ``node_id``'s MAC of ``data``."""
        if not isinstance(signature, bytes) or not hmac.compare_digest(self._mac(node_id, data), signature):
            raise SignatureRefused(f"the signature is not node {node_id}'s under the cluster key")
