"""Who may do what in a tenant, on NiFi's access-policy model.

Policies are object permissions (django-guardian's direct-foreign-key tables): global ones on the
tenant, component ones on a component's ``Component`` row. A component policy is inherited:
when a component has no policy of its own for an action (nobody holds that permission on it),
the nearest ancestor group that has one decides. Above the root group, viewing and modifying
fall back to the tenant's global "view the flow" and "modify the flow", operating falls back to
modifying, and the data and provenance policies must be granted somewhere in the tree.

Only members of a tenant hold anything in it; to everyone else its objects do not exist.
``TenantAccess`` loads every grant of one tenant in a few queries and answers from memory.
"""

from __future__ import annotations

import uuid
from functools import cached_property

from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType

from engine.flow.loader import CAPABILITIES
from flowsite.flows.models import Component, ComponentGroupPermission, ComponentUserPermission
from flowsite.tenancy.models import Membership, Tenant, TenantGroupPermission, TenantUserPermission

#: Component actions and the permission codenames that hold them.
VIEW = "view_component"
MODIFY = "modify_component"
VIEW_DATA = "view_data"
MODIFY_DATA = "modify_data"
VIEW_PROVENANCE = "view_provenance"
OPERATE = "operate_component"
COMPONENT_ACTIONS = (VIEW, MODIFY, VIEW_DATA, MODIFY_DATA, VIEW_PROVENANCE, OPERATE)

#: Global policies of a tenant.
VIEW_FLOW = "view_flow"
MODIFY_FLOW = "modify_flow"
MANAGE_POLICIES = "manage_policies"
QUERY_PROVENANCE = "query_provenance"
VIEW_CLUSTER = "view_cluster"
USE_RESTRICTED = "use_restricted"


def restricted_policy(capability: str) -> str:
    """The global policy that allows components requiring ``capability`` (e.g. ``read-filesystem``)."""
    return "restricted_" + capability.replace("-", "_")


RESTRICTED_POLICIES = tuple(restricted_policy(capability) for capability in CAPABILITIES)
GLOBAL_ACTIONS = (VIEW_FLOW, MODIFY_FLOW, MANAGE_POLICIES, QUERY_PROVENANCE, VIEW_CLUSTER, USE_RESTRICTED,
                  *RESTRICTED_POLICIES)

_GLOBAL_FALLBACK = {VIEW: VIEW_FLOW, MODIFY: MODIFY_FLOW}


class TenantAccess:
    """What one user may do in one tenant."""

    def __init__(self, user, tenant: Tenant) -> None:
        self.user = user
        self.tenant = tenant
        self._permitted: dict[str, list[uuid.UUID] | None] = {}

    @cached_property
    def is_member(self) -> bool:
        return bool(self.user and self.user.is_authenticated and
                    Membership.objects.filter(tenant=self.tenant, user=self.user).exists())

    @cached_property
    def _group_ids(self) -> set[int]:
        return set(self.user.groups.values_list("id", flat=True))

    @cached_property
    def _global(self) -> set[str]:
        if not self.is_member:
            return set()
        if self.user.is_superuser:
            return set(GLOBAL_ACTIONS)
        held = set(TenantUserPermission.objects.filter(content_object=self.tenant, user=self.user)
                   .values_list("permission__codename", flat=True))
        held |= set(TenantGroupPermission.objects.filter(content_object=self.tenant, group__in=self._group_ids)
                    .values_list("permission__codename", flat=True))
        return held

    @cached_property
    def _policies(self) -> tuple[set[tuple[uuid.UUID, str]], set[tuple[uuid.UUID, str]]]:
        """(every (component, action) with a policy of its own, those this user holds)."""
        exists: set[tuple[uuid.UUID, str]] = set()
        held: set[tuple[uuid.UUID, str]] = set()
        for component_id, codename, user_id in ComponentUserPermission.objects.filter(
                content_object__tenant=self.tenant).values_list("content_object_id", "permission__codename", "user_id"):
            exists.add((component_id, codename))
            if user_id == self.user.pk:
                held.add((component_id, codename))
        for component_id, codename, group_id in ComponentGroupPermission.objects.filter(
                content_object__tenant=self.tenant).values_list("content_object_id", "permission__codename",
                                                                "group_id"):
            exists.add((component_id, codename))
            if group_id in self._group_ids:
                held.add((component_id, codename))
        return exists, held

    @cached_property
    def _parents(self) -> dict[uuid.UUID, uuid.UUID | None]:
        return dict(Component.objects.filter(tenant=self.tenant).values_list("id", "parent_id"))

    def has_global(self, action: str) -> bool:
        """True when the user holds the global policy ``action`` of the tenant."""
        return action in self._global

    def can(self, component: Component | uuid.UUID, action: str) -> bool:
        """True when the user may perform ``action`` on ``component`` (see the module docstring)."""
        if not self.is_member:
            return False
        if self.user.is_superuser:
            return True
        component_id = component if isinstance(component, uuid.UUID) else component.pk
        decided = self._decide(component_id, action)
        if decided is not None:
            return decided
        if action == OPERATE:
            return self.can(component_id, MODIFY)
        fallback = _GLOBAL_FALLBACK.get(action)
        return fallback is not None and self.has_global(fallback)

    def permitted_ids(self, action: str) -> list[uuid.UUID] | None:
        """The ids of the tenant's components on which the user may perform ``action``; None when
        that is every one of them (a filter by id would only cost time). Worked out once per action."""
        if action not in self._permitted:
            permitted = [component_id for component_id in self._parents if self.can(component_id, action)]
            self._permitted[action] = None if len(permitted) == len(self._parents) else permitted
        return self._permitted[action]

    def _decide(self, component_id: uuid.UUID | None, action: str) -> bool | None:
        exists, held = self._policies
        seen = set()
        while component_id is not None and component_id not in seen:
            seen.add(component_id)
            if (component_id, action) in exists:
                return (component_id, action) in held
            component_id = self._parents.get(component_id)
        return None


