"""One node per data directory: an exclusive lock on ``DATA_DIR/.lock``.

The lock is ``flock(LOCK_EX | LOCK_NB)`` on the file: the kernel gives it back when the holder
closes it or dies, so a crashed node never leaves a stale lock. The file also records the
holder (pid, host, node name, start time) for the message a second opener gets; the record is
informational: a holder that could not write it (a full disk) holds the lock all the same.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from engine import fileops

__all__ = ["LOCK_FILE", "DataDirectoryInUseError", "DataDirectoryLock", "LockHolder", "lock_holder"]

log = logging.getLogger(__name__)

LOCK_FILE = ".lock"


@dataclass(frozen=True)
class LockHolder:
    """Who holds a data directory, as its lock file records it (fields unknown are None)."""

    pid: int | None = None
    host: str | None = None
    node: str | None = None
    since: str | None = None

    def __str__(self) -> str:
        text = f"pid {self.pid}" if self.pid is not None else "another process"
        if self.host:
            text += f" on host {self.host}"
        if self.node:
            text += f" (node {self.node!r})"
        if self.since:
            text += f" since {self.since}"
        return text


class DataDirectoryInUseError(RuntimeError):
    """Another node (in this process or another) holds the data directory."""

    def __init__(self, data_dir: Path, holder: LockHolder) -> None:
        super().__init__(f"data directory {data_dir} is in use by {holder}; stop that node first")
        self.data_dir = data_dir
        self.holder = holder


class DataDirectoryLock:
    """The exclusive lock of one data directory, taken on construction (the directory is made
    if missing) until ``release``. Raises DataDirectoryInUseError naming the holder when
    another holds it, having changed nothing."""

    def __init__(self, data_dir: str | Path, node: str | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / LOCK_FILE
        fileops.make_directory(self.data_dir)
        fd = fileops.open_fd(self.path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DataDirectoryInUseError(self.data_dir, _read_holder(self.path)) from None
        except BaseException:
            os.close(fd)
            raise
        self._fd: int | None = fd
        self.holder = LockHolder(os.getpid(), socket.gethostname(), node,
                                 time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime()))
        self._record()

    def _record(self) -> None:
        data = json.dumps({"pid": self.holder.pid, "host": self.holder.host, "node": self.holder.node,
                           "since": self.holder.since}).encode() + b"\n"
        try:
            fileops.truncate(self._fd, 0, self.path)
            fileops.write_all(self._fd, data, self.path)
        except OSError as error:
            log.warning("could not record this node in %s (%s); the data directory is locked all the same",
                        self.path, error)

    @property
    def held(self) -> bool:
        """True until ``release``."""
        return self._fd is not None

    def release(self) -> None:
        """Give the lock back (idempotent). The file stays: removing it would let a third
        opener lock a new file while a second still waits on the old one."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor of the open file releases the flock


def _read_holder(path: Path) -> LockHolder:
    try:
        record = json.loads(path.read_bytes())
        return LockHolder(int(record["pid"]), record.get("host"), record.get("node"), record.get("since"))
    except (OSError, ValueError, TypeError, KeyError):
        return LockHolder()  # being written by its new holder, or never written (its disk was full)


def lock_holder(data_dir: str | Path) -> LockHolder | None:
    """Who holds ``data_dir`` now, without taking its lock (read-only tools); None when nobody
    does or this system cannot tell (the answer comes from Linux's ``/proc/locks``)."""
    path = Path(data_dir) / LOCK_FILE
    try:
        stat = path.stat()
        with open("/proc/locks") as table:
            lines = table.readlines()
    except OSError:
        return None
    key = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF" (waiters show "->" instead)
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == key:
            recorded = _read_holder(path)
            if recorded.pid is None and fields[4].isdigit():
                return LockHolder(int(fields[4]))
            return recorded
    return None
