"""Who may read a whole flow definition, as NiFi decides it for "download flow definition": the
view policy on the group and on every component inside it, however deep. One component the caller
may not view makes the whole export a 403 that names it by id (never by name or configuration);
nothing is left out silently, so a downloaded definition is always complete.

A committed version is a document of its own: each of its components is judged by the component
of the same versioned id now inside the group, or, when that one has been deleted since, by the
nearest enclosing group of the document that still exists (policies are inherited that way)."""

from __future__ import annotations

from typing import Any

from django.db.models import Q
from rest_framework import exceptions

from flowsite.api.lookup import access_for
from flowsite.flows.access import VIEW, first_hidden
from flowsite.flows.definition import subtree_ids
from flowsite.flows.models import Component, ProcessGroup


def _denied(kind: str, ident, what: str) -> exceptions.PermissionDenied:
    noun = kind.lower().replace("_", " ")
    return exceptions.PermissionDenied(
        f"you may not view the {noun} {ident} inside this process group: {what} needs the view policy on "
        f"the group and on every component inside it")


def _contents(group: ProcessGroup) -> list[Component]:
    """The group and everything inside it, groups first (outermost first), so a refusal names the
    outermost component the user may not view."""
    ids = subtree_ids(group.pk)
    depth = {pk: index for index, pk in enumerate(ids)}
    found = Component.objects.filter(Q(pk__in=ids) | Q(parent__in=ids)).only("id", "kind", "parent_id",
                                                                              "versioned_id")
    return sorted(found, key=lambda c: (c.pk not in depth, depth.get(c.pk, 0), c.kind, str(c.pk)))


def require_view_subtree(request, group: ProcessGroup, what: str = "exporting a flow definition") -> None:
    """403 unless the user may view ``group`` and everything inside it."""
    access = access_for(request, group.tenant)
    for component in _contents(group):
        if not access.can(component.pk, VIEW):
            raise _denied(component.kind, component.pk, what)


def require_view_document(request, group: ProcessGroup, definition: dict[str, Any],
                          what: str = "reading a flow version") -> None:
    """403 unless the user may view every component of ``definition`` (a committed version of
    ``group``) and everything now inside ``group`` (see the module docstring)."""
    require_view_subtree(request, group, what)
    present = {c.versioned_id: c.pk for c in _contents(group)}
    hidden = first_hidden(access_for(request, group.tenant), definition.get("flowContents") or {}, present.get,
                          group.pk)
    if hidden is not None:
        raise _denied(*hidden, what)
