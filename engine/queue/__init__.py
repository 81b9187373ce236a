"""Connection queues: prioritizers, back pressure, expiration, penalties and swapping."""

from engine.queue.flowfile_queue import (
    FlowFileAvailability,
    FlowFileQueue,
    Polled,
    QueueSettings,
    QueueSize,
    Swapper,
    SwappedFile,
)
from engine.queue.prioritizers import PRIORITIZERS, UnknownPrioritizerError, resolve_prioritizer, sort_key_function

__all__ = [
    "FlowFileAvailability", "FlowFileQueue", "Polled", "QueueSettings", "QueueSize", "Swapper", "SwappedFile",
    "PRIORITIZERS", "UnknownPrioritizerError", "resolve_prioritizer", "sort_key_function",
]
