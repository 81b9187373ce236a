"""When a committed transaction is forced to stable storage."""

from __future__ import annotations

from enum import Enum

__all__ = ["SyncPolicy"]


class SyncPolicy(str, Enum):
    """When a committed transaction is forced to stable storage.

    * ``always``: each update is written and synced on its own before it returns; survives a
      power loss, one sync per commit.
    * ``grouped``: each update is synced before it returns, but commits that arrive while a
      sync is running share the next write and sync; the same guarantee as ``always`` at a
      fraction of the syncs.
    * ``os``: each update is handed to the kernel before it returns and synced only at
      checkpoints (and when forced); survives a kill of the process, not a power loss or kernel
      crash, which may take the commits since the last checkpoint.
    """

    ALWAYS = "always"
    GROUPED = "grouped"
    OS = "os"
