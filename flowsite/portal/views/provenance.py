"""Provenance analytics in the portal: ask a ready question (platform operators also ad-hoc SQL),
follow the request while it runs (the page refreshes itself), read the table. A tenant user's
questions cover the session tenant's components the user may view the provenance of; a platform
operator's cover every tenant. Requests are the API's (``flowsite.provenance.analytics``): the
same checks, the same Redis, the same job."""

from __future__ import annotations

import redis
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from rest_framework import exceptions

from engine.spark.provenance_sql import QUESTIONS, VIEW
from flowsite.cluster import redis as cluster_redis
from flowsite.portal.tenancy import current_tenant
from flowsite.provenance import analytics, store
from flowsite.provenance.api.views import AnalyticsList, AnalyticsThrottle
from flowsite.tenancy.models import is_platform_operator

#: Seconds between two refreshes of a running request's page.
REFRESH_SECONDS = 2


def _problem(error: exceptions.APIException) -> str:
    detail = error.detail
    if isinstance(detail, dict):
        return "; ".join(str(item) for value in detail.values() for item in (value if isinstance(value, list) else [value]))
    if isinstance(detail, list):
        return "; ".join(map(str, detail))
    return str(detail)


@login_required
def index(request):
    """The questions (and the SQL box for operators); POST submits one and shows its request."""
    operator = is_platform_operator(request.user)
    tenant = current_tenant(request)
    if tenant is None and not operator:
        return render(request, "portal/no_tenant.html")
    form = {"question": "", "sql": "", "params": {}, "error": ""}
    status = 200
    if request.method == "POST":
        form["question"] = request.POST.get("question", "")
        form["sql"] = request.POST.get("sql", "")
        question = QUESTIONS.get(form["question"])
        form["params"] = {p.name: request.POST.get(p.name, "") for p in question.parameters} if question else {}
        throttle = AnalyticsThrottle()
        try:
            if not throttle.allow_request(request, AnalyticsList):
                raise exceptions.Throttled(throttle.wait())
            scope = analytics.scope_for(request, None if operator else tenant.pk)
            if form["sql"].strip():
                record = analytics.submit(request.user, scope, sql=form["sql"])
            else:
                params = {name: value for name, value in form["params"].items() if value != ""}
                record = analytics.submit(request.user, scope, question=form["question"] or None, params=params)
        except exceptions.APIException as error:
            form["error"], status = _problem(error), error.status_code
        except redis.RedisError:
            form["error"], status = f"{cluster_redis.unreachable_message()}: nothing was asked.", 503
        else:
            return redirect("portal:analytics-request", request_id=record["id"])
    questions = [question.as_dict() for question in QUESTIONS.values()]
    for question in questions:
        for parameter in question["parameters"]:
            parameter["value"] = form["params"].get(parameter["name"], "") if form["question"] == question["id"] else ""
    return render(request, "portal/analytics.html", {
        "tenant": tenant, "operator": operator, "questions": questions, "form": form, "view": VIEW}, status=status)


def _owned(request, request_id) -> dict:
    try:
        return analytics.owned(request_id, request.user)
    except exceptions.NotFound:
        raise Http404("no such analytics request") from None


@login_required
def detail(request, request_id):
    """One of the user's requests: its progress while it runs, then its table."""
    try:
        record = analytics.public(_owned(request, request_id), request.user)
    except redis.RedisError:
        messages.error(request, f"{cluster_redis.unreachable_message()}: the request cannot be read now.")
        return redirect("portal:analytics")
    running = record["state"] not in ("done", "failed")
    question = QUESTIONS.get(record["question"] or "")
    return render(request, "portal/analytics_request.html", {
        "record": record, "running": running, "refresh": REFRESH_SECONDS if running else None,
        "title": question.title if question else "Ad-hoc SQL", "operator": is_platform_operator(request.user),
        "result": record.get("result")})


@login_required
@require_POST
def delete(request, request_id):
    """Forget one of the user's requests (a job still running stops)."""
    try:
        store.delete(_owned(request, request_id))
    except redis.RedisError:
        messages.error(request, f"{cluster_redis.unreachable_message()}: the request was not deleted.")
        return redirect("portal:analytics")
    messages.success(request, "The analytics request was deleted.")
    return redirect("portal:analytics")
