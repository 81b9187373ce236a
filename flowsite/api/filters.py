"""Filters of list resources (``?name=``, ``?type=``, ``?state=``...)."""

from __future__ import annotations

import django_filters

from flowsite.flows.models import Connection, ControllerService, Funnel, Label, Port, ProcessGroup, Processor


class _NamedFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains", help_text="Part of the name (any case).")


class ProcessGroupFilter(_NamedFilter):
    class Meta:
        model = ProcessGroup
        fields = ["name"]


class ProcessorFilter(_NamedFilter):
    type = django_filters.CharFilter(lookup_expr="icontains", help_text="Part of the type name.")
    state = django_filters.ChoiceFilter(field_name="scheduled_state",
                                        choices=[(s, s) for s in ("RUNNING", "STOPPED", "DISABLED")])

    class Meta:
        model = Processor
        fields = ["name", "type", "state"]


class ConnectionFilter(_NamedFilter):
    source = django_filters.UUIDFilter(field_name="source_id", help_text="Id of the source component.")
    destination = django_filters.UUIDFilter(field_name="destination_id", help_text="Id of the destination.")

    class Meta:
        model = Connection
        fields = ["name", "source", "destination"]


class FunnelFilter(_NamedFilter):
    class Meta:
        model = Funnel
        fields = ["name"]


class PortFilter(_NamedFilter):
    class Meta:
        model = Port
        fields = ["name"]


class ControllerServiceFilter(_NamedFilter):
    type = django_filters.CharFilter(lookup_expr="icontains", help_text="Part of the type name.")
    state = django_filters.ChoiceFilter(field_name="scheduled_state",
                                        choices=[(s, s) for s in ("ENABLED", "DISABLED")])

    class Meta:
        model = ControllerService
        fields = ["name", "type", "state"]


class LabelFilter(_NamedFilter):
    class Meta:
        model = Label
        fields = ["name"]
