"""The control plane's keys for sensitive values: ``FLOWSITE_SENSITIVE_KEY`` is the master key,
and each tenant's values are sealed with that tenant's own key derived from it (the sealing
itself is ``engine.secrets``, shared with the nodes).

A value stored in the database is bound to a ``Binding``: the tenant whose key seals it and the
place it belongs to (``flowsite.flows.definition.property_context`` and
``parameter_context_binding`` make them).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from engine.secrets import PREFIX, MasterKey, SensitiveKey, SensitiveValueError

__all__ = ["PREFIX", "Binding", "MasterKey", "SensitiveValueError", "TenantKeys", "current_key", "master_key"]


@dataclass(frozen=True)
class Binding:
    """Where a sealed value belongs: the tenant (its id) and the place (the associated data)."""

    tenant_id: str
    place: str


class TenantKeys:
    """Seals and opens each value with the key of the tenant its ``Binding`` names."""

    def __init__(self, master: MasterKey) -> None:
        self.master = master

    def key(self, tenant_id: str) -> SensitiveKey:
        """The key of the tenant whose id is ``tenant_id``."""
        return self.master.tenant(tenant_id)

    def seal(self, value: str, binding: Binding) -> str:
        """``value`` sealed with its tenant's key and bound to its place."""
        return self.key(binding.tenant_id).seal(value, binding.place)

    def open(self, sealed: str, binding: Binding) -> str:
        """The value sealed at ``binding``; SensitiveValueError when it does not open."""
        return self.key(binding.tenant_id).open(sealed, binding.place)


def master_key() -> MasterKey:
    """The master key the ``FLOWSITE_SENSITIVE_KEY`` setting names (opening also with
    ``FLOWSITE_PREVIOUS_SENSITIVE_KEY`` during a rotation)."""
    passphrases = (settings.FLOWSITE_SENSITIVE_KEY, getattr(settings, "FLOWSITE_PREVIOUS_SENSITIVE_KEY", ""))
    cached = _cache.get(passphrases)
    if cached is None:
        cached = _cache[passphrases] = MasterKey(passphrases[0], [p for p in passphrases[1:] if p])
    return cached


def current_key() -> TenantKeys:
    """The tenants' keys under the current master key."""
    return TenantKeys(master_key())


_cache: dict[tuple[str, str], MasterKey] = {}
