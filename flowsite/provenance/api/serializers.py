"""Shapes of the provenance analytics API (the answers are built as plain data; these serializers
give them their documented form)."""

from __future__ import annotations

from rest_framework import serializers

from engine.spark.provenance_sql import QUESTIONS


class AnalyticsRequestSerializer(serializers.Serializer):
    """A new analytics request: a ready ``question`` with its ``params``, or (platform operators
    only) ``sql``, one read-only query of the view ``provenance``."""

    question = serializers.ChoiceField(list(QUESTIONS), required=False,
                                       help_text="A ready question (GET /api/v1/provenance-analytics/questions).")
    params = serializers.DictField(child=serializers.IntegerField(), required=False,
                                   help_text="The question's parameters, e.g. {\"hours\": 24}; missing ones take "
                                             "their defaults.")
    sql = serializers.CharField(required=False, trim_whitespace=True, max_length=20_000,
                                help_text="Platform operators only: one SELECT (or WITH … SELECT) over the view "
                                          "'provenance'.")
    tenant = serializers.UUIDField(required=False, help_text="Only this tenant's components (default: every tenant "
                                                             "whose provenance you may query; for a platform "
                                                             "operator, every event).")


class ParameterSerializer(serializers.Serializer):
    name = serializers.CharField()
    title = serializers.CharField()
    default = serializers.IntegerField()
    min = serializers.IntegerField()
    max = serializers.IntegerField()


class QuestionSerializer(serializers.Serializer):
    """A ready question."""

    id = serializers.CharField()
    title = serializers.CharField()
    description = serializers.CharField()
    parameters = ParameterSerializer(many=True)


class QuestionsSerializer(serializers.Serializer):
    """The ready questions, and whether you may send ad-hoc SQL."""

    questions = QuestionSerializer(many=True)
    may_use_sql = serializers.BooleanField(help_text="True for platform operators.")


class ColumnSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.CharField(help_text="Spark's type name (string, bigint, timestamp, map<string,string>, …).")


class ResultSerializer(serializers.Serializer):
    """The first rows of the answer."""

    columns = ColumnSerializer(many=True)
    rows = serializers.ListField(child=serializers.ListField(child=serializers.JSONField(allow_null=True)),
                                 help_text="Times in ISO 8601 (UTC).")
    row_count = serializers.IntegerField()
    truncated = serializers.BooleanField(help_text="True when the answer had more than max_rows rows.")
    max_rows = serializers.IntegerField()
    seconds = serializers.FloatField(help_text="How long Spark took.")


class MissingNodeSerializer(serializers.Serializer):
    node = serializers.CharField()
    reason = serializers.CharField()
    detail = serializers.CharField(required=False, help_text="The node's own words (platform operators only).")


class NodesSerializer(serializers.Serializer):
    asked = serializers.ListField(child=serializers.CharField(),
                                  help_text="The nodes asked (those connected when the job began, or the one named).")
    answered = serializers.ListField(child=serializers.CharField(), help_text="Those that answered.")
    missing = MissingNodeSerializer(many=True, help_text="Those left out, and why: the result is partial.")


class AnalyticsAnswerSerializer(serializers.Serializer):
    """An analytics request and, once done, its result."""

    id = serializers.CharField()
    state = serializers.ChoiceField(["queued", "exporting", "querying", "done", "failed"])
    percent = serializers.IntegerField()
    question = serializers.CharField(allow_null=True)
    params = serializers.DictField(child=serializers.IntegerField())
    sql = serializers.CharField(help_text="The SQL that runs (a question's, with its parameters).")
    adhoc = serializers.BooleanField()
    tenants = serializers.ListField(child=serializers.CharField(),
                                    help_text="The tenants whose components the request covers (empty: every tenant).")
    submitted_at = serializers.CharField()
    started_at = serializers.CharField(allow_null=True)
    finished_at = serializers.CharField(allow_null=True)
    expires_at = serializers.CharField(help_text="When the request and its result are forgotten.")
    nodes = NodesSerializer()
    partial = serializers.BooleanField(help_text="True when some node's provenance is missing (see nodes.missing).")
    result = ResultSerializer(allow_null=True)
    error = serializers.CharField(allow_blank=True)
    warnings = serializers.ListField(child=serializers.CharField())
    damage = serializers.ListField(child=serializers.DictField(), required=False,
                                   help_text="Platform operators only: each damaged place met (node, file, offset).")
    node_errors = serializers.ListField(child=serializers.DictField(), required=False,
                                        help_text="Platform operators only: the problems the nodes' exports met.")
    duration_seconds = serializers.FloatField(allow_null=True)
