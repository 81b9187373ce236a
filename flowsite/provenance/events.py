"""Provenance events as NiFi's ``ProvenanceEventDTO``, as one user may see them.

A node answers with its own events (``workers/inspection.py``); the control plane adds what
only the design knows — the component's name and group — and what only the user's policies
decide (NiFi's ``ControllerFacade.createProvenanceEventDto``):

- ``id`` is cluster-unique, ``"<node>:<eventId>"`` (NiFi's cluster merger puts the node in front);
- without the *view* policy on the component its name is its id, its type is its kind and the
  relationship is left out;
- without *view the data* there are no attributes and no content claims, and replay is not
  available (``replayExplanation`` says why); without *modify the data* replay is not available.

Summaries (search results) carry the identifying fields, ``described`` events (exports) also
what the event says besides its data, ``full`` events every field.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from engine.units import format_data_size
from flowsite.api.lookup import ACTION_WORDS
from flowsite.flows.access import MODIFY_DATA, VIEW, VIEW_DATA, TenantAccess
from flowsite.flows.models import Component, Connection, Kind
from flowsite.provenance import formats

__all__ = ["Presenter", "event_id", "split_event_id"]


def event_id(node: str, number: int) -> str:
    """The cluster-unique id of event ``number`` of ``node``."""
    return f"{node}:{number}"


def split_event_id(text: str, node: str | None = None) -> tuple[str, int] | None:
    """(node, event id) of a cluster-unique id, or of a number with ``node``; None when ``text``
    is neither."""
    named, _, number = str(text).rpartition(":")
    if not named:
        named = node or ""
    if not named or not number.isdigit() or len(number) > 19 or (node and named != node):
        return None
    return named, int(number)


class Presenter:
    """Makes one user's view of events; ``accesses`` is their access to each tenant they reach,
    by tenant id (as text). Components are read from the design once per batch (``load``)."""

    def __init__(self, accesses: Mapping[str, TenantAccess]) -> None:
        self.accesses = accesses
        self._components: dict[str, dict[str, Any]] = {}

    def load(self, component_ids: Iterable[str]) -> None:
        """Read the components of ``component_ids`` not yet read (ids of other tenants stay unknown)."""
        wanted = {pk for pk in component_ids if pk and pk not in self._components}
        if not wanted:
            return
        valid = []
        for pk in wanted:
            self._components[pk] = {}
            try:
                valid.append(uuid.UUID(pk))
            except ValueError:
                continue
        rows = Component.objects.filter(pk__in=valid, tenant__in=list(self.accesses)).values(
            "pk", "name", "parent_id", "tenant_id", "kind")
        for row in rows:
            self._components[str(row["pk"])] = row
        unnamed = [row["pk"] for row in rows if row["kind"] == Kind.CONNECTION and not row["name"]]
        for pk, relationships in Connection.objects.filter(pk__in=unnamed).values_list("pk", "selected_relationships"):
            self._components[str(pk)]["name"] = ", ".join(sorted(relationships or ()))

    def component(self, component_id: str) -> dict[str, Any]:
        """The design's row of a component of the user's tenants ({} when none)."""
        self.load([component_id])
        return self._components.get(component_id) or {}

    def can(self, component_id: str, action: str) -> bool:
        """Whether the user may ``action`` the component (False for one not of their tenants)."""
        row = self.component(component_id)
        access = self.accesses.get(str(row.get("tenant_id"))) if row else None
        return access is not None and access.can(row["pk"], action)

    def summary(self, node: str, event: Mapping[str, Any]) -> dict[str, Any]:
        """The event's identifying fields, NiFi's summary."""
        component_id = event.get("component_id") or ""
        row = self.component(component_id)
        viewable = self.can(component_id, VIEW)
        time = event.get("time")
        lineage_start = event.get("lineage_start_date") or 0
        duration = event.get("duration")
        size = int(event.get("file_size") or 0)
        return {
            "id": event_id(node, event["id"]), "eventId": event["id"],
            "eventTime": formats.timestamp(time), "eventTimestamp": formats.instant(time),
            "eventDuration": duration if duration is not None and duration >= 0 else None,
            "lineageDuration": time - lineage_start if lineage_start > 0 and time is not None else None,
            "eventType": event.get("type"), "flowFileUuid": event.get("flowfile_uuid"),
            "fileSize": format_data_size(size), "fileSizeBytes": size, "clusterNodeId": node,
            "groupId": str(row["parent_id"]) if row.get("parent_id") else None, "componentId": component_id,
            "componentType": event.get("component_type") if viewable or not row else row["kind"],
            "componentName": (row.get("name") or component_id) if viewable else component_id,
        }

    def described(self, node: str, event: Mapping[str, Any]) -> dict[str, Any]:
        """The summary and what the event says besides its data (exports carry this)."""
        component_id = event.get("component_id") or ""
        return {
            **self.summary(node, event),
            "sourceSystemFlowFileId": event.get("source_system_flowfile_id"),
            "alternateIdentifierUri": event.get("alternate_identifier"), "transitUri": event.get("transit_uri"),
            "relationship": event.get("relationship") if self.can(component_id, VIEW) else None,
            "details": event.get("details"),
            "parentUuids": sorted(event.get("parent_uuids") or ()),
            "childUuids": sorted(event.get("child_uuids") or ()),
        }

    def full(self, node: str, event: Mapping[str, Any]) -> dict[str, Any]:
        """Every field of the event the user may see (see the module docstring)."""
        component_id = event.get("component_id") or ""
        shown = self.described(node, event)
        if not self.can(component_id, VIEW_DATA):
            return {**shown, **_no_data(), "replayAvailable": False,
                    "replayExplanation": self.refusal(VIEW_DATA)}
        replayable = bool(event.get("replay_available"))
        may_replay = self.can(component_id, MODIFY_DATA)
        explanation = event.get("replay_explanation") or None
        if replayable and not may_replay:
            explanation = self.refusal(MODIFY_DATA)
        return {**shown, "attributes": _attributes(event), "contentEqual": event.get("content_equal"),
                **_claim("input", event.get("input_claim"), event.get("input_content_available")),
                **_claim("output", event.get("output_claim"), event.get("output_content_available")),
                "replayAvailable": replayable and may_replay, "replayExplanation": explanation,
                "sourceConnectionIdentifier": event.get("source_queue_id")}

    @staticmethod
    def refusal(action: str) -> str:
        """Why something needing ``action`` is refused."""
        return f"you may not {ACTION_WORDS[action]} this component (the '{action}' policy)"


def _attributes(event: Mapping[str, Any]) -> list[dict[str, Any]]:
    """NiFi's attributes of an event, by name: each with its value after the event (None: the
    event removed it) and before it (None: the event added it)."""
    return [{"name": item["name"], "value": item.get("value"), "previousValue": item.get("previous_value")}
            for item in event.get("attributes") or ()]


def _claim(direction: str, claim: Mapping[str, Any] | None, available: bool | None) -> dict[str, Any]:
    """NiFi's ``<direction>ContentClaim…`` fields and ``<direction>ContentAvailable``."""
    size = int(claim["length"]) if claim else None
    return {f"{direction}ContentAvailable": bool(available),
            f"{direction}ContentClaimContainer": claim.get("container") if claim else None,
            f"{direction}ContentClaimSection": str(claim.get("section")) if claim else None,
            f"{direction}ContentClaimIdentifier": claim.get("identifier") if claim else None,
            f"{direction}ContentClaimOffset": claim.get("offset") if claim else None,
            f"{direction}ContentClaimFileSize": format_data_size(size) if size is not None else None,
            f"{direction}ContentClaimFileSizeBytes": size}


def _no_data() -> dict[str, Any]:
    """What an event shows of its data to a user who may not view it: nothing."""
    return {"attributes": None, "contentEqual": None, **_claim("input", None, False), **_claim("output", None, False),
            "sourceConnectionIdentifier": None}
