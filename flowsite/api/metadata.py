"""Answers to OPTIONS requests."""

from __future__ import annotations

from rest_framework.metadata import SimpleMetadata


class Metadata(SimpleMetadata):
    """A resource's name, description and media types. The fields its methods take are left
    out: describing them means loading the object, which the views do only through their policy
    checks (an OPTIONS request makes none)."""

    def determine_actions(self, request, view) -> dict:
        return {}
