"""The connection form: where a connection may lead from and to in a group, a connection's API
representation (or a new one's defaults) laid out as fields, and the posted form turned back
into an API request body. Posted field names are the API's; the destination is
``destination``, the prioritizers in order are ``prioritizer-<i>``."""

from __future__ import annotations

from functools import cached_property

from engine.queue.prioritizers import PRIORITIZERS
from flowsite.api.serializers.connections import LOAD_BALANCE_COMPRESSIONS, LOAD_BALANCE_STRATEGIES
from flowsite.api.serializers.processors import processor_class
from flowsite.flows.models import Component, Kind, ProcessGroup, Processor
from flowsite.portal.forms.common import choice_pairs, field_errors, general_errors, revision

FIELDS = ("name", "backPressureObjectThreshold", "backPressureDataSizeThreshold", "flowFileExpiration",
          "loadBalanceStrategy", "partitioningAttribute", "loadBalanceCompression")
_KIND_LABELS = {Kind.PROCESSOR: "processor", Kind.FUNNEL: "funnel", Kind.INPUT_PORT: "input port",
                Kind.OUTPUT_PORT: "output port"}


def endpoint_label(component: Component, group: ProcessGroup) -> str:
    """How a connectable component reads in a list of ``group``'s endpoints."""
    name = component.name or _KIND_LABELS[component.kind]
    if component.parent_id != group.pk:
        return f"{name} — {_KIND_LABELS[component.kind]} of group {component.parent.name}"
    if component.kind == Kind.PROCESSOR:
        processor = component if isinstance(component, Processor) else component.processor
        return f"{name} — {processor.type}"
    return f"{name} — {_KIND_LABELS[component.kind]}"


def endpoints(group: ProcessGroup, end: str, visible) -> list[Component]:
    """The components a connection in ``group`` may have as its ``end`` (source or destination)
    that ``visible`` (a predicate) lets the user see: the group's processors and funnels, its
    input ports (sources) or output ports (destinations), and the output ports (sources) or
    input ports (destinations) of the groups inside it."""
    own_port, child_port = ((Kind.INPUT_PORT, Kind.OUTPUT_PORT) if end == "source"
                            else (Kind.OUTPUT_PORT, Kind.INPUT_PORT))
    found = (list(Component.objects.filter(parent=group, kind__in=(Kind.PROCESSOR, Kind.FUNNEL, own_port))
                  .select_related("parent", "processor"))
             + list(Component.objects.filter(parent__parent=group, kind=child_port).select_related("parent")))
    found.sort(key=lambda c: (c.parent_id != group.pk, c.kind, c.name.lower(), str(c.pk)))
    return [c for c in found if visible(c)]


def relationships_of(source: Component) -> list[dict] | None:
    """The relationships a connection from ``source`` may carry; None when it carries none
    (not a processor) or any (a processor type the engine does not know)."""
    if source.kind != Kind.PROCESSOR:
        return None
    processor = source if isinstance(source, Processor) else source.processor
    cls = processor_class(processor.type)
    if cls is None:
        return None
    return [{"name": r.name, "description": r.description} for r in cls.relationships_for(processor.properties)]


def new_connection(group: ProcessGroup) -> dict:
    """What a new connection in ``group`` starts as (the group's defaults), shaped as the API
    represents a connection."""
    return {"name": "", "destination": None, "selectedRelationships": [], "prioritizers": [],
            "backPressureObjectThreshold": group.default_back_pressure_object_threshold,
            "backPressureDataSizeThreshold": group.default_back_pressure_data_size_threshold,
            "flowFileExpiration": group.default_flowfile_expiration,
            "loadBalanceStrategy": "DO_NOT_LOAD_BALANCE", "partitioningAttribute": "",
            "loadBalanceCompression": "DO_NOT_COMPRESS"}


class ConnectionForm:
    """The fields of a connection from ``source``: from its API ``representation`` or from
    ``post`` (a form sent back) with the serializer's ``errors``."""

    strategies = choice_pairs(LOAD_BALANCE_STRATEGIES)
    compressions = choice_pairs(LOAD_BALANCE_COMPRESSIONS)
    prioritizer_names = list(PRIORITIZERS)

    def __init__(self, source: Component, representation: dict, post=None, errors: dict | None = None):
        self.source = source
        self.representation = representation
        self.post = post
        self.errors = field_errors(errors)
        self.general_errors = general_errors(errors)

    @cached_property
    def values(self) -> dict:
        """The simple fields' values, and the chosen destination's id."""
        if self.post is None:
            values = {name: self.representation.get(name) for name in FIELDS}
            destination = self.representation.get("destination")
            values["destination"] = destination["id"] if destination else ""
            return values
        return {name: self.post.get(name, "") for name in (*FIELDS, "destination")}

    @cached_property
    def relationships(self) -> list[dict] | None:
        """The source's relationships and whether the connection carries each (None: the
        source is not a processor)."""
        available = relationships_of(self.source)
        if available is None:
            return None
        selected = set(self.post.getlist("selectedRelationships") if self.post is not None
                       else self.representation.get("selectedRelationships") or [])
        return [{**r, "selected": r["name"] in selected} for r in available]

    @cached_property
    def prioritizers(self) -> list[str]:
        """One chosen prioritizer (or '') per slot, first applied first."""
        if self.post is None:
            chosen = [name.rsplit(".", 1)[-1] for name in self.representation.get("prioritizers") or []]
        else:
            chosen = [self.post.get(f"prioritizer-{index}", "") for index in range(len(PRIORITIZERS))]
        return (chosen + [""] * len(PRIORITIZERS))[:len(PRIORITIZERS)]

    def payload(self, *, creating: bool) -> dict:
        """The posted form as the body of an API creation or update."""
        data = {name: self.post.get(name, "") for name in FIELDS}
        if self.post.get("destination"):
            data["destination"] = {"id": self.post["destination"]}
        if self.relationships is not None:
            data["selectedRelationships"] = self.post.getlist("selectedRelationships")
        data["prioritizers"] = [name for name in self.prioritizers if name]
        if creating:
            data["source"] = {"id": str(self.source.pk)}
        else:
            data["revision"] = revision(self.post)
        return data
