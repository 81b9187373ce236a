"""The process session: a processor's unit of work over FlowFiles, committed atomically."""

from engine.session.component import SessionComponent
from engine.session.damaged import DamagedContentError, DamagedContentPolicy
from engine.session.session import FlowFileHandlingError, ProcessSession, SessionCounts, TaskTerminatedError

__all__ = [
    "DamagedContentError", "DamagedContentPolicy", "FlowFileHandlingError", "ProcessSession", "SessionComponent",
    "SessionCounts", "TaskTerminatedError",
]
