"""Processor resources: type, properties, scheduling and relationships. The engine's own
descriptors and validators judge the properties: a processor saved with invalid ones reports
them in ``validationErrors`` and cannot start. Sensitive property values are write-only: answers
name the sensitive properties that are set, never their values."""

from __future__ import annotations

from collections.abc import Callable

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from engine.components import UnknownComponentTypeError, default_registry
from engine.cron import CronSchedule
from engine.units import parse_duration
from flowsite.api.serializers.common import ComponentSerializer, RevisionSerializer, duration_field
from flowsite.flows.definition import property_context, sensitive_names
from flowsite.flows.models import Kind, Processor
from flowsite.flows.secrets import current_key
from flowsite.flows.validation import shown_problems


class RelationshipSerializer(serializers.Serializer):
    """A relationship of a processor and whether this processor auto-terminates it."""

    name = serializers.CharField()
    description = serializers.CharField()
    autoTerminate = serializers.BooleanField()


class ProblemSerializer(serializers.Serializer):
    """Why a component is invalid; ``property`` names the property at fault when one is."""

    property = serializers.CharField(allow_null=True)
    message = serializers.CharField()


def processor_class(type_name: str):
    """The engine class of a processor type, or None for a type this platform does not have."""
    try:
        return default_registry().processor(type_name)
    except UnknownComponentTypeError:
        return None


class TypedComponentMixin:
    """What processors and controller services share: a type set at creation (``type_of`` finds
    its engine class; ``noun`` and ``types_path`` name it in messages), properties, and the
    validation problems the engine finds (one check of the tenant's flow per serializer)."""

    noun: str
    types_path: str
    type_of: Callable[[str], type | None]

    def _problems(self, component) -> list[dict]:
        cache = self.context.setdefault("problems", {})
        if component.tenant_id not in cache:
            cache[component.tenant_id] = shown_problems(component.tenant)
        return [problem.as_dict() for problem in cache[component.tenant_id].get(component.pk, [])]

    def get_validationStatus(self, component) -> str:
        return "INVALID" if self._problems(component) else "VALID"

    @extend_schema_field(ProblemSerializer(many=True))
    def get_validationErrors(self, component) -> list[dict]:
        return self._problems(component)

    def validate_properties(self, properties: dict) -> dict:
        if any("\x00" in name for name in properties):
            raise serializers.ValidationError("property names cannot hold NUL characters")
        return properties

    def validate_type(self, value: str) -> str:
        if self.instance is not None:
            if value != self.instance.type:
                raise serializers.ValidationError(f"the type of a {self.noun} cannot change (it is {self.instance.type})")
            return value
        if self.type_of(value) is None:
            raise serializers.ValidationError(f"unknown {self.noun} type {value!r}; GET /api/v1/{self.types_path} "
                                              "lists the types there are")
        return value


