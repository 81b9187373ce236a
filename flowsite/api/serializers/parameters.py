"""Parameter-context resources: a tenant's named sets of parameters (``#{name}`` in property
values). Sensitive values are write-only: answers say ``valueSet`` instead. An update's
``parameters`` is the whole list; a parameter sent without ``value`` keeps the one it has."""

from __future__ import annotations

from django.urls import reverse
from rest_framework import serializers

from flowsite.api.serializers.common import RevisionSerializer
from flowsite.flows.parameter_actions import KEEP


class ContextParameterSerializer(serializers.Serializer):
    """One parameter; ``value`` is never returned for a sensitive one."""

    name = serializers.RegexField(r"^[A-Za-z0-9 ._\-]+$", max_length=200,
                                  help_text="Letters, digits, spaces, '.', '_' and '-' (NiFi's rule).")
    value = serializers.CharField(allow_null=True, allow_blank=True, required=False, max_length=1_000_000,
                                  trim_whitespace=False, help_text="Omitted on update: the value is kept.")
    sensitive = serializers.BooleanField(required=False, help_text="Set at creation of the parameter; cannot change.")
    description = serializers.CharField(allow_blank=True, required=False, max_length=10_000)
    valueSet = serializers.BooleanField(read_only=True, help_text="The parameter has a value.")

    def to_representation(self, parameter):
        sensitive = bool(parameter.get("sensitive"))
        return {"name": parameter["name"], "value": None if sensitive else parameter.get("value"),
                "sensitive": sensitive, "description": parameter.get("description", ""),
                "valueSet": parameter.get("value") is not None}


class ParameterContextSerializer(serializers.Serializer):
    """A parameter context of a tenant, and the process groups bound to it."""

    id = serializers.UUIDField(read_only=True)
    uri = serializers.SerializerMethodField()
    tenantId = serializers.UUIDField(source="tenant_id", required=False,
                                     help_text="The tenant (needed at creation by a member of several).")
    revision = RevisionSerializer(required=False, help_text="Required when updating.")
    name = serializers.CharField(max_length=200, required=False)
    description = serializers.CharField(allow_blank=True, required=False, max_length=10_000)
    parameters = ContextParameterSerializer(many=True, required=False, max_length=10_000)
    inheritedParameterContexts = serializers.ListField(child=serializers.CharField(), source="inherited",
                                                       read_only=True)
    boundProcessGroups = serializers.SerializerMethodField(help_text="Ids of the groups that use the context.")

    def get_uri(self, context) -> str:
        return reverse("api:parameter-context", args=[context.pk])

    def get_boundProcessGroups(self, context) -> list[str]:
        return sorted(str(pk) for pk in context.groups.values_list("pk", flat=True))

    def to_representation(self, context):
        data = super().to_representation(context)
        data["revision"] = {"version": context.version, "clientId": context.last_client_id,
                            "lastModifier": context.last_modifier}
        return data

    def validate_parameters(self, parameters: list[dict]) -> list[dict]:
        if any("name" not in p for p in parameters):  # a partial update does not require it field by field
            raise serializers.ValidationError("every parameter has a name")
        names = [p["name"] for p in parameters]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise serializers.ValidationError(f"parameter names repeat: {', '.join(repeated)}")
        current = {p["name"]: p for p in (self.instance.parameters if self.instance is not None else ())}
        changed = [p["name"] for p in parameters if p["name"] in current and "sensitive" in p
                   and bool(p["sensitive"]) != bool(current[p["name"]].get("sensitive"))]
        if changed:
            raise serializers.ValidationError(f"a parameter's sensitivity cannot change ({', '.join(changed)}): "
                                              "remove the parameter and add it again")
        return [{**p, "value": p.get("value", KEEP)} for p in parameters]

    def apply(self, context, validated_data) -> None:
        """Copy the validated name and description onto ``context`` (unsaved)."""
        for field in ("name", "description"):
            if field in validated_data:
                setattr(context, field, validated_data[field])
