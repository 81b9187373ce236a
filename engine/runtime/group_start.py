"""Starting a whole process group, as NiFi's "start" of a group does (and ``engine run --start``).

Every processor and port of the group and of the groups inside it is started unless it is
DISABLED (NiFi's meaning: it cannot start until it is enabled) or already running; an invalid
one stays stopped and is reported. The services of those groups saved ENABLED are enabled
first, those they reference before them; a service saved DISABLED stays disabled, so a
processor using it is reported invalid, as in NiFi. Each component goes through the
controller's own start (``start_processor``/``start_port``/``enable_service``), so what
started is saved RUNNING and a restart resumes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.runtime.connectable import ComponentStateError, ScheduledState

if TYPE_CHECKING:
    from engine.runtime.controller import FlowController

__all__ = ["start_group"]


def start_group(controller: FlowController, group_id: str | None = None) -> list[str]:
    """Start what ``group_id`` (None: the root group) holds, see the module docstring; return
    what did not start, and why."""

    def inside(node) -> bool:
        return group_id is None or group_id in controller.ancestors(node.config.group_id)

    failures: list[str] = []
    for service in controller.services_in_dependency_order():
        if inside(service) and service.config.scheduled_state == "ENABLED" and service.state != "ENABLED":
            failures += _attempt(controller.enable_service, service.identifier)
    for node in [*controller.ports.values(), *controller.processors.values()]:
        if not inside(node) or node.state in (ScheduledState.DISABLED, ScheduledState.RUNNING):
            continue
        start = controller.start_processor if node.identifier in controller.processors else controller.start_port
        failures += _attempt(start, node.identifier)
    return failures


def _attempt(action, identifier: str) -> list[str]:
    try:
        action(identifier)
    except ComponentStateError as error:
        return [str(error)]
    return []
