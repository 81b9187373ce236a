"""Connection resources: which two components a connection joins, which relationships it
carries, and its queue's settings (back pressure, expiration, prioritizers, load balancing)."""

from __future__ import annotations

from rest_framework import serializers

from engine.flow.model import LOAD_BALANCE_COMPRESSIONS, LOAD_BALANCE_STRATEGIES
from engine.queue import UnknownPrioritizerError, resolve_prioritizer
from flowsite.api.serializers.common import ComponentSerializer, PositionSerializer, data_size_field, duration_field
from flowsite.api.serializers.processors import processor_class
from flowsite.flows.models import Component, Connection, Kind, Processor

CONNECTABLE_KINDS = (Kind.PROCESSOR, Kind.FUNNEL, Kind.INPUT_PORT, Kind.OUTPUT_PORT)


class EndpointSerializer(serializers.Serializer):
    """One end of a connection: give its ``id``; answers add its type, group and name."""

    id = serializers.UUIDField()
    type = serializers.CharField(read_only=True)
    groupId = serializers.UUIDField(read_only=True)
    name = serializers.CharField(read_only=True)

    def to_representation(self, component):
        return {"id": str(component.pk), "type": component.kind, "groupId": str(component.parent_id),
                "name": component.name}

    def validate(self, attrs):
        if "id" not in attrs:  # a partial update would otherwise let it out
            raise serializers.ValidationError({"id": "This field is required."})
        return attrs


def _endpoint_problem(group, component: Component, end: str) -> str | None:
    """Why ``component`` cannot be the ``end`` of a connection in ``group`` (None when it can)."""
    if component.kind not in CONNECTABLE_KINDS:
        return f"a {component.kind.lower().replace('_', ' ')} cannot be connected"
    inside = component.parent_id == group.pk
    in_child = component.parent is not None and component.parent.parent_id == group.pk
    if end == "source":
        if inside and component.kind != Kind.OUTPUT_PORT:
            return None
        if in_child and component.kind == Kind.OUTPUT_PORT:
            return None
        return ("the source must be a processor, funnel or input port of this group, "
                "or an output port of a group inside it")
    if inside and component.kind != Kind.INPUT_PORT:
        return None
    if in_child and component.kind == Kind.INPUT_PORT:
        return None
    return ("the destination must be a processor, funnel or output port of this group, "
            "or an input port of a group inside it")


def _choice(values, help_text: str, source: str) -> serializers.ChoiceField:
    """An optional upper-case choice whose refusal names the values allowed."""
    return serializers.ChoiceField(list(values), required=False, source=source, help_text=help_text, error_messages={
        "invalid_choice": f"{{input!r}} is not one of {', '.join(values)}"})


