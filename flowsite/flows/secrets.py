"""The control plane's key for sensitive values: ``FLOWSITE_SENSITIVE_KEY`` (the sealing itself is
``engine.secrets``, shared with the nodes)."""

from __future__ import annotations

from django.conf import settings

from engine.secrets import PREFIX, SensitiveKey, SensitiveValueError

__all__ = ["PREFIX", "SensitiveKey", "SensitiveValueError", "current_key"]


def current_key() -> SensitiveKey:
    """The key named by the ``FLOWSITE_SENSITIVE_KEY`` setting."""
    passphrase = settings.FLOWSITE_SENSITIVE_KEY
    cached = _cache.get(passphrase)
    if cached is None:
        cached = _cache[passphrase] = SensitiveKey(passphrase)
    return cached


_cache: dict[str, SensitiveKey] = {}
