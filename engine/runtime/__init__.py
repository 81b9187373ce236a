"""The runtime of one node: the flow controller, its scheduler, and the nodes of a running flow."""

from engine.runtime.clock import Clock, ManualClock, SystemClock
from engine.runtime.config import RuntimeConfig
from engine.runtime.connectable import ComponentStateError, Connectable, Connection, NodeRole, Outcome, ScheduledState
from engine.runtime.controller import FlowController, UnknownComponentError
from engine.runtime.processor_node import InvalidComponentError, ProcessorNode
from engine.runtime.scheduler import Scheduler

__all__ = [
    "Clock", "ComponentStateError", "Connectable", "Connection", "FlowController", "InvalidComponentError",
    "ManualClock", "NodeRole", "Outcome", "ProcessorNode", "RuntimeConfig", "ScheduledState", "Scheduler",
    "SystemClock", "UnknownComponentError",
]
