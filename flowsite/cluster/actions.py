"""Writes that reach the nodes: a processor's run state, a controller service's state and a
tenant's deployment. Each is changed in the database and recorded in the flow's history in one
transaction, and carried to the nodes only once that transaction has committed. The nodes have
no command for services: a service's state reaches them with the next deployment."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import redis
from django.db import transaction

from flowsite.cluster.commands import on_nodes_if_reachable
from flowsite.cluster.deploy import (
    InvalidDesign,
    deploying,
    design_at,
    hold_deploy_lock,
    invalid_design,
    keep_deployment,
    publish_deployment,
    tenant_document,
)
from flowsite.cluster.models import Deployment
from flowsite.flows import publish
from flowsite.flows.actions import record_action
from flowsite.flows.definition import subtree_ids
from flowsite.flows.models import ControllerService, Operation, Port, ProcessGroup, Processor
from flowsite.flows.revisions import lock_for_change
from flowsite.flows.tenants import root_group
from flowsite.flows.validation import component_problems
from flowsite.tenancy.models import Tenant

__all__ = ["do_deploy", "do_republish", "do_set_run_state", "do_set_service_state", "do_start_group", "group_starts",
           "run_command"]

#: Who a deployment made without a user (``manage.py deploy``) is recorded as.
_NO_USER = "manage.py deploy"

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
        before = _change_state(processor, state, lambda before: Operation.ENABLE if before == "DISABLED" and
                               state == "STOPPED" else _RUN_OPERATION[state], version=version, client_id=client_id,
                               acting_user=acting_user, check=check)
        command, args = run_command(before, state), {"id": str(processor.pk)}
        transaction.on_commit(lambda: outcome.update(on_nodes_if_reachable(command, args)))
    return outcome or {"reached": False, "nodes": [],
                       "message": "the change is carried to the nodes when the enclosing transaction commits"}


def group_starts(group: ProcessGroup) -> tuple[list, list[dict[str, Any]]]:
    """What starting ``group`` would start — its stopped processors and ports and those of the
    groups inside it, valid ones — and what it leaves stopped as invalid ({id, name, problems})."""
    inside = subtree_ids(group.pk)
    stopped = [*Processor.objects.filter(parent__in=inside, scheduled_state="STOPPED"),
               *Port.objects.filter(parent__in=inside, scheduled_state="STOPPED")]
    starts, invalid = [], []
    for component in sorted(stopped, key=lambda c: str(c.pk)):
        problems = component_problems(component)
        if problems:
            invalid.append({"id": str(component.pk), "name": component.name,
                            "problems": [problem.message for problem in problems]})
        else:
            starts.append(component)
    return starts, invalid


def do_start_group(group: ProcessGroup, acting_user) -> dict[str, Any]:
    """Start ``group`` as NiFi's start of a process group does: every stopped, valid processor
    and port in it and in the groups inside it is set RUNNING (its revision advanced) and recorded
    as Start, in one transaction; once committed the nodes are told with ``group.start``, which
    starts them through the engine's own start. DISABLED components stay disabled, invalid ones
    stopped. Returns ``started`` (ids), ``not_started`` (invalid ones, with their problems) and
    ``cluster``, what the nodes answered (``reached`` False when they could not be told: the next
    deployment carries the states)."""
    outcome: dict[str, Any] = {}
    with transaction.atomic():
        hold_deploy_lock()
        starts, invalid = group_starts(group)
        for component in starts:
            lock_for_change(component, component.version, "", acting_user.get_username())
            component.scheduled_state = "RUNNING"
            component.save()
            record_action(component, Operation.START, acting_user,
                          [{"field": "scheduled_state", "before": "STOPPED", "after": "RUNNING"}])
            publish.design_changed_on_commit(component, Operation.START)
        transaction.on_commit(lambda: outcome.update(on_nodes_if_reachable("group.start", {"id": str(group.pk)})))
    return {"started": [str(component.pk) for component in starts], "not_started": invalid,
            "cluster": outcome or {"reached": False, "nodes": [], "message": "the change is carried to the nodes "
                                                                              "when the enclosing transaction commits"}}


def do_deploy(tenant: Tenant, acting_user, version: int | None = None) -> tuple[Deployment, list[str]]:
    """Deploy ``tenant``'s root group (its version ``version``, else the design as it is) as
    ``acting_user`` (None for a management command); return the deployment and the nodes told.

    The deployment is kept and recorded in one transaction and published to the cluster once it
    has committed; deployments and run-state changes wait for it until then. Raises InvalidDesign
    (400) listing the design's problems, ValidationError (400) for a version the root group does
    not have, Conflict (409) when a version cannot replace the design, and redis.RedisError when
    the cluster cannot be reached — in each case nothing is kept or published (a deployment the
    cluster could not be told of is deleted again; a process killed at that moment leaves it
    kept but unpublished, and the next deployment publishes the tenant's flow)."""
    modifier = acting_user.get_username() if acting_user is not None else _NO_USER
    with deploying():
        with transaction.atomic(durable=True):
            hold_deploy_lock()
            root = root_group(tenant)
            if version is not None:
                design_at(tenant, version, modifier)
                publish.design_changed_on_commit(root, Operation.REVERT)
            problems = invalid_design(tenant)
            if problems:
                raise InvalidDesign(problems)
            deployment = Deployment(deploy_id=uuid.uuid4().hex, tenant=tenant, group=root, version=version,
                                    created_by=acting_user, document=tenant_document(tenant))
            bundle = keep_deployment(deployment)
            action = record_action(root, Operation.DEPLOY, acting_user,
                                   [{"field": "deployment", "before": None, "after": deployment.deploy_id},
                                    {"field": "version", "before": None, "after": version}], user_name=_NO_USER)
        return deployment, _published(deployment, bundle, [action])


def do_republish(tenant: Tenant) -> tuple[Deployment | None, list[str]]:
    """Publish the cluster's flow again with ``tenant``'s latest deployment as it was and the
    tenant's grants and placement as they are now (an operator changed them), so that the nodes
    confine it by what it holds now: a new deployment of the same document, by nobody. Returns
    (None, []) when the tenant never deployed; raises redis.RedisError as ``do_deploy`` does."""
    with deploying():
        with transaction.atomic(durable=True):
            hold_deploy_lock()
            latest = Deployment.objects.filter(tenant=tenant).order_by("-created_at", "-id").first()
            if latest is None:
                return None, []
            deployment = Deployment(deploy_id=uuid.uuid4().hex, tenant=tenant, group=latest.group,
                                    version=latest.version, created_by=None, document=latest.document)
            bundle = keep_deployment(deployment)
        return deployment, _published(deployment, bundle, [])


def _published(deployment: Deployment, bundle, kept: list) -> list[str]:
    """Publish the committed ``deployment``; when the cluster cannot be reached, delete it and the
    rows recorded with it (``kept``) and raise."""
    try:
        return publish_deployment(deployment, bundle)
    except redis.RedisError:
        with transaction.atomic():
            for row in kept:
                row.delete()
            deployment.delete()
        raise


#: What the answer of a service state change says about the nodes.
SERVICE_STATE_DEPLOYED = ("the nodes have no command for controller services: the new state reaches them with the "
                          "next deployment (POST /api/v1/cluster/deployments)")


def do_set_service_state(service: ControllerService, state: str, *, version: int | None, client_id: str,
                         acting_user, check: Callable[[ControllerService], None] | None = None) -> dict[str, Any]:
    """Set ``service``'s state (ENABLED or DISABLED) if the revision is current and ``check``
    (given the locked service) raises nothing; record it as Enable or Disable. Returns what the
    nodes were told: nothing, ``reached`` False (the next deployment carries the change)."""
    _change_state(service, state, lambda before: Operation.ENABLE if state == "ENABLED" else Operation.DISABLE,
                  version=version, client_id=client_id, acting_user=acting_user, check=check)
    return {"reached": False, "nodes": [], "message": SERVICE_STATE_DEPLOYED}


def _change_state(component, state: str, operation_of: Callable[[str], str], *, version: int | None, client_id: str,
                  acting_user, check) -> str:
    """In one transaction under the deployment lock: check the revision and ``check``, set the
    component's ``scheduled_state``, record ``operation_of(the state before)`` and tell the
    canvases on commit; returns the state before."""
    with transaction.atomic():
        hold_deploy_lock()
        lock_for_change(component, version, client_id, acting_user.get_username())
        if check is not None:
            check(component)
        before = component.scheduled_state
        component.scheduled_state = state
        component.save()
        operation = operation_of(before)
        record_action(component, operation, acting_user, [{"field": "scheduled_state", "before": before, "after": state}])
        publish.design_changed_on_commit(component, operation)
    return before
