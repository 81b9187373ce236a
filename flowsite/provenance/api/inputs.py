"""What the provenance and queue endpoints accept: NiFi's request entities, checked strictly.

A field no entity has, a time that is not one, a size that is not one, a ``maxResults`` out of
range or a value too long is a 400 naming it (``$.provenance.request.startDate: …``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from engine.units import parse_data_size
from flowsite.provenance import criteria, formats

__all__ = ["ExportSubmitSerializer", "LineageSubmitSerializer", "ProvenanceSubmitSerializer", "ReplaySerializer",
           "problem_at"]

#: The most search terms a query may hold, and the longest term name and value.
MAX_TERMS = 50
MAX_TERM_NAME = 200
MAX_TERM_VALUE = 1000
#: The most results a query may ask for (NiFi's UI offers up to 10,000), and the default.
MAX_RESULTS = 10_000
DEFAULT_RESULTS = 1_000


def problem_at(path: Sequence[str], message: str) -> serializers.ValidationError:
    """A 400 naming the field at ``path`` of the request body."""
    detail: Any = [message]
    for name in reversed(path):
        detail = {name: detail}
    return serializers.ValidationError(detail)


def TENANT_FIELD() -> serializers.UUIDField:  # noqa: N802 - a field declaration, as DRF's read
    """Flowsite's own field of a search: one of the user's tenants only."""
    return serializers.UUIDField(required=False, allow_null=True, help_text=(
        "Flowsite's: search this tenant only (404 if it is none of yours); by default every tenant of yours whose "
        "provenance you may query."))


class StrictSerializer(serializers.Serializer):
    """A serializer that refuses fields it does not have (a misspelt field must not be ignored)."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["no such field"] for name in unknown})
        return super().to_internal_value(data)


@extend_schema_field({"type": "string", "example": "2024-05-01T12:00:00Z"})
class TimeField(serializers.Field):
    """A time in ISO 8601 or NiFi's ``MM/dd/yyyy HH:mm:ss z``, as milliseconds since the epoch."""

    def to_internal_value(self, data):
        if not isinstance(data, str) or len(data) > 100:
            raise serializers.ValidationError("a time is text: ISO 8601 or MM/dd/yyyy HH:mm:ss z")
        try:
            return formats.parse_time(data)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None


@extend_schema_field({"type": "string", "example": "10 KB"})
class SizeField(serializers.Field):
    """A NiFi data size (``10 KB``) or a number of bytes, as bytes."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (str, int)) or (isinstance(data, str) and len(data) > 50):
            raise serializers.ValidationError("a size is a data size such as '10 KB' or a number of bytes")
        try:
            size = parse_data_size(data)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None
        if size < 0:
            raise serializers.ValidationError("a size is not negative")
        return size


@extend_schema_field({"type": "string", "example": "node-1:42"})
class EventIdField(serializers.Field):
    """An event id: cluster-unique (``node-1:42``) or the node's number (with ``clusterNodeId``)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (str, int)) or len(str(data)) > 300:
            raise serializers.ValidationError("an event id is text such as 'node-1:42' or a number")
        return str(data)


class SearchValueSerializer(StrictSerializer):
    """NiFi's ``ProvenanceSearchValueDTO`` (a plain text value is taken as ``{"value": …}``, as
    NiFi before 1.11 sent it)."""

    value = serializers.CharField(max_length=MAX_TERM_VALUE, trim_whitespace=False,
                                  help_text="The value; '*' and '?' make it a wildcard pattern. It matches the "
                                            "whole field, ignoring case.")
    inverse = serializers.BooleanField(default=False, help_text="Match every event but those the value matches.")

    def to_internal_value(self, data):
        return super().to_internal_value({"value": data} if isinstance(data, str) else data)


