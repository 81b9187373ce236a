"""Funnels and local ports: components that only pass FlowFiles on.

Each task takes a batch from the incoming queues and hands it to every outgoing connection
(one clone per extra connection, recorded as CLONE; with a single destination nothing is
recorded, so the funnel is invisible in lineage).
"""

from __future__ import annotations

from engine.flow.model import FunnelConfig, PortConfig
from engine.runtime.connectable import Connectable, Runtime, ScheduledState
from engine.session import ProcessSession

__all__ = ["FunnelNode", "PortNode"]

#: FlowFiles a funnel or port passes on per task.
BATCH_SIZE = 1000


class FunnelNode(Connectable):
    """A funnel: merges its incoming connections into its outgoing ones. Always running."""

    kind = "FUNNEL"

    def __init__(self, config: FunnelConfig, runtime: Runtime) -> None:
        super().__init__(config.identifier, config.name or "Funnel", config.group_id, runtime)
        self.config = config

    def has_work(self) -> bool:
        return bool(self.outgoing) and self.has_incoming_data()

    def trigger(self, session: ProcessSession) -> None:
        for flowfile in session.get_batch(BATCH_SIZE):
            session.transfer(flowfile, "")


class PortNode(FunnelNode):
    """An input or output port of a process group: where FlowFiles enter or leave it."""

    def __init__(self, config: PortConfig, runtime: Runtime) -> None:
        self.kind = config.port_type
        Connectable.__init__(self, config.identifier, config.name, config.group_id, runtime)
        self.config = config
        self.concurrent_tasks = config.concurrent_tasks
        if config.scheduled_state == "DISABLED":
            self.state = ScheduledState.DISABLED

    @property
    def component_type(self) -> str:
        return "Input Port" if self.kind == "INPUT_PORT" else "Output Port"
