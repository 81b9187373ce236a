"""Label resources: NiFi's canvas labels (text in a box, its size and style)."""

from __future__ import annotations

from rest_framework import serializers

from flowsite.api.serializers.common import ComponentSerializer
from flowsite.flows.models import Label

#: Style keys a label takes (NiFi's): the size of its text and the colour behind it.
STYLE_KEYS = ("font-size", "background-color")


class LabelSerializer(ComponentSerializer):
    """A label on a group's canvas."""

    label = serializers.CharField(source="text", allow_blank=True, required=False, max_length=100_000,
                                  trim_whitespace=False, help_text="The text shown.")
    width = serializers.FloatField(min_value=1, max_value=100_000, required=False)
    height = serializers.FloatField(min_value=1, max_value=100_000, required=False)
    style = serializers.DictField(child=serializers.CharField(max_length=100), required=False,
                                  help_text="NiFi's label style: 'font-size' (e.g. '12px') and 'background-color' "
                                            "(e.g. '#fff7d7').")
    zIndex = serializers.IntegerField(source="z_index", min_value=-2**53, max_value=2**53, required=False)

    def validate_style(self, style: dict) -> dict:
        unknown = sorted(set(style) - set(STYLE_KEYS))
        if unknown:
            raise serializers.ValidationError(f"unknown style keys {', '.join(unknown)} (a label takes "
                                              f"{', '.join(STYLE_KEYS)})")
        return style

    def build(self, validated_data):
        """The new label (unsaved) the validated data describes."""
        group = self.context["group"]
        label = Label(parent=group, tenant=group.tenant, last_modifier=self.context["request"].user.get_username(),
                      last_client_id=(validated_data.get("revision") or {}).get("clientId", ""))
        self.apply(label, validated_data)
        return label

    def apply(self, label, validated_data) -> None:
        """Copy the validated fields onto ``label`` (unsaved)."""
        self.apply_common(label, validated_data)
        for field in ("text", "width", "height", "style", "z_index"):
            if field in validated_data:
                setattr(label, field, validated_data[field])
