"""Where a process stages Parquet for Spark, and how a crashed process's leftovers go.

A staging root (``SparkSettings.staging_dir``) may be shared: by the processes of one machine,
or by every node of a cluster and the Spark workers that read it (a shared volume). Each process
therefore stages under its own directory ``<root>/<name>-<pid>-<random>/``, announced by a lock
file ``<root>/<name>-<pid>-<random>.lock`` that the process holds (``flock``) while it lives.
Opening a staging area first removes every directory whose lock nobody holds any more: the
kernel gives a lock back when its holder dies, so what a killed process staged is removed by the
next one to start, and a live process's files are never touched. A directory without a lock
file is a leftover too (its owner always makes the lock first and removes it last).
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import logging
import os
import re
import secrets
import shutil
from pathlib import Path

__all__ = ["StagingArea", "sweep"]

log = logging.getLogger(__name__)

_LOCK_SUFFIX = ".lock"


def _try_lock(path: Path) -> int | None:
    """An open descriptor holding ``path``'s exclusive lock, or None when another holds it (or the
    file is gone)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(fd)
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    return fd


def sweep(root: Path) -> list[str]:
    """Remove what dead processes staged under ``root``; return the names of the directories removed."""
    removed: list[str] = []
    try:
        entries = list(root.iterdir())
    except FileNotFoundError:
        return removed
    locks = {entry.name[:-len(_LOCK_SUFFIX)] for entry in entries if entry.name.endswith(_LOCK_SUFFIX)}
    for name in sorted(locks):
        fd = _try_lock(root / (name + _LOCK_SUFFIX))
        if fd is None:
            continue  # its owner lives
        try:
            if (root / name).exists():
                shutil.rmtree(root / name, ignore_errors=True)
                removed.append(name)
            (root / (name + _LOCK_SUFFIX)).unlink(missing_ok=True)
        finally:
            os.close(fd)
    for entry in entries:
        if entry.is_dir() and entry.name not in locks and not entry.name.endswith(_LOCK_SUFFIX):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
    if removed:
        log.info("removed Spark staging left by stopped processes under %s: %s", root, ", ".join(removed))
    return removed


class StagingArea:
    """This process's staging directory under ``root`` (made, with its lock, on construction,
    after a ``sweep``), until ``close``."""

    def __init__(self, root: Path, name: str) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        #: What the sweep at opening removed (directory names).
        self.swept = sweep(self.root)
        base = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "flowsite"
        while True:
            stem = f"{base}-{os.getpid()}-{secrets.token_hex(4)}"
            lock = self.root / (stem + _LOCK_SUFFIX)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
            # A sweep that opened the file before we locked it may have unlinked it: start over.
            if os.fstat(fd).st_ino == _inode(lock):
                break
            os.close(fd)
        self._fd: int | None = fd
        self._lock = lock
        self.path = self.root / stem
        self.path.mkdir()
        self._numbers = itertools.count(1)

    def new_path(self, kind: str) -> Path:
        """A fresh path (not made) inside this process's directory, e.g. ``in-7``."""
        if self._fd is None:
            raise RuntimeError("the staging area is closed")
        return self.path / f"{kind}-{next(self._numbers)}-{secrets.token_hex(3)}"

    def close(self) -> None:
        """Remove this process's directory and its lock (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        shutil.rmtree(self.path, ignore_errors=True)
        self._lock.unlink(missing_ok=True)
        os.close(fd)


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return None
