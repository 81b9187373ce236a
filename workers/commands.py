"""What a node answers on its command stream: status and control of the flow it runs.

``NodeCommands`` registers one handler per command kind with a ``CommandListener``. Each handler
works on the node's current ``FlowController`` (asked anew for every command, as a deployment
replaces it) and returns plain data; an error — an unknown component, a processor that cannot
start, no flow running — is raised with a message the requester shows as the node's error. A
component of a tenant placed on other nodes (``engine.cluster.placement``) is not an error: the
node answers ``{"id", "here": false}``, and its status lists those tenants' groups in
``elsewhere``.

| kind | args | result |
|---|---|---|
| ``status`` | ``group_id`` (optional) | ``FlowStatus.as_dict()`` and ``elsewhere``; with ``group_id``: ``{"node", "group"}`` |
| ``processor.start``/``stop``/``enable``/``disable`` | ``id`` | ``{"id", "run_status"}`` |
| ``processor.terminate`` | ``id`` | ``{"id", "terminated"}`` |
| ``group.start`` | ``id`` (a process group) | ``{"id", "not_started"}``: what did not start, and why |
| ``queue.empty`` | ``id``, ``requester`` | ``{"id", "dropped", "dropped_bytes"}`` |
| ``provenance.export`` | ``token`` | ``{"node", "state", "percent", "report"?, "error"?}`` |

Searches, events, content, lineage, replay and queue listings are answered by
``workers.inspection``. Those, emptying a queue and ``provenance.export`` run on the listener's
pool of threads (they may be slow); the others on its own thread, one after the other.

``provenance.export`` exports the node's provenance as Parquet into its part of the analytics
directory (``engine.provenance.export``) on a thread of its own, so the command answers at once:
the requester asks again with the same ``token`` until the state is ``done`` (with the export's
report) or ``failed`` (``engine.provenance.export_service``).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from engine.cluster.bus import Command, CommandListener
from engine.node import StandaloneNode
from engine.provenance.export import ExportReport, ProvenanceExporter, component_names, node_export_directory
from engine.provenance.export_service import ExportService
from engine.runtime.controller import FlowController
from workers.arguments import component_id
from workers.inspection import InspectionCommands

__all__ = ["NoFlowError", "NodeCommands"]


class NoFlowError(RuntimeError):
    """The node runs no flow (it is starting, or between two flows)."""


class NodeCommands:
    """The command handlers of node ``node_id``; ``controller()`` gives the controller of the
    flow the node runs, or None while it runs none; ``node``, when given, says which tenants
    run on other nodes; ``analytics_dir`` is the shared analytics directory provenance is
    exported into (None: the node does not export)."""

    def __init__(self, controller: Callable[[], FlowController | None], node_id: str,
                 node: StandaloneNode | None = None, analytics_dir: Path | None = None) -> None:
        self._controller = controller
        self.node_id = node_id
        self.node = node
        self.analytics_dir = analytics_dir
        self._exports = ExportService(self._export, name=f"provenance-export-{node_id}")

    def _elsewhere(self, identifier: str) -> dict[str, Any] | None:
        """The answer for a component this node holds but does not run, else None."""
        if self.node is None or self.node.placed_elsewhere(identifier) is None:
            return None
        return {"id": identifier, "here": False}

    def register(self, listener: CommandListener) -> None:
        """Answer this node's commands on ``listener``."""
        listener.register("status", self.status)
        listener.register("processor.start", self._processor_action(FlowController.start_processor))
        listener.register("processor.stop", self._processor_action(FlowController.stop_processor))
        listener.register("processor.enable", self._processor_action(FlowController.enable_processor))
        listener.register("processor.disable", self._processor_action(FlowController.disable_processor))
        listener.register("processor.terminate", self.terminate)
        listener.register("group.start", self.start_group)
        listener.register("queue.empty", self.empty_queue, concurrent=True)
        listener.register("provenance.export", self.export_provenance, concurrent=True)
        InspectionCommands(self.controller, self.node_id, self._elsewhere).register(listener)

    def controller(self) -> FlowController:
        """The running flow's controller; raises NoFlowError when there is none."""
        controller = self._controller()
        if controller is None:
            raise NoFlowError(f"node {self.node_id} runs no flow at the moment")
        return controller

    def status(self, command: Command) -> dict[str, Any]:
        controller = self.controller()
        group_id = command.args.get("group_id")
        if group_id:
            away = self._elsewhere(str(group_id))
            if away is not None:
                return {"node": asdict(controller.status().node), "group": None, "here": False}
            group = controller.group_status(str(group_id))
            return {"node": asdict(controller.status().node), "group": asdict(group)}
        return {**controller.status().as_dict(), "elsewhere": self.node.groups_elsewhere() if self.node else []}

    def _processor_action(self, action: Callable[[FlowController, str], Any]) -> Callable[[Command], dict[str, Any]]:
        def handle(command: Command) -> dict[str, Any]:
            controller = self.controller()
            identifier = component_id(command)
            away = self._elsewhere(identifier)
            if away is not None:
                return away
            action(controller, identifier)
            return {"id": identifier, "run_status": controller.processor(identifier).run_status()}
        return handle

    def start_group(self, command: Command) -> dict[str, Any]:
        """Start every component of the group that is not disabled (``FlowController.start_group``)."""
        identifier = component_id(command)
        away = self._elsewhere(identifier)
        if away is not None:
            return away
        return {"id": identifier, "not_started": self.controller().start_group(identifier)}

    def terminate(self, command: Command) -> dict[str, Any]:
        identifier = component_id(command)
        away = self._elsewhere(identifier)
        if away is not None:
            return away
        return {"id": identifier, "terminated": self.controller().terminate_processor(identifier)}

    def empty_queue(self, command: Command) -> dict[str, Any]:
        identifier = component_id(command)
        away = self._elsewhere(identifier)
        if away is not None:
            return away
        requester = str(command.args.get("requester") or "an operator")
        dropped = self.controller().drop_queue(identifier, requester)
        return {"id": identifier, "dropped": dropped.count, "dropped_bytes": dropped.bytes}

    def export_provenance(self, command: Command) -> dict[str, Any]:
        """The state of the export serving the command's ``token`` (one is started if need be)."""
        if self.analytics_dir is None:
            raise RuntimeError(f"node {self.node_id} has no analytics directory to export provenance into "
                               "(FLOWSITE_ANALYTICS_DIR)")
        self.controller()
        return {"node": self.node_id, **self._exports.request(command.args.get("token"))}

    def _export(self, progress: Callable[[float], None]) -> ExportReport:
        controller = self.controller()
        exporter = ProvenanceExporter(controller.storage.provenance,
                                      node_export_directory(self.analytics_dir, self.node_id), self.node_id,
                                      lambda: component_names(controller.flow))
        return exporter.export(current=True, progress=progress)
