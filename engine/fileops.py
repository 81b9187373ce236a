"""File operations of the repositories: the one place where the node's storage touches the disk.

Journals, snapshots, swap files, content claims, provenance journals and segments and the small
state files open, write, sync, truncate, rename and delete through these functions, so that

- the atomic-replace sequence (temporary file, sync, rename, directory sync) exists once
  (:class:`AtomicFile`, :func:`write_atomically`);
- a write either puts all its bytes in the file or raises, and the error says how many bytes
  did reach the file (``error.written``), so a caller can cut the file back;
- tests can make any of these calls fail (ENOSPC, EIO) through one hook
  (:func:`set_fault_hook`; ``engine.testing.faults`` builds the plans);
- whoever watches the disk hears at once when an operation finds it full
  (:func:`add_full_listener`).

Reads are not routed here: a damaged file is tested by damaging it, not by failing reads.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Callable

__all__ = [
    "AtomicFile",
    "DISK_FULL_ERRNOS",
    "FaultHook",
    "add_full_listener",
    "close",
    "is_all_zero",
    "link",
    "make_directory",
    "open_fd",
    "remove_full_listener",
    "rename",
    "set_fault_hook",
    "sync",
    "sync_directory",
    "truncate",
    "unlink",
    "write_all",
    "write_atomically",
]

FaultHook = Callable[[str, str, int], int | None]
"""Called as ``hook(operation, path, size)`` before each operation (``open``, ``write``,
``sync``, ``truncate``, ``rename``, ``link``, ``unlink``, ``mkdir``); it may raise an ``OSError`` to make
the operation fail. For a write it may instead return a number of bytes: that many are
written, then the write fails with ``ENOSPC`` (a disk that filled up mid-write)."""

_hook: FaultHook | None = None
_full_listeners: list[Callable[[str], None]] = []
#: The errors of a disk (or quota) that is full.
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def set_fault_hook(hook: FaultHook | None) -> FaultHook | None:
    """Install ``hook`` (None removes it); returns the hook it replaces. For tests only."""
    global _hook
    previous, _hook = _hook, hook
    return previous


def add_full_listener(listener: Callable[[str], None]) -> None:
    """Call ``listener(path)`` whenever an operation fails because the disk is full (ENOSPC,
    EDQUOT); it runs in the failing thread, before the error is raised, so it must be quick."""
    _full_listeners.append(listener)


def remove_full_listener(listener: Callable[[str], None]) -> None:
    """Stop calling a listener given to :func:`add_full_listener`."""
    if listener in _full_listeners:
        _full_listeners.remove(listener)


def _note(error: OSError, path: str | Path) -> None:
    if error.errno in DISK_FULL_ERRNOS:
        for listener in tuple(_full_listeners):
            listener(str(path))


def _check(operation: str, path: str | Path, size: int = 0) -> int | None:
    hook = _hook
    return hook(operation, str(path), size) if hook is not None else None


def open_fd(path: str | Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` (close-on-exec added)."""
    try:
        if _hook is not None:
            _check("open", path)
        return os.open(path, flags | os.O_CLOEXEC, mode)
    except OSError as error:
        _note(error, path)
        raise


def write_all(fd: int, data: bytes | bytearray | memoryview, path: str | Path) -> None:
    """Write every byte of ``data`` at the descriptor's position, or raise.

    A failure after part of ``data`` reached the file raises the ``OSError`` with ``written``
    set to the number of bytes that did (0 when none did).
    """
    if _hook is None and type(data) is bytes:
        # The common case, kept short: one write that takes everything.
        try:
            written = os.write(fd, data)
        except OSError as error:
            error.written = 0  # type: ignore[attr-defined]
            _note(error, path)
            raise
        if written == len(data):
            return
        data = memoryview(data)[written:]
        try:
            _write_rest(fd, data, path)
        except OSError as error:
            error.written += written  # type: ignore[attr-defined]
            raise
        return
    _write_rest(fd, data, path)


def _write_rest(fd: int, data: bytes | bytearray | memoryview, path: str | Path) -> None:
    written = 0
    with memoryview(data) as whole:
        view = whole.cast("B") if whole.format != "B" or whole.ndim != 1 else whole
        size = len(view)
        try:
            if _hook is not None:
                partial = _check("write", path, size)
                if partial is not None:
                    while written < partial:
                        written += os.write(fd, view[written:partial])
                    raise OSError(28, os.strerror(28), str(path))
            while written < size:
                written += os.write(fd, view[written:])
        except OSError as error:
            error.written = written  # type: ignore[attr-defined]
            _note(error, path)
            raise
        finally:
            if view is not whole:
                view.release()


