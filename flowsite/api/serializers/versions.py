"""Flow version resources."""

from __future__ import annotations

from rest_framework import serializers

from flowsite.api.serializers.common import RevisionSerializer


class FlowVersionSerializer(serializers.Serializer):
    """A committed version of a process group."""

    number = serializers.IntegerField(read_only=True)
    comment = serializers.CharField(max_length=10_000, allow_blank=True, required=False)
    author = serializers.CharField(source="author.username", read_only=True, allow_null=True, default=None)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)


class FlowVersionDetailSerializer(FlowVersionSerializer):
    """A committed version with its flow definition."""

    definition = serializers.JSONField(read_only=True)


class DifferenceFieldSerializer(serializers.Serializer):
    field = serializers.CharField()
    to = serializers.JSONField(allow_null=True)

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = serializers.JSONField(allow_null=True)
        return fields


class DifferenceSerializer(serializers.Serializer):
    """One component that differs between two versions."""

    identifier = serializers.CharField()
    componentType = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    change = serializers.ChoiceField(["ADDED", "REMOVED", "MODIFIED"])
    fields = DifferenceFieldSerializer(many=True)


class VersionDiffSerializer(serializers.Serializer):
    """The differences from one version (or the current flow) to another."""

    fromVersion = serializers.CharField()
    toVersion = serializers.CharField()
    differences = DifferenceSerializer(many=True)


class RevertSerializer(serializers.Serializer):
    """A revert names the group's revision it is based on."""

    revision = RevisionSerializer()
