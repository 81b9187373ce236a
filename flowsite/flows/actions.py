"""The write path of a tenant's flow design: every create, update, delete and run-state change
of a component goes through a ``do_*`` action here (Zulip's actions layer).

An action runs in one transaction: it takes the component's revision lock, applies the change,
writes a ``FlowAction`` row (who, when, what, each changed field before and after) and, only
once the transaction commits, tells the nodes and the open canvases (``flowsite.flows.publish``).
A refused or failed change rolls back with nothing recorded and nothing sent. Callers (the REST
API, the portal) validate and map their input first; the rules that depend on the request
(policies, restricted components) stay with them and are passed in as ``check``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import models, transaction
from django.db.models import Max

from flowsite.flows import publish
from engine.flow.model import FlowDefinition
from flowsite.flows.definition import (
    Identity,
    delete_subtree,
    export_group,
    import_group,
    replace_contents,
    subtree_ids,
)
from flowsite.flows.models import Component, FlowAction, FlowVersion, Kind, Operation, ProcessGroup, Processor
from flowsite.flows.revisions import check_revision, lock_for_change

__all__ = ["RunningProcessors", "do_commit_version", "do_create_component", "do_delete_component",
           "do_import_group", "do_revert_to_version", "do_update_component", "field_changes", "record_action",
           "require_stopped"]

#: Fields that are bookkeeping, not configuration: never listed as changes.
_BOOKKEEPING = {"id", "component_ptr", "tenant", "kind", "version", "last_client_id", "last_modifier",
                "created_at", "updated_at", "versioned_id"}
#: Fields whose values are secrets: a change is recorded without them.
_SEALED = {"sensitive_properties"}
_POSITION = {"position_x", "position_y"}


def _snapshot(component: Component) -> dict[str, Any]:
    values = {}
    for field in component._meta.concrete_fields:
        if field.name in _BOOKKEEPING or isinstance(field, models.OneToOneField):
            continue
        values[field.name] = field.value_from_object(component)
    return values


def _json(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, dict)):
        return value
    return str(value)


def field_changes(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """The fields that differ between two snapshots, as ``{field, before, after}``; a property
    map is compared property by property (``properties.<name>``), and a sealed (sensitive) value
    is named without its value."""
    changes = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if name in _SEALED:
            for key in sorted(set(old or {}) | set(new or {})):
                if (old or {}).get(key) != (new or {}).get(key):
                    changes.append({"field": f"properties.{key}", "before": "********" if key in (old or {}) else None,
                                    "after": "********" if key in (new or {}) else None, "sensitive": True})
        elif name == "properties":
            for key in sorted(set(old or {}) | set(new or {})):
                if (old or {}).get(key) != (new or {}).get(key):
                    changes.append({"field": f"properties.{key}", "before": (old or {}).get(key),
                                    "after": (new or {}).get(key)})
        else:
            changes.append({"field": name, "before": _json(old), "after": _json(new)})
    return changes


def record_action(component, operation: str, acting_user, changes: list[dict[str, Any]], user_name: str = "",
                  kind: str | None = None) -> FlowAction:
    """Write the history row of ``operation`` on ``component`` (a component, or a parameter
    context with its ``kind`` given) by ``acting_user`` (None for a program without a user,
    named by ``user_name``)."""
    return FlowAction.objects.create(
        tenant_id=component.tenant_id, user=acting_user if getattr(acting_user, "pk", None) else None,
        user_name=acting_user.get_username() if acting_user is not None else user_name, operation=operation,
        component_id=component.pk, component_kind=kind or component.kind, component_name=component.name,
        component_type=getattr(component, "type", "") or "", group_id=getattr(component, "parent_id", None),
        changes=changes)


def do_create_component(component: Component, *, acting_user, client_id: str = "") -> Component:
    """Save the new ``component`` (built, unsaved, by its serializer) and record its addition."""
    with transaction.atomic():
        component.last_modifier = acting_user.get_username()
        component.last_client_id = client_id
        component.save()
        operation = Operation.CONNECT if component.kind == Kind.CONNECTION else Operation.ADD
        record_action(component, operation, acting_user, field_changes({}, _snapshot(component)))
        publish.design_changed_on_commit(component, operation)
    return component


def do_update_component(component: Component, apply: Callable[[Component], None], *, version: int | None,
                        client_id: str, acting_user, check: Callable[[Component], None] | None = None) -> Component:
    """Apply ``apply`` (which copies validated fields onto the component) if the revision
    (``version``, ``client_id``) is current and ``check`` (given the locked, reloaded component)
    raises nothing; record each changed field. A change of the position only is a move."""
    with transaction.atomic():
        lock_for_change(component, version, client_id, acting_user.get_username())
        if check is not None:
            check(component)
        before = _snapshot(component)
        apply(component)
        component.save()
        changes = field_changes(before, _snapshot(component))
        moved_only = bool(changes) and {c["field"] for c in changes} <= _POSITION
        operation = Operation.MOVE if moved_only else Operation.CONFIGURE
        record_action(component, operation, acting_user, changes)
        publish.design_changed_on_commit(component, operation)
    return component


def do_delete_component(component: Component, *, version: int | None, client_id: str, acting_user,
                        check: Callable[[Component], None] | None = None) -> None:
    """Delete ``component`` (a group with everything inside it) if the revision is current and
    ``check`` raises nothing; record its removal."""
    with transaction.atomic():
        lock_for_change(component, version, client_id, acting_user.get_username())
        if check is not None:
            check(component)
        operation = Operation.DISCONNECT if component.kind == Kind.CONNECTION else Operation.REMOVE
        record_action(component, operation, acting_user, field_changes(_snapshot(component), {}))
        publish.design_changed_on_commit(component, operation)
        if component.kind == Kind.PROCESS_GROUP:
            delete_subtree(component)
        else:
            component.delete()


class RunningProcessors(Exception):
    """A change that replaces a group's contents was refused: processors in it are running."""


