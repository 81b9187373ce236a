"""What GetFile and ListFile share: the attributes they write about a file, and their age and
size properties."""

from __future__ import annotations

import grp
import os
import pwd
import stat
from datetime import datetime

from engine.components import PropertyDescriptor
from engine.components import validators as v
from engine.units import parse_duration

__all__ = [
    "MAX_AGE", "MAX_SIZE", "MIN_AGE", "MIN_SIZE", "SizeAndAge", "absolute_path", "file_attributes",
    "format_file_time", "is_hidden", "modified_millis", "relative_path",
]


def _at_least_100_millis(value: str, context) -> str | None:
    try:
        seconds = parse_duration(value)
    except ValueError as error:
        return str(error)
    return None if seconds >= 0.1 else f"{value!r} is shorter than the minimum of 100 millis"


MIN_AGE = PropertyDescriptor(
    "Minimum File Age", description="Files modified more recently than this are left alone (they may still be "
    "being written).", required=True, default="0 sec", validators=[v.TIME_PERIOD])
MAX_AGE = PropertyDescriptor(
    "Maximum File Age", description="Files last modified longer ago than this are left alone (at least 100 millis).",
    validators=[_at_least_100_millis])
MIN_SIZE = PropertyDescriptor(
    "Minimum File Size", description="Files smaller than this are left alone.", required=True, default="0 B",
    validators=[v.DATA_SIZE])
MAX_SIZE = PropertyDescriptor(
    "Maximum File Size", description="Files larger than this are left alone.", validators=[v.DATA_SIZE])

_PERMISSION_BITS = (stat.S_IRUSR, stat.S_IWUSR, stat.S_IXUSR, stat.S_IRGRP, stat.S_IWGRP, stat.S_IXGRP,
                    stat.S_IROTH, stat.S_IWOTH, stat.S_IXOTH)


class SizeAndAge:
    """The size and age limits of a processor's configuration, as one test."""

    def __init__(self, context) -> None:
        self.min_size = context.property(MIN_SIZE).as_data_size()
        self.max_size = context.property(MAX_SIZE).as_data_size()
        self.min_age_ms = context.property(MIN_AGE).as_duration() * 1000
        max_age = context.property(MAX_AGE).as_duration()
        self.max_age_ms = None if max_age is None else max_age * 1000

    def accepts(self, size: int, modified_ms: int, now_ms: int) -> bool:
        """True when a file of ``size`` bytes last modified at ``modified_ms`` passes the limits."""
        if size < self.min_size or (self.max_size is not None and size > self.max_size):
            return False
        age = now_ms - modified_ms
        return age >= self.min_age_ms and (self.max_age_ms is None or age <= self.max_age_ms)


def is_hidden(name: str) -> bool:
    """True for a hidden file (on POSIX systems: a name starting with a dot)."""
    return name.startswith(".")


def modified_millis(status: os.stat_result) -> int:
    """A file's last-modified time in whole milliseconds since the epoch."""
    return status.st_mtime_ns // 1_000_000


def format_file_time(seconds: float) -> str:
    """A file time as NiFi writes it: ``yyyy-MM-dd'T'HH:mm:ssZ`` in the node's time zone."""
    return datetime.fromtimestamp(seconds).astimezone().strftime("%Y-%m-%dT%H:%M:%S%z")


def relative_path(directory: str, parent: str) -> str:
    """The ``path`` attribute: ``./`` for a file of ``directory`` itself, else ``sub/dir/``."""
    relative = os.path.relpath(parent, directory)
    return "./" if relative == "." else relative + "/"


def absolute_path(parent: str) -> str:
    """The ``absolute.path`` attribute: the file's directory, absolute, ending with ``/``."""
    return os.path.abspath(parent).rstrip("/") + "/"


def file_attributes(status: os.stat_result) -> dict[str, str]:
    """``file.creationTime``, ``file.lastModifiedTime``, ``file.lastAccessTime``, ``file.owner``,
    ``file.group`` and ``file.permissions`` of a file. Where the system does not record a
    creation time, the last-modified time stands in for it."""
    created = getattr(status, "st_birthtime", status.st_mtime)
    return {
        "file.creationTime": format_file_time(created),
        "file.lastModifiedTime": format_file_time(status.st_mtime),
        "file.lastAccessTime": format_file_time(status.st_atime),
        "file.owner": _user(status.st_uid),
        "file.group": _group(status.st_gid),
        "file.permissions": "".join(char if status.st_mode & bit else "-"
                                    for char, bit in zip("rwxrwxrwx", _PERMISSION_BITS)),
    }


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)
