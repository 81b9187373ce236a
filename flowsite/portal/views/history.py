"""The flow configuration history page: the changes to the current tenant's flow that the user
may see, newest first, filtered by component, user and operation, fifty to a page."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render

from flowsite.api.lookup import access_for
from flowsite.flows.models import Component, FlowAction, Operation
from flowsite.portal.tenancy import current_tenant

PAGE_SIZE = 50


@login_required
def index(request):
    """The history of the session's tenant, with the filters of the query string."""
    tenant = current_tenant(request)
    actions = FlowAction.objects.none()
    filters = {"component": request.GET.get("component", "").strip(), "user": request.GET.get("user", "").strip(),
               "operation": request.GET.get("operation", "")}
    problems = []
    if tenant is not None:
        actions = FlowAction.objects.restrict([access_for(request, tenant)])
        if filters["component"]:
            try:
                actions = actions.filter(component_id=uuid.UUID(filters["component"]))
            except ValueError:
                problems.append(f"{filters['component']!r} is not a component id")
                actions = actions.none()
        if filters["user"]:
            actions = actions.filter(user_name=filters["user"])
        if filters["operation"] in Operation.values:
            actions = actions.filter(operation=filters["operation"])
    page = Paginator(actions.order_by("-timestamp", "-id"), PAGE_SIZE).get_page(request.GET.get("page"))
    existing = set(Component.objects.filter(pk__in=[a.component_id for a in page]).values_list("pk", flat=True))
    query = "&".join(f"{name}={value}" for name, value in filters.items() if value)
    return render(request, "portal/history.html", {
        "page": page, "filters": filters, "operations": Operation.choices, "problems": problems,
        "existing": existing, "query": query, "tenant": tenant})
