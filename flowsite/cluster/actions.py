"""Writes that reach the nodes: a processor's run state is changed in the design, recorded in the
flow's history, and carried to every connected node once the transaction commits. A controller
service's state (ENABLED, DISABLED) changes the same way, but the nodes have no command for
services: the change reaches them with the next deployment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction

from flowsite.cluster.commands import on_nodes_if_reachable
from flowsite.cluster.deploy import hold_deploy_lock
from flowsite.flows import publish
from flowsite.flows.actions import record_action
from flowsite.flows.models import ControllerService, Operation, Processor
from flowsite.flows.revisions import lock_for_change

__all__ = ["do_set_run_state", "do_set_service_state", "run_command"]

_RUN_OPERATION = {"RUNNING": Operation.START, "STOPPED": Operation.STOP, "DISABLED": Operation.DISABLE}


def run_command(before: str, after: str) -> str:
    """The node command that carries a change of run state from ``before`` to ``after``."""
    if after == "RUNNING":
        return "processor.start"
    if after == "DISABLED":
        return "processor.disable"
    return "processor.enable" if before == "DISABLED" else "processor.stop"


def do_set_run_state(processor: Processor, state: str, *, version: int | None, client_id: str, acting_user,
                     check: Callable[[Processor], None] | None = None) -> dict[str, Any]:
    """Set ``processor``'s scheduled state (RUNNING, STOPPED or DISABLED) if the revision is current
    and ``check`` (given the locked processor) raises nothing; once committed, carry the change to
    every connected node. Returns what the nodes answered, ``reached`` False when the cluster
    could not be reached (the design has changed all the same, and the next deployment carries it)."""
    outcome: dict[str, Any] = {}
    with transaction.atomic():
        hold_deploy_lock()
        lock_for_change(processor, version, client_id, acting_user.get_username())
        if check is not None:
            check(processor)
        before = processor.scheduled_state
        processor.scheduled_state = state
        processor.save()
        operation = Operation.ENABLE if before == "DISABLED" and state == "STOPPED" else _RUN_OPERATION[state]
        record_action(processor, operation, acting_user,
                      [{"field": "scheduled_state", "before": before, "after": state}])
        command, args = run_command(before, state), {"id": str(processor.pk)}
        transaction.on_commit(lambda: outcome.update(on_nodes_if_reachable(command, args)))
        publish.design_changed_on_commit(processor, operation)
    return outcome or {"reached": False, "nodes": [],
                       "message": "the change is carried to the nodes when the enclosing transaction commits"}


#: What the answer of a service state change says about the nodes.
SERVICE_STATE_DEPLOYED = ("the nodes have no command for controller services: the new state reaches them with the "
                          "next deployment (POST /api/v1/cluster/deployments)")


def do_set_service_state(service: ControllerService, state: str, *, version: int | None, client_id: str,
                         acting_user, check: Callable[[ControllerService], None] | None = None) -> dict[str, Any]:
    """Set ``service``'s state (ENABLED or DISABLED) if the revision is current and ``check``
    (given the locked service) raises nothing; record it as Enable or Disable. Returns what the
    nodes were told: nothing, ``reached`` False (the next deployment carries the change)."""
    with transaction.atomic():
        hold_deploy_lock()
        lock_for_change(service, version, client_id, acting_user.get_username())
        if check is not None:
            check(service)
        before = service.scheduled_state
        service.scheduled_state = state
        service.save()
        operation = Operation.ENABLE if state == "ENABLED" else Operation.DISABLE
        record_action(service, operation, acting_user, [{"field": "scheduled_state", "before": before, "after": state}])
        publish.design_changed_on_commit(service, operation)
    return {"reached": False, "nodes": [], "message": SERVICE_STATE_DEPLOYED}
