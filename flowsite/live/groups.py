"""The Channels group a process group's live events are sent to."""

from __future__ import annotations

__all__ = ["group_name"]


def group_name(group_id) -> str:
    """The Channels group of the process group ``group_id``: ``pg.<uuid>``."""
    return f"pg.{group_id}"
