"""Changing a running flow to another definition in place (a deployment on a node).

The planner (``engine.runtime.planner``) says what goes, what stays and what is built anew; this
applies its plan through the controller: stop the components that go or change (their running
tasks get the graceful shutdown period), disable the services that go or change, build the new
flow's graph reusing the components kept (``engine.runtime.graph``: every connection keeps its
queue and the FlowFiles in it when its identifier stays, or takes over an orphaned queue of the
same identifier), install it, and last enable services and start or stop components as the new
definition says.

A flow that cannot run, or one with no place for a connection holding FlowFiles, is refused
before anything is stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.flow.loader import FlowDefinitionError, FlowProblem
from engine.flow.model import FlowDefinition
from engine.flow.validation import check_flow
from engine.runtime.planner import plan_update

if TYPE_CHECKING:
    from engine.runtime.controller import FlowController

__all__ = ["update_flow"]


def update_flow(controller: FlowController, flow: FlowDefinition) -> tuple[list[FlowProblem], list[str]]:
    """Make ``controller`` run ``flow`` (see the module docstring). Returns the problems that leave
    components invalid and the components that did not start, with why. Raises
    FlowDefinitionError when ``flow`` cannot run at all and ComponentStateError
    (``UpdateRefused``) when a connection holding FlowFiles would disappear — in both cases the
    running flow is left as it was."""
    problems = check_flow(flow, controller.registry)
    if any(problem.fatal for problem in problems):
        raise FlowDefinitionError(problems)
    plan = plan_update(controller.describe(), flow)
    controller.stop_and_wait([node for node in controller.connectables() if node.identifier in plan.stop])
    controller.disable_services(plan.disable)
    controller.install(controller.build_graph(flow, reuse=plan.keep))
    return [problem for problem in problems if not problem.fatal], controller.start_components()
