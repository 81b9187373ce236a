"""A generic write-ahead log: journals of transactions, snapshots, checkpoints and recovery.

The FlowFile repository is built on it; it knows nothing of FlowFiles itself. See
``docs/engine-storage.md`` for the on-disk formats and the guarantee of each sync policy.
"""

from engine.wal.log import CommitFailedError, WriteAheadLog
from engine.wal.serde import SerDe, UpdateType
from engine.wal.sync_policy import SyncPolicy

__all__ = ["CommitFailedError", "SyncPolicy", "WriteAheadLog", "SerDe", "UpdateType"]
