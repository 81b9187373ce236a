"""Changing components from portal forms through the REST API's own serializers and change
rules (``flowsite.api.changes``), so a form accepts and refuses exactly what the API does. A
refusal comes back as serializer-shaped field errors, or as one message for the whole change
(a stale revision, a running processor, a missing policy)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rest_framework import exceptions

from flowsite.api import changes
from flowsite.flows.models import Component, ProcessGroup
from flowsite.flows.revisions import StaleRevisionError


@dataclass
class Outcome:
    """What became of a change: the component when it was made, else why not."""

    component: Component | None = None
    errors: dict = field(default_factory=dict)
    message: str = ""

    @property
    def ok(self) -> bool:
        """True when the change was made."""
        return self.component is not None


def _serializer(serializer_class, request, group: ProcessGroup, *args, context=None, **kwargs):
    return serializer_class(*args, context={"request": request, "group": group, **(context or {})}, **kwargs)


def create(request, serializer_class, group: ProcessGroup, data: dict, **context) -> Outcome:
    """Create the component ``data`` (an API request body) describes in ``group``; ``context``
    adds to the serializer's context what its view would."""
    serializer = _serializer(serializer_class, request, group, data=data, context=context)
    return _run(serializer, lambda: changes.create(request, group, serializer))


def update(request, serializer_class, component: Component, data: dict) -> Outcome:
    """Apply ``data`` (an API request body naming the revision it is based on) to ``component``."""
    serializer = _serializer(serializer_class, request, component.parent, component, data=data, partial=True)
    return _run(serializer, lambda: changes.update(request, component, serializer))


def delete(request, component: Component, version: str | None) -> str:
    """Delete ``component`` if ``version`` is its current one; '' when done, else why not."""
    try:
        changes.delete(request, component, int(version) if version and version.isdigit() else None, "")
    except StaleRevisionError as error:
        return stale_message(error)
    except exceptions.APIException as error:
        return _text(error.detail)
    return ""


def stale_message(error: StaleRevisionError) -> str:
    """What to tell a user whose change was based on an outdated page."""
    who = f" by {error.current.last_modifier}" if error.current.last_modifier else ""
    return (f"{error.component.name or 'This component'} was changed{who} since you opened this page "
            f"(it is now at version {error.current.version}). Your change was not saved: reload the page "
            "to see the current configuration, then make your change again.")


def _run(serializer, apply) -> Outcome:
    if not serializer.is_valid():
        return Outcome(errors=serializer.errors)
    try:
        return Outcome(component=apply())
    except StaleRevisionError as error:
        return Outcome(message=stale_message(error))
    except exceptions.ValidationError as error:
        return Outcome(errors=error.detail)
    except exceptions.APIException as error:
        return Outcome(message=_text(error.detail))


def _text(detail) -> str:
    return " ".join(messages(detail))


def messages(detail) -> list[str]:
    """Every message of a (possibly nested) serializer error, as text."""
    if isinstance(detail, dict):
        return [text for value in detail.values() for text in messages(value)]
    if isinstance(detail, (list, tuple)):
        return [text for value in detail for text in messages(value)]
    return [str(detail)] if detail else []
