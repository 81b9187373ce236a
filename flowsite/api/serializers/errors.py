"""The shape of error answers (documentation of the schema; ``flowsite.api.errors`` makes them)."""

from __future__ import annotations

from rest_framework import serializers

from flowsite.api.serializers.common import RevisionSerializer


class ErrorProblemSerializer(serializers.Serializer):
    """One thing wrong with a request."""

    path = serializers.CharField(help_text="JSON path of what is wrong: $ is the whole body (or query); "
                                           "for imports, the path in the flow definition.")
    message = serializers.CharField()


class ErrorSerializer(serializers.Serializer):
    """An error answer."""

    status = serializers.IntegerField(help_text="The HTTP status.")
    code = serializers.CharField(help_text="What kind of error (invalid, not_found, stale_revision...).")
    message = serializers.CharField()
    problems = ErrorProblemSerializer(many=True)
    currentRevision = RevisionSerializer(required=False, help_text="The component's revision now (stale revisions "
                                                                   "only).")
