"""Confinement of components on a node, enforced by the engine.

A component inside a tenant's group (the flow's ``tenants`` section) may touch only its
tenant's file roots, may not connect to this machine unless the tenant's allowlist opens it,
may listen only on the tenant's ports and may be a restricted type only when the tenant holds
each capability it needs. Every component, a tenant's or the operator's, is refused ``/proc``,
``/sys``, ``/dev``, the node's data directory, the protected paths, the platform's own services
and link-local / cloud metadata addresses. ``NodeConfinement`` holds the node-wide settings and
the tenants; components reach their ``Policy`` through their context (``context.confinement``,
``init.confinement`` for services).

Guarantees: a path is checked once resolved (symbolic links, ``..``); files are opened by name
inside their checked directory without following a final link, and the opened descriptor's real
path is checked again, so swapping a link while a file is opened reads or writes nothing
outside. Directory creation and moves are checked by path only: a race there can at worst
create an empty directory outside. Connections go to the very address that was checked (no
second resolution, so no DNS rebinding).
"""

from engine.confinement.policy import ConfinementError, NodeConfinement, Policy, capability_problems
from engine.confinement.settings import ConfinementSettings

__all__ = ["OPERATOR", "ConfinementError", "ConfinementSettings", "NodeConfinement", "Policy",
           "capability_problems"]

#: The policy of a component run outside any node (tests, tools): the fixed refusals only.
OPERATOR = NodeConfinement().policy(None)
