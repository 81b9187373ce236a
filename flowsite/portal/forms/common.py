"""What the component forms share: the revision a form was opened at, and the API's field
errors laid out per form field."""

from __future__ import annotations

from flowsite.portal.editing import messages

#: Serializer error keys that belong to no one field of a form.
GENERAL_KEYS = ("non_field_errors", "revision")


def field_errors(errors: dict | None) -> dict[str, list[str]]:
    """Serializer ``errors`` by field, each flattened to its messages."""
    return {name: messages(detail) for name, detail in (errors or {}).items() if name not in GENERAL_KEYS}


def general_errors(errors: dict | None) -> list[str]:
    """The messages of serializer ``errors`` that belong to no one field."""
    return [text for key in GENERAL_KEYS for text in messages((errors or {}).get(key))]


def revision(post) -> dict:
    """The revision a posted form was based on (its hidden ``version`` field)."""
    return {"version": post.get("version", "")}


def constant_label(value: str) -> str:
    """How one of the API's upper-case choices reads (TIMER_DRIVEN: "Timer driven")."""
    return value.replace("_", " ").capitalize()


def choice_pairs(values) -> list[tuple[str, str]]:
    """(value, label) for each of the API's upper-case choices."""
    return [(value, constant_label(value)) for value in values]
