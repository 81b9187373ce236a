"""Provenance in the portal: the search page (its script asks the API's provenance query request
and shows the events), an event's page (every field, its attributes, its content and replay) and
the lineage graph of an event or a FlowFile (drawn by its script from the API's lineage request).
The checks are the API's (``flowsite.provenance.scope``, ``flowsite.provenance.api.events``): a
search covers the portal's tenant (the one the user switched to); an event of another tenant, or
one that never was, is the portal's 404; a missing policy is a 403 naming it."""

from __future__ import annotations

import redis
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse
from rest_framework import exceptions

from flowsite.api.lookup import access_for
from flowsite.cluster import redis as cluster_redis
from flowsite.flows.access import QUERY_PROVENANCE
from flowsite.portal.forms.provenance import search_form
from flowsite.portal.tenancy import current_tenant
from flowsite.provenance.api.events import viewable_event
from flowsite.provenance.direct import NodeUnavailable


class _Unreachable(Exception):
    """The node holding an event (or the cluster's Redis) cannot be reached now."""


def _may_query(request) -> bool:
    """Whether the user belongs to a tenant (False: the no-tenant page); 403 unless they may query
    the provenance of the portal's tenant."""
    tenant = current_tenant(request)
    if tenant is None:
        return False
    if not access_for(request, tenant).has_global(QUERY_PROVENANCE):
        raise PermissionDenied(f"you may not query provenance (the '{QUERY_PROVENANCE}' policy of this tenant)")
    return True


def _event_or_404(request, event_id: str) -> dict:
    """Every field of the event ``event_id`` the user may see (the API's view of it): Http404 for
    none of theirs, PermissionDenied without *view provenance* on it, _Unreachable when its node
    cannot answer."""
    try:
        found = viewable_event(request, event_id)
        return found.presenter.full(found.node, found.event)
    except (exceptions.NotFound, exceptions.ValidationError):
        raise Http404("no such provenance event") from None
    except exceptions.PermissionDenied as error:
        raise PermissionDenied(str(error.detail)) from None
    except NodeUnavailable as error:
        raise _Unreachable(str(error.detail)) from None
    except redis.RedisError:
        raise _Unreachable(cluster_redis.unreachable_message()) from None


def _unreachable(request, error: _Unreachable):
    return render(request, "portal/provenance/unreachable.html", {"reason": str(error)}, status=503)


@login_required
def search(request):
    """The search form, filled from the URL (its script runs the search at once)."""
    if not _may_query(request):
        return render(request, "portal/no_tenant.html")
    return render(request, "portal/provenance/search.html", {"form": search_form(request.GET)})


@login_required
def flowfile_lineage(request, uuid):
    """The lineage graph of a FlowFile (one of another tenant shows nothing, as one that never was)."""
    if not _may_query(request):
        return render(request, "portal/no_tenant.html")
    return render(request, "portal/provenance/lineage.html", {"uuid": uuid, "event": None})


def _facts(event: dict) -> list[dict]:
    """The event's fields as label / value rows, in NiFi's order."""
    def ms(value):
        return "—" if value is None or value < 0 else f"{value:,} ms"
    rows = [
        ("Time", event.get("eventTime")), ("Event duration", ms(event.get("eventDuration"))),
        ("Lineage duration", ms(event.get("lineageDuration"))), ("Type", event.get("eventType")),
        ("FlowFile UUID", event.get("flowFileUuid"), True), ("File size", event.get("fileSize")),
        ("Component ID", event.get("componentId"), True), ("Component name", event.get("componentName")),
        ("Component type", event.get("componentType")), ("Process group", event.get("groupId"), True),
        ("Node", event.get("clusterNodeId")), ("Event ID", event.get("eventId")),
        ("Relationship", event.get("relationship")), ("Details", event.get("details")),
        ("Transit URI", event.get("transitUri"), True),
        ("Alternate identifier", event.get("alternateIdentifierUri"), True),
        ("Source system FlowFile ID", event.get("sourceSystemFlowFileId"), True),
        ("Source connection", event.get("sourceConnectionIdentifier"), True),
    ]
    return [{"label": row[0], "value": row[1], "mono": len(row) > 2} for row in rows]


def _attributes(event: dict) -> list[dict]:
    """The event's attributes, each with how this event changed it ("added", "removed",
    "modified" or "")."""
    rows = []
    for attribute in sorted(event.get("attributes") or [], key=lambda a: a["name"]):
        value, previous = attribute.get("value"), attribute.get("previousValue")
        change = ("" if value == previous else "added" if previous is None else "removed" if value is None
                  else "modified")
        rows.append({**attribute, "change": change})
    return rows


def _claims(event: dict) -> list[dict]:
    """The event's input and output content claims, with the API path of their content."""
    claims = []
    for direction in ("input", "output"):
        def part(name):
            return event.get(f"{direction}ContentClaim{name}")
        claims.append({
            "direction": direction, "title": direction.capitalize(), "present": bool(part("Identifier")),
            "available": bool(event.get(f"{direction}ContentAvailable")), "container": part("Container"),
            "section": part("Section"), "identifier": part("Identifier"), "offset": part("Offset"),
            "size": part("FileSize"),
            "url": reverse(f"api:provenance-event-{direction}", args=[event["id"]]),
        })
    return claims


@login_required
def event(request, event_id):
    """Every field of an event, its attributes (what it changed marked), its content and replay.
    What the user may not see the API leaves out: no attributes or content claims without *view
    the data*, replay unavailable (and why) without *modify the data*."""
    try:
        found = _event_or_404(request, event_id)
    except _Unreachable as error:
        return _unreachable(request, error)
    attributes = found.get("attributes")
    return render(request, "portal/provenance/event.html", {
        "event": found, "facts": _facts(found), "claims": _claims(found),
        "can_view_data": attributes is not None, "attributes": _attributes(found),
        "families": [{"title": "Parent FlowFiles", "noun": "parent", "uuids": found.get("parentUuids") or []},
                     {"title": "Child FlowFiles", "noun": "child", "uuids": found.get("childUuids") or []}],
        "mime_type": next((a.get("value") for a in attributes or [] if a["name"] == "mime.type"), ""),
    })


@login_required
def event_lineage(request, event_id):
    """The lineage graph of an event's FlowFile."""
    if not _may_query(request):
        raise Http404("no tenant")
    try:
        found = _event_or_404(request, event_id)
    except _Unreachable as error:
        return _unreachable(request, error)
    return render(request, "portal/provenance/lineage.html", {"event": found, "uuid": found["flowFileUuid"]})
