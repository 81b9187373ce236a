"""The component reference in docs/ is the one the components' declarations produce."""

from __future__ import annotations

from pathlib import Path

from engine.components import ComponentRegistry
from engine.docs import render_components

DOCS = Path(__file__).resolve().parents[2] / "docs" / "components.md"


def test_component_reference_is_up_to_date():
    expected = render_components(ComponentRegistry(use_entry_points=False))
    assert DOCS.read_text() == expected, "docs/components.md is stale: run `python -m engine docs > docs/components.md`"


def test_every_builtin_component_is_documented():
    registry = ComponentRegistry(use_entry_points=False)
    for entry in [*registry.processors(), *registry.services()]:
        cls = entry.cls
        assert cls.description(), f"{cls.type_name} has no description"
        for descriptor in cls.properties:
            assert descriptor.description, f"property {descriptor.name!r} of {cls.type_name} has no description"
        for relationship in getattr(cls, "relationships", ()):
            assert relationship.description, f"relationship {relationship.name!r} of {cls.type_name} has no description"
