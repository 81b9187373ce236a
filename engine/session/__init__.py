"""The process session: a processor's unit of work over FlowFiles, committed atomically."""

from engine.session.component import SessionComponent
from engine.session.session import FlowFileHandlingError, ProcessSession, SessionCounts, TaskTerminatedError

__all__ = ["FlowFileHandlingError", "ProcessSession", "SessionComponent", "SessionCounts", "TaskTerminatedError"]