class ProcessorSerializer(TypedComponentMixin, ComponentSerializer):
    """A processor."""

    noun, types_path = "processor", "processor-types"
    type_of = staticmethod(processor_class)

    type = serializers.CharField(max_length=300, help_text="Short (GenerateFlowFile) or NiFi class name; "
                                                            "set at creation, cannot change.")
    bundle = serializers.JSONField(read_only=True, allow_null=True)
    properties = serializers.DictField(
        child=serializers.CharField(allow_null=True, allow_blank=True, max_length=1_000_000, trim_whitespace=False),
        required=False,
        help_text="Property values by name. On update only the named properties change; null unsets one.")
    sensitivePropertiesSet = serializers.SerializerMethodField(
        help_text="Sensitive properties that have a value (values are never returned).")
    schedulingStrategy = serializers.ChoiceField(["TIMER_DRIVEN", "CRON_DRIVEN"], source="scheduling_strategy",
                                                 required=False)
    schedulingPeriod = serializers.CharField(max_length=100, source="scheduling_period", required=False,
                                             help_text="A duration (timer driven) or a CRON expression.")
    executionNode = serializers.ChoiceField(["ALL", "PRIMARY"], source="execution_node", required=False)
    concurrentlySchedulableTaskCount = serializers.IntegerField(min_value=1, max_value=1000, source="concurrent_tasks",
                                                                required=False)
    penaltyDuration = duration_field("How long a penalized FlowFile waits.", source="penalty_duration",
                                     required=False)
    yieldDuration = duration_field("How long the processor yields.", source="yield_duration", required=False)
    bulletinLevel = serializers.ChoiceField(["DEBUG", "INFO", "WARN", "ERROR", "NONE"], source="bulletin_level",
                                            required=False)
    runDurationMillis = serializers.IntegerField(min_value=0, max_value=60_000, source="run_duration_millis",
                                                 required=False)
    autoTerminatedRelationships = serializers.ListField(child=serializers.CharField(max_length=200),
                                                        source="auto_terminated", required=False, max_length=1000)
    state = serializers.CharField(source="scheduled_state", read_only=True,
                                  help_text="RUNNING, STOPPED or DISABLED; changed through run-status.")
    relationships = serializers.SerializerMethodField()
    validationStatus = serializers.SerializerMethodField()
    validationErrors = serializers.SerializerMethodField()

    def get_sensitivePropertiesSet(self, processor) -> list[str]:
        return sorted(processor.sensitive_properties)

    @extend_schema_field(RelationshipSerializer(many=True))
    def get_relationships(self, processor) -> list[dict]:
        cls = processor_class(processor.type)
        if cls is None:
            return [{"name": name, "description": "", "autoTerminate": True} for name in processor.auto_terminated]
        return [{"name": r.name, "description": r.description, "autoTerminate": r.name in processor.auto_terminated}
                for r in cls.relationships_for(processor.properties)]


    def validate(self, attrs):
        cls = processor_class(attrs.get("type") or self.instance.type)
        strategy = attrs.get("scheduling_strategy", getattr(self.instance, "scheduling_strategy", "TIMER_DRIVEN"))
        period = attrs.get("scheduling_period")
        if period is None and self.instance is not None and "scheduling_strategy" in attrs:
            period = self.instance.scheduling_period
        if period is not None:
            try:
                CronSchedule(period) if strategy == "CRON_DRIVEN" else parse_duration(period)
            except ValueError as error:
                raise serializers.ValidationError({"schedulingPeriod": str(error)}) from None
        if cls is not None and "auto_terminated" in attrs:
            properties = self._merged_properties(attrs)
            known = {r.name for r in cls.relationships_for(properties)}
            unknown = [name for name in attrs["auto_terminated"] if name not in known]
            if unknown:
                raise serializers.ValidationError({"autoTerminatedRelationships": [
                    f"{cls.type_name} has no relationship {name!r} (it has: {', '.join(sorted(known)) or 'none'})"
                    for name in unknown]})
        return attrs

    def _merged_properties(self, attrs) -> dict:
        properties = dict(self.instance.properties) if self.instance is not None else {}
        for name, value in (attrs.get("properties") or {}).items():
            if value is None:
                properties.pop(name, None)
            else:
                properties[name] = value
        return properties

    def build(self, validated_data):
        """The new component (unsaved) the validated data describes."""
        group = self.context["group"]
        cls = processor_class(validated_data["type"])
        processor = Processor(parent=group, tenant=group.tenant, type=validated_data["type"],
                              scheduling_period=cls.default_scheduling_period,
                              execution_node="PRIMARY" if cls.primary_node_only else "ALL",
                              auto_terminated=[r.name for r in cls.relationships if r.auto_terminate_default],
                              last_modifier=self.context["request"].user.get_username())
        if cls.nifi_bundle:
            processor.bundle = dict(cls.nifi_bundle)
        revision = validated_data.get("revision") or {}
        processor.last_client_id = revision.get("clientId", "")
        self._apply(processor, validated_data)
        processor.name = processor.name or cls.type_name
        return processor

    def apply(self, processor, validated_data) -> None:
        """Copy the validated fields onto ``processor`` (unsaved)."""
        self._apply(processor, validated_data)

    def _apply(self, processor: Processor, data: dict) -> None:
        self.apply_common(processor, data)
        for field in ("scheduling_strategy", "scheduling_period", "execution_node", "concurrent_tasks",
                      "penalty_duration", "yield_duration", "bulletin_level", "run_duration_millis"):
            if field in data:
                setattr(processor, field, data[field])
        if "auto_terminated" in data:
            processor.auto_terminated = sorted(set(data["auto_terminated"]))
        if "properties" in data:
            set_properties(processor, data["properties"], Kind.PROCESSOR)


def set_properties(component, changes: dict[str, str | None], kind: str) -> None:
    """Apply property ``changes`` (None unsets) to a processor or service, sealing sensitive values."""
    sensitive = sensitive_names(component.type, kind, component.extra.get("propertyDescriptors"))
    key = current_key()
    properties = dict(component.properties)
    sealed = dict(component.sensitive_properties)
    for name, value in changes.items():
        if value is None:
            properties.pop(name, None)
            sealed.pop(name, None)
        elif name in sensitive:
            sealed[name] = key.seal(value, property_context(component, name))
            properties.pop(name, None)
        else:
            properties[name] = value
    component.properties = properties
    component.sensitive_properties = sealed


class GroupRunStatusSerializer(serializers.Serializer):
    """Starting a whole process group (NiFi's "start" of a group)."""

    state = serializers.ChoiceField(["RUNNING"], help_text="RUNNING: start every stopped, valid processor and "
                                                           "port of the group and the groups inside it.")


class RunStatusSerializer(serializers.Serializer):
    """A change of a component's run state."""

    revision = RevisionSerializer()
    state = serializers.ChoiceField(["RUNNING", "STOPPED", "DISABLED"])
