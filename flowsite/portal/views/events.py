"""Provenance in the portal: the search page (its script asks the API's provenance query request
and shows the events), an event's page (every field, its attributes, its content and replay) and
the lineage graph of an event or a FlowFile (drawn by its script from the API's lineage request).
Searching needs the session tenant's *query provenance* policy, as the API does."""

from __future__ import annotations

from urllib.parse import quote

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render

from flowsite.flows import access as policies
from flowsite.portal.forms.provenance import search_form
from flowsite.portal.lookup import tenant_access
from flowsite.portal.tenancy import current_tenant


def _querying_tenant(request, *, required: bool = False):
    """The session tenant, if the user may query its provenance (else 403); None without one (a
    404 when ``required``)."""
    tenant = current_tenant(request)
    if tenant is None and required:
        raise Http404("no tenant")
    if tenant is not None and not tenant_access(request, tenant).has_global(policies.QUERY_PROVENANCE):
        raise PermissionDenied(f"You may not query the provenance of {tenant.name} "
                               f"(the tenant's '{policies.QUERY_PROVENANCE}' policy).")
    return tenant


@login_required
def search(request):
    """The search form, filled from the URL (its script runs the search at once)."""
    tenant = _querying_tenant(request)
    if tenant is None:
        return render(request, "portal/no_tenant.html")
    return render(request, "portal/provenance/search.html", {"tenant": tenant, "form": search_form(request.GET)})


@login_required
def flowfile_lineage(request, uuid):
    """The lineage graph of a FlowFile (one of another tenant shows nothing, as one that never was)."""
    tenant = _querying_tenant(request)
    if tenant is None:
        return render(request, "portal/no_tenant.html")
    return render(request, "portal/provenance/lineage.html", {"tenant": tenant, "uuid": str(uuid), "event": None})


def _event_or_404(request, event_id: str) -> dict:
    """The event ``event_id`` as the API gives it, if the user may see it (Http404 /
    PermissionDenied otherwise)."""
    raise Http404("no such provenance event")  # filled in once the API's event lookup is merged


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
            "url": f"/api/v1/provenance-events/{quote(event['id'], safe='')}/content/{direction}",
        })
    return claims


@login_required
def event(request, event_id):
    """Every field of an event, its attributes (what it changed marked), its content and replay.
    What the user may not see the API leaves out: no attributes or content claims without *view
    the data*, replay unavailable (and why) without *modify the data*."""
    found = _event_or_404(request, event_id)
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
    tenant = _querying_tenant(request, required=True)
    found = _event_or_404(request, event_id)
    return render(request, "portal/provenance/lineage.html", {"tenant": tenant, "event": found, "uuid": found["flowFileUuid"]})
