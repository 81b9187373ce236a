"""Provenance analytics requests: who may ask what, and where requests and their results are kept.

A request is a ready question (``engine.spark.provenance_sql.QUESTIONS``) with its parameters, or
— for platform operators only — ad-hoc SQL checked to be one read-only query. Its *scope* is
fixed when it is made: a platform operator's covers every event (or one tenant's, when a tenant
is named or the API token is narrowed to one); anyone else's covers the events of the
components, in the tenants where the user holds the global "query provenance" policy, on which
the user holds "view provenance" (NiFi's provenance policies). Another tenant's components never
enter a scope, so no query can reach their events.

Requests are kept in the request store (``flowsite.provenance.store``) as kind ``analytics``,
``FLOWSITE_ANALYTICS_RESULT_SECONDS`` after they are made and again after they finish; only the
user who made one can see or delete it, and its job (``flowsite.provenance.jobs.analytics``)
writes it only while it exists.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from rest_framework import exceptions

from engine.spark.provenance_sql import QUESTIONS, UnsafeQueryError, check_read_only
from flowsite.flows.models import Component
from flowsite.provenance import scope, store
from flowsite.tenancy.models import OPERATE_PLATFORM_PERMISSION, Tenant, is_platform_operator

__all__ = ["Scope", "owned", "prepare", "public", "scope_for", "submit"]

#: What only platform operators see of a request: where the nodes keep their files, what was
#: found damaged in them, and the nodes' own words on what went wrong.
_OPERATOR_ONLY = ("damage", "node_errors")
_INTERNAL = ("kind", "user", "components", "operator", "updated_at", "failure_reason")


@dataclass(frozen=True)
class Scope:
    """The events a request may read: those of ``components`` (ids as text), or every event when
    ``components`` is None; ``operator`` when a platform operator asked."""

    components: frozenset[str] | None
    operator: bool
    tenants: tuple[str, ...] = ()


def scope_for(request, tenant_id: uuid.UUID | None = None) -> Scope:
    """The scope of an analytics request made by ``request``'s user (see the module docstring);
    raises 404 for a tenant the user does not belong to and 403 when the user may query no
    tenant's provenance."""
    user = request.user
    if is_platform_operator(user):
        scoped = getattr(getattr(request, "auth", None), "tenant_id", None)  # a token narrowed to one tenant
        if tenant_id is None and scoped is None:
            return Scope(None, True)
        tenant = Tenant.objects.filter(pk=tenant_id or scoped).first()
        if tenant is None or (scoped is not None and tenant.pk != scoped):
            raise exceptions.NotFound("no such tenant")
        ids = Component.objects.filter(tenant=tenant).values_list("pk", flat=True)
        return Scope(frozenset(str(pk) for pk in ids), True, (str(tenant.pk),))
    reach = scope.searchable(request, tenant_id)
    return Scope(reach.visible, False, reach.tenants)


def prepare(user, reach: Scope, *, question: str | None = None, params: dict[str, Any] | None = None,
            sql: str | None = None) -> dict[str, Any]:
    """A new request of ``user`` over ``reach``, checked, not yet kept. Raises 400 for an unknown
    question, bad parameters or refused SQL, 403 for SQL from a non-operator."""
    if (question is None) == (sql is None):
        raise exceptions.ValidationError({"question": "give either a 'question' or 'sql'"})
    if sql is not None:
        if not reach.operator:
            raise exceptions.PermissionDenied(f"you may not run ad-hoc SQL: only platform operators may (the "
                                              f"'{OPERATE_PLATFORM_PERMISSION}' permission)")
        text = sql.strip()
        try:
            check_read_only(text)
        except UnsafeQueryError as error:
            raise exceptions.ValidationError({"sql": str(error)}) from None
        values: dict[str, Any] = {}
    else:
        known = QUESTIONS.get(question)
        if known is None:
            raise exceptions.ValidationError({"question": f"no question {question!r} (known: {', '.join(QUESTIONS)})"})
        try:
            values = known.values(params)
        except ValueError as error:
            raise exceptions.ValidationError({"params": str(error)}) from None
        text = known.sql(values)
    return store.new(
        "analytics", user, operator=reach.operator,
        components=sorted(reach.components) if reach.components is not None else None,
        tenants=list(reach.tenants), question=question, params=values, sql=text, adhoc=sql is not None, error="",
        warnings=[], damage=[], node_errors=[], duration_seconds=None)


def submit(user, reach: Scope, *, question: str | None = None, params: dict[str, Any] | None = None,
           sql: str | None = None) -> dict[str, Any]:
    """Check and keep a new request (``prepare``, ``store.keep``), then queue its job; returns
    the request (redis.RedisError when the cluster's Redis does not answer)."""
    record = prepare(user, reach, question=question, params=params, sql=sql)
    store.keep(record)
    from flowsite.provenance.tasks import run_analytics

    run_analytics.delay(record["id"])
    return record


def owned(request_id: str, user) -> dict[str, Any]:
    """The analytics request ``request_id`` made by ``user``; 404 for any other (or none)."""
    return store.owned(request_id, user, "analytics")


def public(record: dict[str, Any], user) -> dict[str, Any]:
    """The request as its maker sees it: what is internal left out, and for anyone but a platform
    operator the nodes' own words (``detail`` of a missing node, damage, export errors)."""
    shown = {name: value for name, value in record.items() if name not in _INTERNAL}
    if not is_platform_operator(user):
        for name in _OPERATOR_ONLY:
            shown.pop(name, None)
    shown["nodes"] = scope.shown_nodes(shown.get("nodes") or {}, user)
    return shown
