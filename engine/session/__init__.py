"""The process session: a processor's unit of work over FlowFiles, committed atomically."""

from engine.session.component import SessionComponent
from engine.session.session import FlowFileHandlingError, ProcessSession

__all__ = ["ProcessSession", "SessionComponent", "FlowFileHandlingError"]
