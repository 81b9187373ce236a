"""The write path of parameter contexts: create, update and delete a tenant's context through a
``do_*`` action (one transaction, the context's revision lock, a ``FlowAction`` row). Sensitive
values are sealed with the tenant's key before they are stored, and a change of one is recorded
without its value. Contexts are not components: the row names the context by id with
``component_kind`` PARAMETER_CONTEXT and no group. The nodes learn of a change with the next
deployment (a deployment carries every context its groups use)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction

from flowsite.flows.actions import record_action
from flowsite.flows.definition import parameter_context_binding
from flowsite.flows.models import ActionKind, Operation, ParameterContext
from flowsite.flows.revisions import Revision, StaleRevisionError, is_current
from flowsite.flows.secrets import current_key

__all__ = ["KEEP", "do_create_parameter_context", "do_delete_parameter_context", "do_update_parameter_context"]

#: The value of a parameter given without one: it keeps the value it has (a sensitive value
#: cannot be read back, so a client resending the list does not know it).
KEEP = object()
_HIDDEN = "********"
_KIND = ActionKind.PARAMETER_CONTEXT


def _snapshot(context: ParameterContext) -> dict[str, Any]:
    values: dict[str, Any] = {"name": context.name, "description": context.description}
    for parameter in context.parameters:
        values[f"parameters.{parameter['name']}"] = parameter
    return values


def _changes(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """Each changed field, a parameter as its value (a sensitive one as ``********``)."""
    changes = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if not name.startswith("parameters."):
            changes.append({"field": name, "before": old, "after": new})
            continue
        sensitive = bool((old or {}).get("sensitive") or (new or {}).get("sensitive"))
        shown = [None if p is None else (_HIDDEN if sensitive and p.get("value") is not None else p.get("value"))
                 for p in (old, new)]
        change = {"field": name, "before": shown[0], "after": shown[1]}
        if sensitive:
            change["sensitive"] = True
        if old and new and old.get("description") != new.get("description"):
            change["description"] = {"before": old.get("description", ""), "after": new.get("description", "")}
        changes.append(change)
    return changes


def _set_parameters(context: ParameterContext, parameters: list[dict[str, Any]]) -> None:
    """Make ``parameters`` (``{name, value, sensitive, description}``, ``value`` possibly KEEP)
    the context's, sealing sensitive values."""
    current = {p["name"]: p for p in context.parameters}
    key = current_key()
    stored = []
    for parameter in parameters:
        name, value = parameter["name"], parameter.get("value", KEEP)
        old = current.get(name, {})
        entry = {k: v for k, v in old.items() if k not in ("value", "sensitive", "description")}
        entry.update(name=name, sensitive=bool(parameter.get("sensitive", old.get("sensitive", False))),
                     description=parameter.get("description", old.get("description", "")))
        if value is KEEP:
            entry["value"] = old.get("value")
        elif value is not None and entry["sensitive"]:
            entry["value"] = key.seal(value, parameter_context_binding(context, name))
        else:
            entry["value"] = value
        stored.append(entry)
    context.parameters = sorted(stored, key=lambda p: p["name"])


def do_create_parameter_context(context: ParameterContext, parameters: list[dict[str, Any]], *, acting_user,
                                client_id: str = "") -> ParameterContext:
    """Save the new ``context`` (built, unsaved) with ``parameters`` and record its addition."""
    with transaction.atomic():
        _set_parameters(context, parameters)
        context.last_modifier = acting_user.get_username()
        context.last_client_id = client_id
        context.save()
        record_action(context, Operation.ADD, acting_user, _changes({}, _snapshot(context)), kind=_KIND)
    return context


def _lock(context: ParameterContext, version: int | None, client_id: str, acting_user) -> None:
    locked = ParameterContext.objects.select_for_update().get(pk=context.pk)
    context.refresh_from_db()
    if not is_current(locked, version, client_id):
        raise StaleRevisionError(context, Revision.of(locked))
    context.version = locked.version + 1
    context.last_client_id = client_id or ""
    context.last_modifier = acting_user.get_username()


def do_update_parameter_context(context: ParameterContext, apply: Callable[[ParameterContext], None],
                                parameters: list[dict[str, Any]] | None, *, version: int | None, client_id: str,
                                acting_user, check: Callable[[ParameterContext], None] | None = None
                                ) -> ParameterContext:
    """Apply ``apply`` (name, description) and, when given, make ``parameters`` the context's, if
    the revision is current and ``check`` (given the locked context) raises nothing."""
    with transaction.atomic():
        _lock(context, version, client_id, acting_user)
        if check is not None:
            check(context)
        before = _snapshot(context)
        apply(context)
        if parameters is not None:
            _set_parameters(context, parameters)
        context.save()
        record_action(context, Operation.CONFIGURE, acting_user, _changes(before, _snapshot(context)), kind=_KIND)
    return context


def do_delete_parameter_context(context: ParameterContext, *, version: int | None, client_id: str, acting_user,
                                check: Callable[[ParameterContext], None] | None = None) -> None:
    """Delete ``context`` if the revision is current and ``check`` raises nothing; record it."""
    with transaction.atomic():
        _lock(context, version, client_id, acting_user)
        if check is not None:
            check(context)
        record_action(context, Operation.REMOVE, acting_user, _changes(_snapshot(context), {}), kind=_KIND)
        context.delete()
