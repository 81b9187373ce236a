"""Process group, funnel and port resources."""

from __future__ import annotations

from django.db.models import Count, Max
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from flowsite.api.serializers.common import ComponentSerializer, data_size_field, duration_field
from flowsite.flows.models import Component, FlowVersion, Funnel, Kind, ParameterContext, Port, ProcessGroup


class ContentsSerializer(serializers.Serializer):
    """How many components of each kind a group holds directly."""

    processGroups = serializers.IntegerField()
    processors = serializers.IntegerField()
    connections = serializers.IntegerField()
    funnels = serializers.IntegerField()
    inputPorts = serializers.IntegerField()
    outputPorts = serializers.IntegerField()
    controllerServices = serializers.IntegerField()
    labels = serializers.IntegerField()


_CONTENT_NAMES = {Kind.PROCESS_GROUP: "processGroups", Kind.PROCESSOR: "processors", Kind.CONNECTION: "connections",
                  Kind.FUNNEL: "funnels", Kind.INPUT_PORT: "inputPorts", Kind.OUTPUT_PORT: "outputPorts",
                  Kind.CONTROLLER_SERVICE: "controllerServices", Kind.LABEL: "labels"}


def _contents(group_ids) -> dict:
    """How many components of each kind each of ``group_ids`` holds directly, in one query."""
    counts = {pk: dict.fromkeys(_CONTENT_NAMES.values(), 0) for pk in group_ids}
    rows = Component.objects.filter(parent__in=group_ids).values("parent_id", "kind").annotate(n=Count("id"))
    for row in rows.order_by():
        counts[row["parent_id"]][_CONTENT_NAMES[row["kind"]]] = row["n"]
    return counts


def _current_versions(group_ids) -> dict:
    """The latest version number of each of ``group_ids`` that has one, in one query."""
    rows = FlowVersion.objects.filter(group__in=group_ids).values("group_id").annotate(latest=Max("number"))
    return {row["group_id"]: row["latest"] for row in rows.order_by()}


class ProcessGroupListSerializer(serializers.ListSerializer):
    """Process groups, their contents and current versions read for all of them at once."""

    def to_representation(self, data):
        groups = list(data.all() if hasattr(data, "all") else data)
        ids = [group.pk for group in groups]
        contents, versions = _contents(ids), _current_versions(ids)
        for group in groups:  # as annotations would be
            group.contents_counts, group.current_version = contents[group.pk], versions.get(group.pk)
        return super().to_representation(groups)