def _permissions(model, kind: str, codenames: tuple[str, ...], known: tuple[str, ...]) -> list[Permission]:
    unknown = [codename for codename in codenames if codename not in known]
    if unknown:
        raise ValueError(f"unknown {kind} action {unknown[0]!r}")
    if not codenames:
        return []
    permissions = list(Permission.objects.filter(content_type=ContentType.objects.get_for_model(model),
                                                 codename__in=codenames))
    missing = set(codenames) - {permission.codename for permission in permissions}
    if missing:
        raise Permission.DoesNotExist(f"no permission {sorted(missing)[0]!r}: run the migrations")
    return permissions


def _hold(table, holder: dict, target, permissions: list[Permission]) -> None:
    """Rows of ``table`` giving ``holder`` (``{"user": u}`` or ``{"group": g}``) each permission on
    ``target``, in one insert that keeps the rows already there (guardian's unique constraint)."""
    table.objects.bulk_create([table(content_object=target, permission=p, **holder) for p in permissions],
                              ignore_conflicts=True)


def grant(component: Component, *actions: str, user=None, group=None) -> None:
    """Give ``user`` or ``group`` the component policies ``actions`` on ``component`` (those held
    already stay as they are)."""
    permissions = _permissions(Component, "component", actions, COMPONENT_ACTIONS)
    if user is not None:
        _hold(ComponentUserPermission, {"user": user}, component.base, permissions)
    if group is not None:
        _hold(ComponentGroupPermission, {"group": group}, component.base, permissions)


def grant_global(tenant: Tenant, *actions: str, user=None, group=None) -> None:
    """Give ``user`` or ``group`` the global policies ``actions`` of ``tenant`` (those held
    already stay as they are)."""
    permissions = _permissions(Tenant, "global", actions, GLOBAL_ACTIONS)
    if user is not None:
        _hold(TenantUserPermission, {"user": user}, tenant, permissions)
    if group is not None:
        _hold(TenantGroupPermission, {"group": group}, tenant, permissions)


#: The lists of a flow document's group that hold components other than groups.
_DOCUMENT_CHILD_LISTS = ("processors", "controllerServices", "funnels", "inputPorts", "outputPorts", "connections",
                         "labels")


def first_hidden(access: TenantAccess, group: dict, resolve, enclosing: uuid.UUID) -> tuple[str, object] | None:
    """The first component (its kind and identifier) inside the flow document group ``group``,
    however deep, that ``access`` may not view, or None. Each is judged by the component
    ``resolve(identifier)`` names, or, when that gives None (the component is gone), by the
    nearest enclosing group's (``enclosing`` for ``group`` itself)."""
    for key in _DOCUMENT_CHILD_LISTS:
        for item in group.get(key) or ():
            identifier = item.get("identifier")
            if not access.can(resolve(identifier) or enclosing, VIEW):
                return item.get("componentType") or key, identifier
    for child in group.get("processGroups") or ():
        identifier = child.get("identifier")
        owner = resolve(identifier) or enclosing
        if not access.can(owner, VIEW):
            return "PROCESS_GROUP", identifier
        found = first_hidden(access, child, resolve, owner)
        if found is not None:
            return found
    return None
