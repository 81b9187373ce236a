"""Shapes of the type catalogue (documentation of the schema; the data comes from the engine)."""

from __future__ import annotations

from rest_framework import serializers


class ComponentTypeSerializer(serializers.Serializer):
    """A processor or controller-service type."""

    type = serializers.CharField()
    nifiType = serializers.CharField(allow_null=True)
    names = serializers.ListField(child=serializers.CharField())
    origin = serializers.CharField()
    description = serializers.CharField()
    documentation = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    restricted = serializers.ListField(child=serializers.CharField(),
                                       help_text="The capabilities the type requires (NiFi 2's names, e.g. "
                                                 "read-filesystem); empty when it is not restricted.")
    properties = serializers.ListField(child=serializers.JSONField())
    seeAlso = serializers.ListField(child=serializers.CharField())


class ProcessorTypeSerializer(ComponentTypeSerializer):
    """A processor type."""

    relationships = serializers.ListField(child=serializers.JSONField())
    dynamicRelationships = serializers.BooleanField()
    supportsDynamicProperties = serializers.BooleanField()
    dynamicProperties = serializers.JSONField(allow_null=True)
    inputRequirement = serializers.CharField()
    primaryNodeOnly = serializers.BooleanField()
    triggerSerially = serializers.BooleanField()
    defaultSchedulingPeriod = serializers.CharField()
    readsAttributes = serializers.ListField(child=serializers.JSONField())
    writesAttributes = serializers.ListField(child=serializers.JSONField())
    stateful = serializers.CharField(allow_blank=True)


class ServiceTypeSerializer(ComponentTypeSerializer):
    """A controller-service type."""

    provides = serializers.ListField(child=serializers.CharField())
