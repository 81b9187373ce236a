"""The bulletin board: the warnings and errors the nodes report for the components of the
session tenant that the user may view (``flowsite.cluster.status``), newest first, filtered by
text (message or source) and level."""

from __future__ import annotations

from datetime import datetime, timezone

import redis
from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from flowsite.cluster import redis as cluster_redis
from flowsite.cluster.status import cluster_status
from flowsite.portal.tenancy import current_tenant

LEVELS = ("ERROR", "WARNING", "INFO", "DEBUG")
_ALIASES = {"WARN": "WARNING"}


def _level(bulletin: dict) -> str:
    level = str(bulletin.get("level", "")).upper()
    return _ALIASES.get(level, level)


def filtered(bulletins: list[dict], text: str, level: str) -> list[dict]:
    """``bulletins`` newest first, those holding ``text`` (in the message or source, any case) at
    ``level`` (any when empty), each with ``time`` (a UTC datetime) and its level spelled out."""
    text = text.lower()
    rows = []
    for bulletin in sorted(bulletins, key=lambda b: (b.get("timestamp", 0), b.get("id", 0)), reverse=True):
        if level and _level(bulletin) != level:
            continue
        haystack = " ".join(str(bulletin.get(k, "")) for k in ("message", "source_name", "source_type")).lower()
        if text and text not in haystack:
            continue
        rows.append({**bulletin, "level": _level(bulletin),
                     "time": datetime.fromtimestamp(bulletin.get("timestamp", 0), tz=timezone.utc)})
    return rows


@login_required
def index(request):
    """The bulletin board page."""
    tenant = current_tenant(request)
    if tenant is None:
        return render(request, "portal/no_tenant.html")
    text = request.GET.get("q", "").strip()
    level = request.GET.get("level", "").upper()
    level = level if level in LEVELS else ""
    note, bulletins = "", []
    try:
        answer = cluster_status(request.user, [tenant])
        note, bulletins = answer["note"], answer["bulletins"]
    except redis.RedisError:
        note = cluster_redis.unreachable_message()
    context = {"bulletins": filtered(bulletins, text, level), "total": len(bulletins), "note": note,
               "query": text, "level": level, "levels": LEVELS}
    return render(request, "portal/bulletins.html", context)
