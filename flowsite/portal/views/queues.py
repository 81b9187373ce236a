"""A connection's queue in the portal: the page whose script asks the API's listing request and
shows the queued FlowFiles, each opening its attributes and content. Listing a queue needs the
connection's *view the data* policy, as the API does; another tenant's connection is a 404."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from flowsite.flows import access as policies
from flowsite.flows.models import Connection
from flowsite.portal.forms.connections import endpoint_label
from flowsite.portal.lookup import access, component_or_404
from flowsite.portal.views.groups import breadcrumb


@login_required
def listing(request, pk):
    """The queue of a connection: its listing, run at once."""
    connection = component_or_404(request, Connection, pk, policies.VIEW_DATA)
    group = connection.parent
    allowed = access(request, connection)
    return render(request, "portal/queue.html", {
        "connection": connection, "group": group, "breadcrumb": breadcrumb(request, group),
        "source_label": endpoint_label(connection.source, group),
        "destination_label": endpoint_label(connection.destination, group),
        "can_query_provenance": allowed.has_global(policies.QUERY_PROVENANCE),
    })
