"""Relationships: the named outcomes a processor routes FlowFiles to."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Relationship"]


@dataclass(frozen=True)
class Relationship:
    """One outcome of a processor (``success``, ``failure``, ...).

    ``auto_terminate_default`` marks relationships a new processor auto-terminates until the
    user says otherwise (as NiFi does for ``original`` of some processors).
    """

    name: str
    description: str = ""
    auto_terminate_default: bool = False
