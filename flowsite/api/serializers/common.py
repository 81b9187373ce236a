"""What every component resource shares: identity, revision, place, position and the
requesting user's permissions on it."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from engine.units import parse_data_size, parse_duration
from flowsite.api.lookup import access_for
from flowsite.flows import access as policies
from flowsite.flows.models import Kind

#: The URL name of each kind's detail resource.
DETAIL_ROUTES = {
    Kind.PROCESS_GROUP: "api:process-group", Kind.PROCESSOR: "api:processor", Kind.CONNECTION: "api:connection",
    Kind.FUNNEL: "api:funnel", Kind.INPUT_PORT: "api:input-port", Kind.OUTPUT_PORT: "api:output-port",
    Kind.CONTROLLER_SERVICE: "api:controller-service", Kind.LABEL: "api:label",
}


class RevisionSerializer(serializers.Serializer):
    """A component's revision: changes name the one they were based on."""

    version = serializers.IntegerField(min_value=0, required=False,
                                       help_text="The version the change is based on.")
    clientId = serializers.CharField(max_length=100, required=False, allow_blank=True,
                                     help_text="The client that sends the change; a client may send several "
                                               "changes based on its own last one without waiting.")
    lastModifier = serializers.CharField(read_only=True)

    def validate(self, attrs):
        if attrs.get("version") is None and not attrs.get("clientId"):
            raise serializers.ValidationError("a revision needs a version (or the clientId of the last change)")
        return attrs


class PositionSerializer(serializers.Serializer):
    """Where a component sits on the canvas."""

    x = serializers.FloatField(allow_null=False)
    y = serializers.FloatField(allow_null=False)

    def validate(self, attrs):
        missing = {name: "This field is required." for name in ("x", "y") if name not in attrs}
        if missing:  # a partial update would otherwise let one out
            raise serializers.ValidationError(missing)
        return attrs


class PermissionsSerializer(serializers.Serializer):
    """What the requesting user may do with the component."""

    canRead = serializers.BooleanField(read_only=True)
    canWrite = serializers.BooleanField(read_only=True)
    canOperate = serializers.BooleanField(read_only=True)


def duration_field(help_text: str, **kwargs) -> serializers.CharField:
    """A NiFi duration (``30 sec``, ``5 mins``) checked by the engine's parser."""
    return serializers.CharField(max_length=50, help_text=help_text, validators=[_engine_check(parse_duration)],
                                 **kwargs)


def data_size_field(help_text: str, **kwargs) -> serializers.CharField:
    """A NiFi data size (``1 GB``) checked by the engine's parser."""
    return serializers.CharField(max_length=50, help_text=help_text, validators=[_engine_check(parse_data_size)],
                                 **kwargs)


def _engine_check(parse):
    def check(value: str) -> None:
        try:
            parse(value)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None
    return check


class ComponentSerializer(serializers.Serializer):
    """Fields common to every component resource."""

    id = serializers.UUIDField(read_only=True)
    uri = serializers.SerializerMethodField()
    revision = RevisionSerializer(required=False, help_text="Required when updating.")
    parentGroupId = serializers.UUIDField(source="parent_id", read_only=True, allow_null=True)
    versionedId = serializers.CharField(source="versioned_id", read_only=True,
                                        help_text="The identifier this component has in exported flow definitions.")
    name = serializers.CharField(max_length=500, required=False, allow_blank=True)
    comments = serializers.CharField(required=False, allow_blank=True, max_length=10_000)
    position = PositionSerializer(required=False)
    permissions = serializers.SerializerMethodField()

    def get_uri(self, component) -> str:
        return reverse(DETAIL_ROUTES[component.kind], args=[component.pk])

    @extend_schema_field(PermissionsSerializer)
    def get_permissions(self, component) -> dict:
        access = access_for(self.context["request"], component.tenant)
        return {"canRead": access.can(component, policies.VIEW),
                "canWrite": access.can(component, policies.MODIFY),
                "canOperate": access.can(component, policies.OPERATE)}

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["revision"] = {"version": instance.version, "clientId": instance.last_client_id,
                            "lastModifier": instance.last_modifier}
        data["position"] = {"x": instance.position_x, "y": instance.position_y}
        return data

    def apply_common(self, instance, data: dict) -> None:
        """Copy the common writable fields from validated ``data`` onto ``instance``."""
        for field, attribute in (("name", "name"), ("comments", "comments")):
            if field in data:
                setattr(instance, attribute, data[field])
        if "position" in data:
            instance.position_x = data["position"]["x"]
            instance.position_y = data["position"]["y"]
