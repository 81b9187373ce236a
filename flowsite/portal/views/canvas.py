"""A process group's canvas: the page that draws the group as a graph. The page holds no data of
its own: static/portal/canvas.js reads and changes the group through the REST API."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from flowsite.flows import access as policies
from flowsite.flows.models import ProcessGroup
from flowsite.portal.lookup import access, component_or_404
from flowsite.portal.views.groups import breadcrumb


@login_required
def canvas(request, pk):
    """The canvas of a process group (404 for a group of another tenant, as for a missing one)."""
    group = component_or_404(request, ProcessGroup, pk, policies.VIEW)
    allowed = access(request, group)
    return render(request, "portal/canvas.html", {
        "group": group, "breadcrumb": breadcrumb(request, group),
        "can_modify": allowed.can(group, policies.MODIFY), "can_operate": allowed.can(group, policies.OPERATE),
    })
