"""Restricted components as NiFi 2 has them: a restricted type declares the capabilities it
needs (``read-filesystem``, ``write-filesystem``, ...). A tenant may use it only when an operator
granted the tenant every one of them, and a user only when, besides, they hold the tenant's
``use_restricted`` policy (regardless of restrictions) or ``restricted_<capability>`` for each.
The API, the portal, imports and deployment all ask here."""

from __future__ import annotations

from engine.components import UnknownComponentTypeError, default_registry
from flowsite.flows import access as policies
from engine.flow.loader import CAPABILITIES


def required_capabilities(type_name: str, kind: str = "processor") -> tuple[str, ...]:
    """The capabilities a component type needs; () for an unrestricted or unknown type."""
    registry = default_registry()
    try:
        cls = registry.processor(type_name) if kind == "processor" else registry.service(type_name)
    except UnknownComponentTypeError:
        return ()
    return tuple(cls.restricted)


def missing_for_tenant(tenant, capabilities) -> list[str]:
    """Those of ``capabilities`` an operator has not granted ``tenant``."""
    granted = set(tenant.capabilities)
    return [capability for capability in capabilities if capability not in granted]


def missing_for_user(access: policies.TenantAccess, capabilities) -> list[str]:
    """Those of ``capabilities`` the user may not use components for (no ``use_restricted``
    and no ``restricted_<capability>``)."""
    if access.has_global(policies.USE_RESTRICTED):
        return []
    return [capability for capability in capabilities if capability not in CAPABILITIES
            or not access.has_global(policies.restricted_policy(capability))]


def _listed(capabilities) -> str:
    return ", ".join(f"'{capability}'" for capability in capabilities)


def refusal(access: policies.TenantAccess, type_name: str, kind: str = "processor") -> str | None:
    """Why the user of ``access`` may not use ``type_name`` in the tenant, or None when they may."""
    needed = required_capabilities(type_name, kind)
    if not needed:
        return None
    tenant_lacks = missing_for_tenant(access.tenant, needed)
    if tenant_lacks:
        return (f"{type_name} is a restricted component requiring {_listed(needed)}: the tenant has not been "
                f"granted {_listed(tenant_lacks)} (a platform operator grants capabilities)")
    user_lacks = missing_for_user(access, needed)
    if user_lacks:
        policies_named = ", ".join(f"'{policies.restricted_policy(c)}'" for c in user_lacks)
        return (f"{type_name} is a restricted component requiring {_listed(needed)}: you do not hold the "
                f"tenant's {policies_named} (or '{policies.USE_RESTRICTED}') policy")
    return None


def tenant_refusal(tenant, type_name: str, kind: str = "processor") -> str | None:
    """Why ``tenant``'s flow may not run ``type_name`` (a capability it was not granted), or None."""
    needed = required_capabilities(type_name, kind)
    lacking = missing_for_tenant(tenant, needed)
    if not lacking:
        return None
    return (f"{type_name} is a restricted component requiring {_listed(needed)}, and the tenant has not been "
            f"granted {_listed(lacking)}")