def require_stopped(group: ProcessGroup, doing: str) -> None:
    """Raise RunningProcessors when a processor in ``group`` (at any depth) is running."""
    if Processor.objects.filter(parent__in=subtree_ids(group.pk), scheduled_state="RUNNING").exists():
        raise RunningProcessors(f"processors of the group are running: stop them before {doing}")


def do_commit_version(group: ProcessGroup, comment: str, *, acting_user) -> FlowVersion:
    """Keep the group as it is now as its next version (numbers are consecutive per group)."""
    with transaction.atomic():
        ProcessGroup.objects.select_for_update().filter(pk=group.pk).first()
        number = (group.versions.aggregate(n=Max("number"))["n"] or 0) + 1
        version = FlowVersion.objects.create(group=group, number=number, author=acting_user, comment=comment,
                                             definition=export_group(group, Identity.VERSIONED))
        record_action(group, Operation.COMMIT, acting_user,
                      [{"field": "version", "before": number - 1 or None, "after": number},
                       {"field": "comment", "before": None, "after": comment}])
    return version


def do_revert_to_version(group: ProcessGroup, version: FlowVersion, *, revision: int | None, client_id: str,
                         acting_user) -> ProcessGroup:
    """Make ``group`` match its committed ``version`` if the group's revision is current and none
    of its processors runs (RunningProcessors); a component the version leaves out that a
    connection outside the group leads to makes it raise ProtectedError. The canvases of the
    group and of its parent are told to reload it."""
    with transaction.atomic():
        check_revision(group, revision, client_id)
        require_stopped(group, "reverting")
        group.last_client_id = client_id  # replacing the contents advances the group's revision
        replace_contents(group, version.definition, modifier=acting_user.get_username())
        record_action(group, Operation.REVERT, acting_user, [{"field": "version", "before": None,
                                                              "after": version.number}])
        publish.design_changed_on_commit(group, Operation.REVERT)
    group.refresh_from_db()
    return group


def do_import_group(parent: ProcessGroup, flow: FlowDefinition, *, acting_user, name: str | None = None) -> ProcessGroup:
    """Build a new group inside ``parent`` from the parsed flow definition ``flow``."""
    with transaction.atomic():
        group = import_group(parent, flow, modifier=acting_user.get_username(), name=name)
        counts = Component.objects.filter(parent__in=subtree_ids(group.pk)).values("kind").annotate(n=models.Count("id"))
        record_action(group, Operation.IMPORT, acting_user,
                      [{"field": f"components.{row['kind']}", "before": None, "after": row["n"]} for row in counts])
        publish.design_changed_on_commit(group, Operation.IMPORT)
    return group
