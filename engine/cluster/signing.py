"""Authentication of node commands and their replies: HMAC-SHA256 under the cluster key.

Whoever can write to the cluster's Redis could otherwise tell any node to stop, start or empty
anything. Every command therefore carries ``issued_at`` (seconds since the epoch) and a MAC over
its canonical content — cluster, target node, id, kind, arguments, reply list, deadline and
``issued_at`` as sorted compact JSON — under a key derived (HKDF) from ``FLOWSITE_CLUSTER_KEY``,
which the control plane and the nodes hold (never ``SECRET_KEY``, which nodes do not get).

A node refuses a command whose MAC does not match (forged, or altered on the way, or sent to
another node or cluster), one issued outside ``WINDOW`` seconds of its clock (expired), one
issued before the node started listening (older than the node, so never meant for it), and one
whose id it has already accepted within the window (replayed). Replies are signed the same way
(over request id, node, outcome and result), and the requester drops a reply that does not verify.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = ["DEVELOPMENT_CLUSTER_KEY", "WINDOW", "CommandRefused", "CommandSigner", "ReplayGuard"]

#: How far a command's ``issued_at`` may be from the node's clock, in seconds.
WINDOW = 300.0
#: How much earlier than the node's start a command may be issued (clocks differ a little).
START_SKEW = 5.0
#: What development derives its cluster key from when FLOWSITE_CLUSTER_KEY is not set.
DEVELOPMENT_CLUSTER_KEY = "development-only-cluster-key-never-use-it-in-production"


class CommandRefused(ValueError):
    """A command a node does not run; the message says why."""


def _canonical(content: dict[str, Any]) -> bytes:
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class CommandSigner:
    """Signs and verifies commands and replies with the key derived from ``secret``."""

    def __init__(self, secret: str) -> None:
        if not secret:
            raise ValueError("the cluster key is empty")
        self._key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"flowsite cluster",
                         info=b"node commands hmac-sha256").derive(secret.encode())

    def mac(self, purpose: str, content: dict[str, Any]) -> str:
        """The MAC of ``content`` for ``purpose`` (``command`` or ``reply``), as hex."""
        return hmac.new(self._key, purpose.encode() + b"\n" + _canonical(content), hashlib.sha256).hexdigest()

    def valid(self, purpose: str, content: dict[str, Any], mac: object) -> bool:
        """Whether ``mac`` is the MAC of ``content`` for ``purpose``."""
        return isinstance(mac, str) and hmac.compare_digest(self.mac(purpose, content), mac)


class ReplayGuard:
    """What a node remembers to refuse expired and replayed commands: the ids it accepted within
    the window, and when it started listening."""

    def __init__(self, window: float = WINDOW) -> None:
        self.window = window
        self.started_at = time.time()
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def check(self, command_id: str, issued_at: float) -> None:
        """Accept ``command_id`` once; raises CommandRefused saying why it is refused."""
        now = time.time()
        if abs(now - issued_at) > self.window:
            raise CommandRefused(f"expired: issued {now - issued_at:.0f} s from this node's clock "
                                 f"(the window is {self.window:.0f} s)")
        if issued_at < self.started_at - START_SKEW:
            raise CommandRefused("issued before this node started listening")
        with self._lock:
            for old in [i for i, at in self._seen.items() if now - at > 2 * self.window]:
                del self._seen[old]
            if command_id in self._seen:
                raise CommandRefused(f"replayed: command {command_id} was already accepted")
            self._seen[command_id] = now
