"""Provenance analytics requests: who may ask what, and where requests and their results are kept.

A request is a ready question (``engine.spark.provenance_sql.QUESTIONS``) with its parameters, or
— for platform operators only — ad-hoc SQL checked to be one read-only query. Its *scope* is
fixed when it is made: a platform operator's covers every event (or one tenant's, when a tenant
is named or the API token is narrowed to one); anyone else's covers the events of the
components, in the tenants where the user holds the global "query provenance" policy, on which
the user holds "view provenance" (NiFi's provenance policies). Another tenant's components never
enter a scope, so no query can reach their events.

Requests live in the cluster's Redis as JSON under ``flowsite:<cluster>:analytics:<id>``, expiring
``FLOWSITE_ANALYTICS_RESULT_SECONDS`` after they are made and again after they finish: transient
data, as the jobs' results are. Only the user who made a request can see or delete it; to anyone
else it does not exist. The job (``flowsite.provenance.jobs``) is the only writer once a request
is queued, and writes only while the key exists (``SET … XX``), so a deleted request stays
deleted and the job notices it and stops.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from django.conf import settings
from rest_framework import exceptions

from engine.spark.provenance_sql import QUESTIONS, UnsafeQueryError, check_read_only
from flowsite.api.lookup import access_for, tenant_or_404, tenants_of
from flowsite.cluster import redis as cluster_redis
from flowsite.flows.access import QUERY_PROVENANCE, VIEW_PROVENANCE
from flowsite.flows.models import Component
from flowsite.tenancy.models import OPERATE_PLATFORM_PERMISSION, Tenant, is_platform_operator

__all__ = ["Scope", "delete", "exists", "keep", "load", "now_iso", "owned", "prepare", "public", "scope_for", "submit",
           "update"]

#: What only platform operators see of a request: where the nodes keep their files, what was
#: found damaged in them, and the nodes' own words on what went wrong.
_OPERATOR_ONLY = ("damage", "node_errors")
_INTERNAL = ("user", "components", "operator")


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
    tenants = [tenant_or_404(request, tenant_id)] if tenant_id is not None else list(tenants_of(request))
    components: set[str] = set()
    queried: list[str] = []
    for tenant in tenants:
        access = access_for(request, tenant)
        if not access.has_global(QUERY_PROVENANCE):
            continue
        queried.append(str(tenant.pk))
        components.update(str(pk) for pk in Component.objects.restrict(access, VIEW_PROVENANCE)
                          .values_list("pk", flat=True))
    if not queried:
        raise exceptions.PermissionDenied(f"you may not query provenance (the '{QUERY_PROVENANCE}' policy of "
                                          f"{'this tenant' if tenant_id else 'one of your tenants'})")
    return Scope(frozenset(components), False, tuple(queried))


def _key(request_id: str) -> str:
    return f"flowsite:{settings.FLOWSITE_CLUSTER}:analytics:{request_id}"


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def now_iso() -> str:
    """The time now in ISO 8601 (UTC), as requests record times."""
    return _iso(datetime.now(timezone.utc))


def prepare(user, scope: Scope, *, question: str | None = None, params: dict[str, Any] | None = None,
            sql: str | None = None) -> dict[str, Any]:
    """A new request of ``user`` over ``scope``, checked, not yet kept. Raises 400 for an unknown
    question, bad parameters or refused SQL, 403 for SQL from a non-operator."""
    if (question is None) == (sql is None):
        raise exceptions.ValidationError({"question": "give either a 'question' or 'sql'"})
    if sql is not None:
        if not scope.operator:
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
    now = datetime.now(timezone.utc)
    return {
        "id": uuid.uuid4().hex, "user": user.pk, "operator": scope.operator,
        "components": sorted(scope.components) if scope.components is not None else None,
        "tenants": list(scope.tenants), "question": question, "params": values, "sql": text,
        "adhoc": sql is not None, "state": "queued", "percent": 0, "submitted_at": _iso(now), "started_at": None,
        "finished_at": None, "expires_at": _iso(now + timedelta(seconds=settings.FLOWSITE_ANALYTICS_RESULT_SECONDS)),
        "nodes": {"asked": [], "answered": [], "missing": []}, "partial": False, "result": None, "error": "",
        "warnings": [], "damage": [], "node_errors": [], "duration_seconds": None,
    }


def keep(record: dict[str, Any]) -> None:
    """Store a new request for its lifetime (raises redis.RedisError)."""
    cluster_redis.client().set(_key(record["id"]), json.dumps(record), ex=settings.FLOWSITE_ANALYTICS_RESULT_SECONDS)


def submit(user, scope: Scope, *, question: str | None = None, params: dict[str, Any] | None = None,
           sql: str | None = None) -> dict[str, Any]:
    """Check and keep a new request (``prepare``, ``keep``), then queue its job; returns the
    request (redis.RedisError when the cluster's Redis does not answer)."""
    record = prepare(user, scope, question=question, params=params, sql=sql)
    keep(record)
    from flowsite.provenance.tasks import run_analytics

    run_analytics.delay(record["id"])
    return record


def load(request_id: str) -> dict[str, Any] | None:
    """The stored request, or None (unknown, expired or deleted)."""
    raw = cluster_redis.client().get(_key(request_id))
    return json.loads(raw) if raw is not None else None


def owned(request_id: str, user) -> dict[str, Any]:
    """The request ``request_id`` made by ``user``; 404 for any other (or none)."""
    try:
        uuid.UUID(hex=str(request_id))
    except ValueError:
        raise exceptions.NotFound("no such analytics request") from None
    record = load(str(request_id))
    if record is None or record.get("user") != user.pk:
        raise exceptions.NotFound("no such analytics request")
    return record


def exists(request_id: str) -> bool:
    """Whether the request is still kept (it was not deleted and has not expired)."""
    return bool(cluster_redis.client().exists(_key(request_id)))


def update(record: dict[str, Any], *, final: bool = False, **changes: Any) -> bool:
    """Store ``changes`` into ``record`` (modified in place) if the request still exists; a
    ``final`` update keeps it a whole lifetime from now. False when it is gone (deleted)."""
    record.update(changes)
    client = cluster_redis.client()
    if final:
        lifetime = settings.FLOWSITE_ANALYTICS_RESULT_SECONDS
        record["expires_at"] = _iso(datetime.now(timezone.utc) + timedelta(seconds=lifetime))
        return bool(client.set(_key(record["id"]), json.dumps(record), xx=True, ex=lifetime))
    return bool(client.set(_key(record["id"]), json.dumps(record), xx=True, keepttl=True))


def delete(request_id: str) -> None:
    """Forget a request; its job stops at its next step."""
    cluster_redis.client().delete(_key(request_id))


def public(record: dict[str, Any], user) -> dict[str, Any]:
    """The request as its maker sees it: what is internal left out, and for anyone but a platform
    operator the nodes' own words (``detail`` of a missing node, damage, export errors)."""
    shown = {name: value for name, value in record.items() if name not in _INTERNAL}
    if not is_platform_operator(user):
        for name in _OPERATOR_ONLY:
            shown.pop(name, None)
        nodes = dict(shown.get("nodes") or {})
        nodes["missing"] = [{"node": entry["node"], "reason": entry["reason"]} for entry in nodes.get("missing") or ()]
        shown["nodes"] = nodes
    return shown
