"""Settings of a node's runtime: threads, yields, swapping, shutdown and damaged content."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from engine.settings import as_duration, as_int, settings_from_mapping

__all__ = ["RuntimeConfig"]


@dataclass(frozen=True)
class RuntimeConfig:
    """How a node schedules its components (NiFi's defaults).

    ``max_timer_driven_threads`` bounds the tasks running at once across all components;
    ``cpu_bound_tasks`` bounds those of CPU-bound components among them (processors that wait
    on other systems run on the rest; see ``engine.runtime.scheduler``): Python runs one thread
    of a process at a time, so more than one only pays off for work that releases the
    interpreter lock; use more nodes to use more cores;
    ``bored_yield_duration`` is how long a component with nothing to do waits before it is
    checked again; ``administrative_yield_duration`` how long one whose task raised an
    unexpected error is left alone. Durations are seconds. ``damaged_content`` says what becomes
    of a FlowFile whose content a session finds missing, cut short or failing its checksum:
    ``quarantine`` moves it to the queue ``flowsite.damaged``, ``drop`` drops it (NiFi).
    """

    max_timer_driven_threads: int = 10
    cpu_bound_tasks: int = 1
    bored_yield_duration: float = 0.01
    administrative_yield_duration: float = 30.0
    swap_threshold: int = 20_000
    swap_batch_size: int = 10_000
    graceful_shutdown_period: float = 10.0
    status_log_interval: float = 60.0
    expiration_sweep_interval: float = 1.0
    damaged_content: str = "quarantine"

    def __post_init__(self) -> None:
        if self.max_timer_driven_threads < 1:
            raise ValueError("max_timer_driven_threads must be at least 1")
        if self.cpu_bound_tasks < 1:
            raise ValueError("cpu_bound_tasks must be at least 1")
        if self.swap_threshold < 1 or self.swap_batch_size < 1:
            raise ValueError("swap_threshold and swap_batch_size must be at least 1")
        if self.damaged_content not in ("quarantine", "drop"):
            raise ValueError(f"damaged_content must be quarantine or drop, not {self.damaged_content!r}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> RuntimeConfig:
        """Build from a mapping such as ``{"max-timer-driven-threads": 4, "bored-yield-duration": "10 millis"}``."""
        parsers = {
            "max_timer_driven_threads": as_int, "cpu_bound_tasks": as_int, "bored_yield_duration": as_duration,
            "administrative_yield_duration": as_duration, "swap_threshold": as_int, "swap_batch_size": as_int,
            "graceful_shutdown_period": as_duration, "status_log_interval": as_duration,
            "expiration_sweep_interval": as_duration, "damaged_content": lambda value: str(value).strip().lower(),
        }
        return settings_from_mapping(cls, values, parsers, "runtime")
