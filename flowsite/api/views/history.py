"""The flow configuration history (NiFi's): every change made to the flows of the user's tenants,
newest first, each with who, when, what and the before/after of each changed field."""

from __future__ import annotations

import datetime

import django_filters
from rest_framework import serializers
from rest_framework.generics import ListAPIView

from flowsite.api.lookup import access_for, tenants_of
from flowsite.flows.models import FlowAction, Operation


class FlowActionSerializer(serializers.ModelSerializer):
    """One change to a flow."""

    tenantId = serializers.UUIDField(source="tenant_id")
    user = serializers.CharField(source="user_name")
    componentId = serializers.UUIDField(source="component_id")
    componentKind = serializers.CharField(source="component_kind")
    componentName = serializers.CharField(source="component_name")
    componentType = serializers.CharField(source="component_type")
    groupId = serializers.UUIDField(source="group_id", allow_null=True)
    changes = serializers.ListField(child=serializers.DictField(), help_text="[{field, before, after}]")

    class Meta:
        model = FlowAction
        fields = ["id", "timestamp", "tenantId", "user", "operation", "componentId", "componentKind",
                  "componentName", "componentType", "groupId", "changes"]


class _UtcDateTimeFilter(django_filters.IsoDateTimeFilter):
    """An ISO 8601 time, compared in UTC: PostgreSQL refuses offsets Python accepts (``-22:44``)."""

    def filter(self, qs, value):
        if value is not None:
            try:
                value = value.astimezone(datetime.timezone.utc)
            except OverflowError:
                raise serializers.ValidationError({self.field_name: "the time is out of range"}) from None
        return super().filter(qs, value)


class FlowActionFilter(django_filters.FilterSet):
    """``?componentId=``, ``?user=``, ``?operation=``, ``?since=``, ``?until=``."""

    componentId = django_filters.UUIDFilter(field_name="component_id", help_text="Id of the component.")
    user = django_filters.CharFilter(field_name="user_name", help_text="User name of who made the change.")
    operation = django_filters.ChoiceFilter(choices=Operation.choices)
    since = _UtcDateTimeFilter(field_name="timestamp", lookup_expr="gte",
                               help_text="Changes at or after this time (ISO 8601).")
    until = _UtcDateTimeFilter(field_name="timestamp", lookup_expr="lt",
                               help_text="Changes before this time (ISO 8601).")

    class Meta:
        model = FlowAction
        fields = ["componentId", "user", "operation", "since", "until"]


class FlowHistory(ListAPIView):
    """The changes to the flows of the user's tenants that the user may see, newest first."""

    serializer_class = FlowActionSerializer
    filterset_class = FlowActionFilter

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator asks without a request
            return FlowAction.objects.none()
        accesses = [access_for(self.request, tenant) for tenant in tenants_of(self.request)]
        return FlowAction.objects.restrict(accesses).order_by("-timestamp", "-id")