def sync(fd: int, path: str | Path, *, data_only: bool = False) -> None:
    """Make what was written to ``fd`` durable (``fdatasync`` when ``data_only``)."""
    try:
        if _hook is not None:
            _check("sync", path)
        if data_only:
            os.fdatasync(fd)
        else:
            os.fsync(fd)
    except OSError as error:
        _note(error, path)
        raise


def truncate(fd: int, length: int, path: str | Path) -> None:
    """Cut the file of ``fd`` to ``length`` bytes."""
    if _hook is not None:
        _check("truncate", path)
    os.ftruncate(fd, length)


def close(fd: int) -> None:
    """Close a descriptor opened with :func:`open_fd`."""
    os.close(fd)


def rename(source: str | Path, target: str | Path) -> None:
    """Rename ``source`` to ``target``, replacing ``target`` atomically if it exists."""
    if _hook is not None:
        _check("rename", target)
    os.replace(source, target)


def link(source: str | Path, target: str | Path) -> None:
    """Give the file ``source`` a second name ``target`` (a hard link; ``target`` must not exist)."""
    try:
        if _hook is not None:
            _check("link", target)
        os.link(source, target)
    except OSError as error:
        _note(error, target)
        raise


def unlink(path: str | Path, *, missing_ok: bool = False) -> bool:
    """Delete a file; returns False when it was already gone (with ``missing_ok``)."""
    if _hook is not None:
        _check("unlink", path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        if not missing_ok:
            raise
        return False
    return True


def make_directory(path: str | Path, *, parents: bool = True) -> None:
    """Create a directory (and its parents) unless it exists."""
    try:
        if _hook is not None and not os.path.isdir(path):
            _check("mkdir", path)
        Path(path).mkdir(parents=parents, exist_ok=True)
    except OSError as error:
        _note(error, path)
        raise


def sync_directory(path: str | Path) -> None:
    """Make the entries of directory ``path`` (creations, renames, deletions) durable."""
    if _hook is not None:
        _check("sync", path)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class AtomicFile:
    """A file written under a temporary name and put in place whole, or not at all.

    ``commit`` syncs the temporary file, renames it over ``path`` and syncs the directory, so
    a crash leaves the old file or the new one, whole. With ``durable=False`` it only renames:
    a crash of the process still leaves one of them whole (the kernel has the bytes), a power
    loss may leave neither. ``abort`` (or an exception inside a
    ``with`` block) deletes the temporary file. Writes are gathered in a buffer of
    ``buffer_size`` bytes. A ``mode`` other than the default is the new file's permission bits
    from its creation on (exactly, umask aside), so a private file (a key: 0o600) is never
    readable by others, not even under its temporary name.
    """

    def __init__(self, path: str | Path, temporary: str | Path | None = None, *, buffer_size: int = 1 << 20,
                 mode: int = 0o644, durable: bool = True) -> None:
        self.path = Path(path)
        self.durable = durable
        self.temporary = Path(temporary) if temporary is not None else self.path.with_name(self.path.name + ".tmp")
        self._buffer = bytearray()
        self._buffer_size = buffer_size
        self._done = False
        self._fd = open_fd(self.temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        if mode != 0o644:
            # Set exactly (the umask is for defaults), and a temporary file left by a crash keeps
            # its old bits through O_TRUNC.
            os.fchmod(self._fd, mode)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append ``data`` to the new file."""
        self._buffer += data
        if len(self._buffer) >= self._buffer_size:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            write_all(self._fd, self._buffer, self.temporary)
            self._buffer.clear()

    def commit(self) -> None:
        """Sync the new file and put it in place of ``path``; on failure the temporary file goes."""
        if self._done:
            return
        try:
            self._flush()
            if self.durable:
                sync(self._fd, self.temporary)
            self._close()
            rename(self.temporary, self.path)
        except BaseException:
            self.abort()
            raise
        self._done = True
        if self.durable:
            sync_directory(self.path.parent)

    def abort(self) -> None:
        """Give the new file up: the temporary file is deleted, ``path`` stays as it was."""
        if self._done:
            return
        self._done = True
        self._buffer.clear()
        self._close()
        try:
            os.unlink(self.temporary)
        except FileNotFoundError:
            pass

    def _close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.commit()


def write_atomically(path: str | Path, data: bytes, temporary: str | Path | None = None, *,
                     mode: int = 0o644, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves the old file or the new one, whole
    (``mode``: the new file's permission bits; ``durable=False``: no syncs, whole after a crash
    of the process only; see :class:`AtomicFile`)."""
    with AtomicFile(path, temporary, mode=mode, durable=durable) as handle:
        handle.write(data)


def is_all_zero(data: bytes | memoryview) -> bool:
    """True when every byte of ``data`` is NUL (what a power loss leaves past a file's end)."""
    if isinstance(data, memoryview):
        data = data.tobytes()
    return not data or data.count(0) == len(data)