class ProcessGroupSerializer(ComponentSerializer):
    """A process group."""

    class Meta:
        list_serializer_class = ProcessGroupListSerializer

    tenantId = serializers.UUIDField(source="tenant_id", read_only=True)
    parameterContext = serializers.CharField(max_length=200, required=False, allow_null=True,
                                             help_text="Name of the tenant's parameter context the group uses.")
    parameterContextId = serializers.UUIDField(required=False, allow_null=True,
                                               help_text="Id of the parameter context the group uses (instead "
                                                         "of its name).")
    defaultBackPressureObjectThreshold = serializers.IntegerField(
        min_value=0, max_value=2**53, required=False, source="default_back_pressure_object_threshold")
    defaultBackPressureDataSizeThreshold = data_size_field(
        "Back pressure size of new connections.", required=False, source="default_back_pressure_data_size_threshold")
    defaultFlowFileExpiration = duration_field("Expiration of new connections.", required=False,
                                               source="default_flowfile_expiration")
    contents = serializers.SerializerMethodField()
    currentVersion = serializers.SerializerMethodField(help_text="The latest committed version, if any.")

    @extend_schema_field(ContentsSerializer)
    def get_contents(self, group) -> dict:
        if hasattr(group, "contents_counts"):
            return group.contents_counts
        return _contents([group.pk])[group.pk]

    def get_currentVersion(self, group) -> int | None:
        if hasattr(group, "current_version"):
            return group.current_version
        return _current_versions([group.pk]).get(group.pk)

    def to_representation(self, group):
        data = super().to_representation(group)
        data["parameterContext"] = group.parameter_context.name if group.parameter_context_id else None
        data["parameterContextId"] = str(group.parameter_context_id) if group.parameter_context_id else None
        return data

    def validate_parameterContext(self, name):
        if name is None:
            return None
        tenant = self.instance.tenant if self.instance is not None else self.context["group"].tenant
        context = ParameterContext.objects.filter(tenant=tenant, name=name).first()
        if context is None:
            raise serializers.ValidationError(f"the tenant has no parameter context named {name!r}")
        return context

    def validate_parameterContextId(self, pk):
        if pk is None:
            return None
        tenant = self.instance.tenant if self.instance is not None else self.context["group"].tenant
        context = ParameterContext.objects.filter(tenant=tenant, pk=pk).first()
        if context is None:
            raise serializers.ValidationError(f"the tenant has no parameter context {pk}")
        return context

    def validate(self, attrs):
        if "parameterContext" in attrs and "parameterContextId" in attrs \
                and attrs["parameterContext"] != attrs["parameterContextId"]:
            raise serializers.ValidationError({"parameterContextId": "names another context than parameterContext"})
        return attrs

    def build(self, validated_data):
        """The new component (unsaved) the validated data describes."""
        parent = self.context["group"]
        group = ProcessGroup(parent=parent, tenant=parent.tenant,
                             last_modifier=self.context["request"].user.get_username(),
                             last_client_id=(validated_data.get("revision") or {}).get("clientId", ""),
                             default_back_pressure_object_threshold=parent.default_back_pressure_object_threshold,
                             default_back_pressure_data_size_threshold=parent.default_back_pressure_data_size_threshold,
                             default_flowfile_expiration=parent.default_flowfile_expiration)
        self._apply(group, validated_data)
        if not group.name:
            group.name = "Process Group"
        return group

    def apply(self, group, validated_data) -> None:
        """Copy the validated fields onto ``group`` (unsaved)."""
        self._apply(group, validated_data)

    def _apply(self, group: ProcessGroup, data: dict) -> None:
        self.apply_common(group, data)
        for field in ("parameterContext", "parameterContextId"):
            if field in data:
                group.parameter_context = data[field]
        for field in ("default_back_pressure_object_threshold", "default_back_pressure_data_size_threshold",
                      "default_flowfile_expiration"):
            if field in data:
                setattr(group, field, data[field])


class ImportQuerySerializer(serializers.Serializer):
    """The query of an import."""

    name = serializers.CharField(max_length=500, required=False,
                                 help_text="Name of the new group (default: the definition's).")


class FunnelSerializer(ComponentSerializer):
    """A funnel."""

    def build(self, validated_data):
        """The new component (unsaved) the validated data describes."""
        group = self.context["group"]
        funnel = Funnel(parent=group, tenant=group.tenant, last_modifier=self.context["request"].user.get_username(),
                        last_client_id=(validated_data.get("revision") or {}).get("clientId", ""))
        self.apply_common(funnel, validated_data)
        return funnel

    def apply(self, funnel, validated_data) -> None:
        """Copy the validated fields onto ``funnel`` (unsaved)."""
        self.apply_common(funnel, validated_data)


class PortSerializer(ComponentSerializer):
    """An input or output port of a process group."""

    type = serializers.CharField(source="kind", read_only=True)
    concurrentlySchedulableTaskCount = serializers.IntegerField(min_value=1, max_value=1000, required=False,
                                                                source="concurrent_tasks")
    state = serializers.CharField(source="scheduled_state", read_only=True)

    def build(self, validated_data):
        """The new component (unsaved) the validated data describes."""
        group = self.context["group"]
        port = Port(parent=group, tenant=group.tenant, kind=self.context["port_kind"],
                    last_modifier=self.context["request"].user.get_username(),
                    last_client_id=(validated_data.get("revision") or {}).get("clientId", ""))
        self._apply(port, validated_data)
        if not port.name:
            port.name = "input" if port.kind == Kind.INPUT_PORT else "output"
        return port

    def apply(self, port, validated_data) -> None:
        """Copy the validated fields onto ``port`` (unsaved)."""
        self._apply(port, validated_data)

    def _apply(self, port: Port, data: dict) -> None:
        self.apply_common(port, data)
        if "concurrent_tasks" in data:
            port.concurrent_tasks = data["concurrent_tasks"]