class ConnectionSerializer(ComponentSerializer):
    """A connection and its queue's settings."""

    source = EndpointSerializer(help_text="Set at creation.")
    destination = EndpointSerializer()
    selectedRelationships = serializers.ListField(child=serializers.CharField(max_length=200), required=False,
                                                  source="selected_relationships", max_length=1000)
    availableRelationships = serializers.SerializerMethodField()
    backPressureObjectThreshold = serializers.IntegerField(min_value=0, source="back_pressure_object_threshold",
                                                           required=False, max_value=2**53)
    backPressureDataSizeThreshold = data_size_field("Queue size that stops the source (1 GB).", required=False,
                                                    source="back_pressure_data_size_threshold")
    flowFileExpiration = duration_field("Age past which queued FlowFiles expire (0 sec: never).", required=False,
                                        source="flowfile_expiration")
    prioritizers = serializers.ListField(child=serializers.CharField(max_length=300), required=False, max_length=10)
    loadBalanceStrategy = _choice(LOAD_BALANCE_STRATEGIES, "How the queue spreads FlowFiles over the cluster's "
                                  "nodes (DO_NOT_LOAD_BALANCE).", "load_balance_strategy")
    partitioningAttribute = serializers.CharField(max_length=200, required=False, allow_blank=True,
                                                  source="partitioning_attribute",
                                                  help_text="The attribute PARTITION_BY_ATTRIBUTE partitions by.")
    bends = serializers.ListField(child=PositionSerializer(), required=False, max_length=100,
                                  help_text="Bend points of the connection's line on the canvas, in order.")
    loadBalanceCompression = _choice(LOAD_BALANCE_COMPRESSIONS, "What load balancing compresses on the wire "
                                     "(DO_NOT_COMPRESS).", "load_balance_compression")

    def get_availableRelationships(self, connection) -> list[str]:
        return _relationships(connection.source) or []

    def validate_prioritizers(self, names: list[str]) -> list[str]:
        problems = []
        for name in names:
            try:
                resolve_prioritizer(name)
            except UnknownPrioritizerError as error:
                problems.append(str(error))
        if problems:
            raise serializers.ValidationError(problems)
        return names

    def _component(self, identifier, field: str) -> Component:
        group = self.context["group"]
        component = Component.objects.select_related("parent").filter(pk=identifier, tenant=group.tenant).first()
        if component is None:
            raise serializers.ValidationError({field: {"id": f"no component with id {identifier} in this tenant"}})
        return component

    def validate(self, attrs):
        group = self.context["group"]
        if self.instance is None:
            source = attrs["source"] = self._component(attrs["source"]["id"], "source")
        else:
            source = self.instance.source
            if "source" in attrs and attrs["source"]["id"] != source.pk:
                raise serializers.ValidationError({"source": "the source of a connection cannot change"})
            attrs.pop("source", None)
        if "destination" in attrs:
            attrs["destination"] = self._component(attrs["destination"]["id"], "destination")
        problems = {}
        for end in ("source", "destination"):
            if end in attrs:
                problem = _endpoint_problem(group, attrs[end], end)
                if problem:
                    problems[end] = problem
        if problems:
            raise serializers.ValidationError(problems)
        known = _relationships(source)
        selected = attrs.get("selected_relationships")
        if known is not None and (selected is not None or self.instance is None):
            selected = selected or []
            if not selected:
                raise serializers.ValidationError({"selectedRelationships": "a connection from a processor must "
                                                                           "select at least one relationship"})
            unknown = [name for name in selected if name not in known]
            if unknown:
                raise serializers.ValidationError({"selectedRelationships": [
                    f"{source.name!r} has no relationship {name!r} (it has: {', '.join(sorted(known)) or 'none'})"
                    for name in unknown]})
        elif source.kind != Kind.PROCESSOR and selected:
            raise serializers.ValidationError({"selectedRelationships": "only connections from a processor select "
                                                                       "relationships"})
        strategy = attrs.get("load_balance_strategy", getattr(self.instance, "load_balance_strategy", None))
        attribute = attrs.get("partitioning_attribute", getattr(self.instance, "partitioning_attribute", ""))
        if strategy == "PARTITION_BY_ATTRIBUTE" and not attribute:
            raise serializers.ValidationError({"partitioningAttribute": "partitioning by attribute needs the "
                                                                       "attribute's name (the PARTITION_BY_ATTRIBUTE "
                                                                       "strategy)"})
        return attrs

    def build(self, validated_data):
        """The new component (unsaved) the validated data describes."""
        group = self.context["group"]
        connection = Connection(
            parent=group, tenant=group.tenant, source=validated_data["source"],
            destination=validated_data["destination"],
            back_pressure_object_threshold=group.default_back_pressure_object_threshold,
            back_pressure_data_size_threshold=group.default_back_pressure_data_size_threshold,
            flowfile_expiration=group.default_flowfile_expiration,
            last_modifier=self.context["request"].user.get_username(),
            last_client_id=(validated_data.get("revision") or {}).get("clientId", ""))
        self._apply(connection, validated_data)
        return connection

    def apply(self, connection, validated_data) -> None:
        """Copy the validated fields onto ``connection`` (unsaved)."""
        self._apply(connection, validated_data)

    def _apply(self, connection: Connection, data: dict) -> None:
        self.apply_common(connection, data)
        for field in ("destination", "back_pressure_object_threshold", "back_pressure_data_size_threshold",
                      "flowfile_expiration", "prioritizers", "load_balance_strategy", "partitioning_attribute",
                      "load_balance_compression"):
            if field in data:
                setattr(connection, field, data[field])
        if "selected_relationships" in data:
            connection.selected_relationships = sorted(set(data["selected_relationships"]))
        if "bends" in data:
            connection.extra = {**connection.extra, "bends": [dict(bend) for bend in data["bends"]]}


def _relationships(component: Component) -> list[str] | None:
    """The relationship names a connection from ``component`` may select; None when it is not a
    processor (or its type is unknown, so any name is accepted)."""
    if component.kind != Kind.PROCESSOR:
        return None
    processor = component if isinstance(component, Processor) else component.processor  # select_related by lists
    cls = processor_class(processor.type)
    if cls is None:
        return None
    return [r.name for r in cls.relationships_for(processor.properties)]
