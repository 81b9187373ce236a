"""Telling open canvases that the design changed, once the change has committed.

Events go to the Channels group ``pg.<group id>`` of the process group the component is in (and,
for a group, its own), where every web replica's subscribed sockets receive them. Only the
``*_on_commit`` functions are for actions: they send nothing when the transaction rolls back.
"""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from flowsite.flows.models import Component

__all__ = ["design_changed_on_commit", "group_name", "send_design_changed_rollback_unsafe"]

logger = logging.getLogger(__name__)


def group_name(group_id) -> str:
    """The Channels group of the sockets subscribed to process group ``group_id``."""
    return f"pg.{group_id}"


def send_design_changed_rollback_unsafe(event: dict, groups: list[str]) -> None:
    """Send ``event`` to ``groups`` now, whatever becomes of the current transaction. A channel
    layer that cannot be reached loses the event (the canvases catch up on their next load) and
    is logged; it never fails the change that was made."""
    layer = get_channel_layer()
    if layer is None:
        return
    for group in groups:
        try:
            async_to_sync(layer.group_send)(group, event)
        except Exception:  # noqa: BLE001 - a live view's hint must not fail a committed change
            logger.warning("could not tell %s of a design change (%s)", group, event, exc_info=True)


def design_changed_on_commit(component: Component, operation: str) -> None:
    """Once the current transaction commits, tell the canvases showing ``component``'s group (and
    a group's own canvas) that it changed by ``operation``."""
    event = {"type": "design.changed", "component": str(component.pk), "kind": component.kind,
             "operation": str(operation), "parent": str(component.parent_id) if component.parent_id else None}
    groups = [group_name(component.parent_id)] if component.parent_id else []
    if component.kind == "PROCESS_GROUP":
        groups.append(group_name(component.pk))
    transaction.on_commit(lambda: send_design_changed_rollback_unsafe(event, groups))