class ProvenanceRequestSerializer(StrictSerializer):
    """NiFi's ``ProvenanceRequestDTO``."""

    searchTerms = serializers.DictField(
        child=SearchValueSerializer(), required=False,
        help_text="By searchable field id (GET /provenance/search-options); any other key is an attribute name.")
    startDate = TimeField(required=False, allow_null=True, help_text="The earliest event time to include.")
    endDate = TimeField(required=False, allow_null=True, help_text="The latest event time to include.")
    minimumFileSize = SizeField(required=False, allow_null=True, help_text="The smallest content to include.")
    maximumFileSize = SizeField(required=False, allow_null=True, help_text="The largest content to include.")
    maxResults = serializers.IntegerField(min_value=1, max_value=MAX_RESULTS, default=DEFAULT_RESULTS,
                                          help_text="The most events to return, newest first.")
    clusterNodeId = serializers.CharField(max_length=200, required=False, allow_null=True,
                                          help_text="Search this node only.")
    tenant = TENANT_FIELD()
    summarize = serializers.BooleanField(required=False, allow_null=True,
                                         help_text="Accepted for NiFi clients: results are always summaries "
                                                   "(GET /provenance-events/{id} gives every field).")
    incrementalResults = serializers.BooleanField(default=True, allow_null=True,
                                                  help_text="Show the events found so far while the query runs.")

    def validate_searchTerms(self, terms):
        if len(terms) > MAX_TERMS:
            raise serializers.ValidationError(f"at most {MAX_TERMS} search terms")
        for name in terms:
            if not name.strip() or len(name) > MAX_TERM_NAME:
                raise serializers.ValidationError(f"a search term's name is 1 to {MAX_TERM_NAME} characters")
        if "EventType" in terms:
            try:
                criteria.event_types(terms["EventType"]["value"])
            except ValueError as error:
                raise serializers.ValidationError({"EventType": [str(error)]}) from None
        return terms

    def validate(self, attrs):
        for low, high, what in (("startDate", "endDate", "the end date is before the start date"),
                                ("minimumFileSize", "maximumFileSize", "the maximum size is below the minimum")):
            if attrs.get(low) is not None and attrs.get(high) is not None and attrs[high] < attrs[low]:
                raise serializers.ValidationError({high: what})
        return attrs


class ExportRequestSerializer(ProvenanceRequestSerializer):
    """The search of an export: a provenance request without what concerns paging."""

    maxResults = None
    summarize = None
    incrementalResults = None


class _ProvenanceSerializer(StrictSerializer):
    request = ProvenanceRequestSerializer(required=False)


class ProvenanceSubmitSerializer(StrictSerializer):
    """NiFi's ``ProvenanceEntity`` as submitted: ``{"provenance": {"request": {…}}}``."""

    provenance = _ProvenanceSerializer(required=False)


class LineageRequestSerializer(StrictSerializer):
    """NiFi's ``LineageRequestDTO``."""

    lineageRequestType = serializers.ChoiceField(
        ["FLOWFILE", "PARENTS", "CHILDREN"],
        help_text="FLOWFILE: the lineage of a FlowFile (uuid, or the FlowFile of eventId); PARENTS / CHILDREN: "
                  "expand one event's parents or children.")
    uuid = serializers.CharField(max_length=200, required=False, allow_null=True,
                                 help_text="The FlowFile (FLOWFILE only; wins over eventId).")
    eventId = EventIdField(required=False, allow_null=True)
    clusterNodeId = serializers.CharField(max_length=200, required=False, allow_null=True,
                                          help_text="The node of a numeric eventId.")
    tenant = TENANT_FIELD()

    def validate(self, attrs):
        kind = attrs["lineageRequestType"]
        if kind == "FLOWFILE" and not attrs.get("uuid") and not attrs.get("eventId"):
            raise serializers.ValidationError({"uuid": "give the FlowFile's uuid or an eventId"})
        if kind != "FLOWFILE" and not attrs.get("eventId"):
            raise serializers.ValidationError({"eventId": f"{kind} needs the event's id"})
        if kind != "FLOWFILE" and attrs.get("uuid"):
            raise serializers.ValidationError({"uuid": "only a FLOWFILE request takes a uuid"})
        return attrs


class _LineageSerializer(StrictSerializer):
    request = LineageRequestSerializer()


class LineageSubmitSerializer(StrictSerializer):
    """NiFi's ``LineageEntity`` as submitted: ``{"lineage": {"request": {…}}}``."""

    lineage = _LineageSerializer()


class _ExportSerializer(StrictSerializer):
    format = serializers.ChoiceField(["CSV", "JSON"], default="CSV", help_text="CSV (one row an event) or JSON "
                                                                             "(an array of event summaries).")
    maxEvents = serializers.IntegerField(min_value=1, required=False,
                                         help_text="The most events to export, newest first (at most "
                                                   "FLOWSITE_PROVENANCE_EXPORT_MAX_EVENTS, the default).")
    request = ExportRequestSerializer(required=False)

    def validate_maxEvents(self, value):
        if value > settings.FLOWSITE_PROVENANCE_EXPORT_MAX_EVENTS:
            most = settings.FLOWSITE_PROVENANCE_EXPORT_MAX_EVENTS
            raise serializers.ValidationError(f"at most {most} events (FLOWSITE_PROVENANCE_EXPORT_MAX_EVENTS)")
        return value


class ExportSubmitSerializer(StrictSerializer):
    """A provenance export: ``{"provenanceExport": {"format": "CSV", "request": {…}}}``."""

    provenanceExport = _ExportSerializer(required=False)


class ReplaySerializer(StrictSerializer):
    """NiFi's ``SubmitReplayRequestEntity``."""

    eventId = EventIdField(help_text="The event to replay: 'node-1:42', or 42 with clusterNodeId.")
    clusterNodeId = serializers.CharField(max_length=200, required=False, allow_null=True)
