"""Controller-service resources: type, properties, state and the components that reference the
service. As with processors, the engine's descriptors judge the properties: a service saved
with invalid ones reports them in ``validationErrors`` and cannot be enabled. Sensitive values
are write-only."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from engine.components import UnknownComponentTypeError, default_registry
from flowsite.api.serializers.common import ComponentSerializer, RevisionSerializer
from flowsite.api.serializers.processors import ProblemSerializer, set_properties
from flowsite.flows.models import ControllerService, Kind
from flowsite.flows.services import referencing_components
from flowsite.flows.validation import tenant_problems


def service_class(type_name: str):
    """The engine class of a controller-service type, or None for a type this platform does not have."""
    try:
        return default_registry().service(type_name)
    except UnknownComponentTypeError:
        return None


class ReferenceSerializer(serializers.Serializer):
    """A component whose property names this service."""

    id = serializers.UUIDField()
    kind = serializers.CharField()
    name = serializers.CharField()
    property = serializers.CharField()
    state = serializers.CharField()


class ControllerServiceSerializer(ComponentSerializer):
    """A controller service of a process group."""

    type = serializers.CharField(max_length=300, help_text="Short (CSVReader) or NiFi class name; set at "
                                                            "creation, cannot change.")
    bundle = serializers.JSONField(read_only=True, allow_null=True)
    properties = serializers.DictField(
        child=serializers.CharField(allow_null=True, allow_blank=True, max_length=1_000_000, trim_whitespace=False),
        required=False,
        help_text="Property values by name. On update only the named properties change; null unsets one.")
    sensitivePropertiesSet = serializers.SerializerMethodField(
        help_text="Sensitive properties that have a value (values are never returned).")
    state = serializers.CharField(source="scheduled_state", read_only=True,
                                  help_text="ENABLED or DISABLED; changed through run-status.")
    validationStatus = serializers.SerializerMethodField()
    validationErrors = serializers.SerializerMethodField()
    referencingComponents = serializers.SerializerMethodField(
        help_text="Processors and services whose properties name this service.")

    def get_sensitivePropertiesSet(self, service) -> list[str]:
        return sorted(service.sensitive_properties)

    def _problems(self, service) -> list[dict]:
        cache = self.context.setdefault("problems", {})
        if service.tenant_id not in cache:
            cache[service.tenant_id] = tenant_problems(service.tenant)
        return [problem.as_dict() for problem in cache[service.tenant_id].get(service.pk, [])]

    def get_validationStatus(self, service) -> str:
        return "INVALID" if self._problems(service) else "VALID"

    @extend_schema_field(ProblemSerializer(many=True))
    def get_validationErrors(self, service) -> list[dict]:
        return self._problems(service)

    @extend_schema_field(ReferenceSerializer(many=True))
    def get_referencingComponents(self, service) -> list[dict]:
        return [reference.as_dict() for reference in referencing_components(service)]

    def validate_properties(self, properties: dict) -> dict:
        if any("\x00" in name for name in properties):
            raise serializers.ValidationError("property names cannot hold NUL characters")
        return properties

    def validate_type(self, value: str) -> str:
        if self.instance is not None:
            if value != self.instance.type:
                raise serializers.ValidationError(f"the type of a service cannot change (it is {self.instance.type})")
            return value
        if service_class(value) is None:
            raise serializers.ValidationError(f"unknown controller service type {value!r}; "
                                              "GET /api/v1/controller-service-types lists the types there are")
        return value

    def build(self, validated_data):
        """The new service (unsaved, disabled) the validated data describes."""
        group = self.context["group"]
        cls = service_class(validated_data["type"])
        service = ControllerService(parent=group, tenant=group.tenant, type=validated_data["type"],
                                    last_modifier=self.context["request"].user.get_username(),
                                    last_client_id=(validated_data.get("revision") or {}).get("clientId", ""))
        if cls.nifi_bundle:
            service.bundle = dict(cls.nifi_bundle)
        self.apply(service, validated_data)
        service.name = service.name or cls.type_name
        return service

    def apply(self, service, validated_data) -> None:
        """Copy the validated fields onto ``service`` (unsaved)."""
        self.apply_common(service, validated_data)
        if "properties" in validated_data:
            set_properties(service, validated_data["properties"], Kind.CONTROLLER_SERVICE)


class ServiceRunStatusSerializer(serializers.Serializer):
    """A change of a controller service's state."""

    revision = RevisionSerializer()
    state = serializers.ChoiceField(["ENABLED", "DISABLED"])
