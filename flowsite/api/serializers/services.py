"""Controller-service resources: type, properties, state and the components that reference the
service. As with processors, the engine's descriptors judge the properties: a service saved
with invalid ones reports them in ``validationErrors`` and cannot be enabled. Sensitive values
are write-only."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from engine.components import UnknownComponentTypeError, default_registry
from flowsite.api.serializers.common import ComponentSerializer, RevisionSerializer
from flowsite.api.serializers.processors import TypedComponentMixin, set_properties
from flowsite.flows.models import ControllerService, Kind
from flowsite.flows.services import referencing_components


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


class ControllerServiceSerializer(TypedComponentMixin, ComponentSerializer):
    """A controller service of a process group."""

    noun, types_path = "controller service", "controller-service-types"
    type_of = staticmethod(service_class)

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

    @extend_schema_field(ReferenceSerializer(many=True))
    def get_referencingComponents(self, service) -> list[dict]:
        return [reference.as_dict() for reference in referencing_components(service)]

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
