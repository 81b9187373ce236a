"""GetFile: picks up the files of a directory, one FlowFile per file, and deletes them."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections import deque
from pathlib import Path

from engine.components import (
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.confinement import ConfinementError
from engine.processors._files import (
    MAX_AGE,
    MAX_SIZE,
    MIN_AGE,
    MIN_SIZE,
    SizeAndAge,
    absolute_path,
    file_attributes,
    is_hidden,
    modified_millis,
    relative_path,
)

DIRECTORY = PropertyDescriptor(
    "Input Directory", description="The directory to pick files up from.", required=True,
    validators=[v.DIRECTORY_EXISTS], expression_language=ExpressionScope.ENVIRONMENT)
FILE_FILTER = PropertyDescriptor(
    "File Filter", description="Only files whose whole name matches this regular expression are picked up.",
    required=True, default=r"[^\.].*", validators=[v.REGEX])
PATH_FILTER = PropertyDescriptor(
    "Path Filter", description="With Recurse Subdirectories, only files in subdirectories whose path (relative "
    "to the input directory) matches this regular expression are picked up; files of the input directory "
    "itself are then left alone.", validators=[v.REGEX])
BATCH_SIZE = PropertyDescriptor(
    "Batch Size", description="The most files picked up by one task.", required=True, default="10",
    validators=[v.POSITIVE_INTEGER])
KEEP_SOURCE_FILE = PropertyDescriptor(
    "Keep Source File", description="If true, files are left in place (and picked up again at every listing, "
    "which is useful for tests); if false, each file is deleted once its FlowFile is committed, and files in "
    "directories Flowsite cannot write to are left alone.", required=True, default="false",
    allowed_values=["true", "false"])
RECURSE = PropertyDescriptor(
    "Recurse Subdirectories", description="Whether files of subdirectories are picked up too.", required=True,
    default="true", allowed_values=["true", "false"])
POLLING_INTERVAL = PropertyDescriptor(
    "Polling Interval", description="The least time between two listings of the directory.", required=True,
    default="0 sec", validators=[v.TIME_PERIOD])
IGNORE_HIDDEN_FILES = PropertyDescriptor(
    "Ignore Hidden Files", description="Whether hidden files (names starting with a dot) are left alone.",
    required=True, default="true", allowed_values=["true", "false"])

SUCCESS = Relationship("success", "One FlowFile per file picked up")

#: A new listing is made only while fewer files than this wait to be picked up.
_REFILL_BELOW = 100


class GetFile(Processor):
    """Creates a FlowFile from each file of a directory (and, optionally, of its subdirectories),
    then deletes the file unless Keep Source File is set.

    Files pass the filters when their name matches File Filter, their subdirectory Path Filter,
    their size and age the limits, when they are readable and, unless the source is kept, their
    directory is writable. Each FlowFile gets the file's name, its ``path`` relative to the input
    directory (``./`` for the directory itself, ``sub/dir/`` below it), its ``absolute.path``
    and the file's times, owner, group and permissions, and a RECEIVE provenance event whose
    transit URI is the file's ``file://`` URI.

    A file is deleted only after the session holding its FlowFile has been committed, so a
    crash in between can pick the same file up a second time but never loses it: delivery is
    at least once. Tasks running at the same time never pick up the same file: a file stays
    reserved from the moment a task takes it until its FlowFile is committed (and the file
    deleted) or the session is rolled back.

    In a tenant's group the input directory must lie in the tenant's file roots, and files or
    subdirectories leading elsewhere (symbolic links) are left alone; ``/proc``, ``/sys``,
    ``/dev``, the node's data directory and the platform's directories are refused to everyone
    (``engine.confinement``). A refused input directory posts a bulletin saying why and the
    processor yields; nothing is read.
    """

    nifi_type = "org.apache.nifi.processors.standard.GetFile"
    tags = ("local", "files", "filesystem", "ingest", "ingress", "get", "source", "input")
    properties = (DIRECTORY, FILE_FILTER, PATH_FILTER, BATCH_SIZE, KEEP_SOURCE_FILE, RECURSE, POLLING_INTERVAL,
                  IGNORE_HIDDEN_FILES, MIN_AGE, MAX_AGE, MIN_SIZE, MAX_SIZE)
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.FORBIDDEN
    trigger_when_empty = True
    restricted = ("read-filesystem", "write-filesystem")
    writes_attributes = (
        WrittenAttribute("filename", "The file's name"),
        WrittenAttribute("path", "The file's directory relative to the input directory: './' or 'sub/dir/'"),
        WrittenAttribute("absolute.path", "The file's directory, absolute, ending with '/'"),
        WrittenAttribute("file.creationTime", "When the file was created (yyyy-MM-dd'T'HH:mm:ssZ), where recorded"),
        WrittenAttribute("file.lastModifiedTime", "When the file was last modified (yyyy-MM-dd'T'HH:mm:ssZ)"),
        WrittenAttribute("file.lastAccessTime", "When the file was last read (yyyy-MM-dd'T'HH:mm:ssZ)"),
        WrittenAttribute("file.owner", "The user owning the file"),
        WrittenAttribute("file.group", "The group owning the file"),
        WrittenAttribute("file.permissions", "The file's permissions, such as 'rw-r--r--'"),
    )
    see_also = ("PutFile", "FetchFile", "ListFile")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listing_lock = threading.Lock()
        self._queue: deque[str] = deque()
        self._in_process: set[str] = set()
        self._last_listing = float("-inf")

    def on_scheduled(self, context):
        self._confinement = context.confinement
        self._directory = os.path.abspath(context.property(DIRECTORY).evaluate().value)
        self._file_filter = context.property(FILE_FILTER).as_regex()
        self._recurse = context.property(RECURSE).as_bool()
        self._path_filter = context.property(PATH_FILTER).as_regex() if self._recurse else None
        self._batch_size = context.property(BATCH_SIZE).as_int()
        self._keep_source = context.property(KEEP_SOURCE_FILE).as_bool()
        self._polling_interval = context.property(POLLING_INTERVAL).as_duration()
        self._ignore_hidden = context.property(IGNORE_HIDDEN_FILES).as_bool()
        self._limits = SizeAndAge(context)
        with self._lock:
            self._queue.clear()
        self._last_listing = float("-inf")

    def on_trigger(self, context, session):
        self._refill(context)
        with self._lock:
            batch = []
            while self._queue and len(batch) < self._batch_size:
                path = self._queue.popleft()
                if path not in self._in_process:
                    batch.append(path)
            self._in_process.update(batch)
        if not batch:
            return
        session.on_rollback(lambda: self._release(batch))
        picked = []
        for path in batch:
            if self._pick_up(context, session, path):
                picked.append(path)
            else:
                self._release([path])
        session.on_commit(lambda: self._finish(context, picked))

    def _refill(self, context) -> None:
        """List the directory again when few files wait and the polling interval has passed."""
        if len(self._queue) >= _REFILL_BELOW or time.monotonic() - self._last_listing < self._polling_interval:
            return
        if not self._listing_lock.acquire(blocking=False):
            return  # another task is listing
        try:
            listing = self._list(context)
            if listing is None:
                context.yield_processor()
                return
            with self._lock:
                fresh = [path for _, path in sorted(listing) if path not in self._in_process]
                self._queue = deque(fresh)
                self._last_listing = time.monotonic()
            if not fresh:
                context.yield_processor()
        finally:
            self._listing_lock.release()

    def _list(self, context) -> list[tuple[int, str]] | None:
        """``(last-modified ms, path)`` of every file passing the filters; None when the input
        directory cannot be used."""
        directory = self._directory
        try:
            self._confinement.check_path(directory)
        except ConfinementError as error:
            context.logger.error("%s; yielding", context.refused(error))
            return None
        if not os.path.isdir(directory) or not os.access(directory, os.R_OK | os.X_OK):
            context.logger.error("input directory %s does not exist or cannot be read", directory)
            return None
        if not self._keep_source and not os.access(directory, os.W_OK):
            context.logger.error("input directory %s is not writable, so its files could not be deleted", directory)
            return None
        now_ms = int(time.time() * 1000)
        found: list[tuple[int, str]] = []
        visited: set[tuple[int, int]] = set()
        pending = [directory]
        while pending:
            current = pending.pop()
            try:
                identity = os.stat(current)
                if (identity.st_dev, identity.st_ino) in visited:
                    continue  # a symbolic link back to a directory already listed
                visited.add((identity.st_dev, identity.st_ino))
                with os.scandir(current) as entries:
                    entries = list(entries)
            except OSError:
                continue
            for entry in entries:
                if not self._confinement.allows(entry.path):
                    continue  # a symbolic link out of the allowed roots
                try:
                    if entry.is_dir():
                        if self._recurse:
                            pending.append(entry.path)
                    elif entry.is_file():
                        status = entry.stat()
                        if self._accepts(entry, status, now_ms):
                            found.append((modified_millis(status), entry.path))
                except OSError:
                    continue  # vanished or unreadable while listing
        return found

    def _accepts(self, entry: os.DirEntry, status: os.stat_result, now_ms: int) -> bool:
        if not self._limits.accepts(status.st_size, modified_millis(status), now_ms):
            return False
        if self._ignore_hidden and is_hidden(entry.name):
            return False
        parent = os.path.dirname(entry.path)
        if self._path_filter is not None:
            relative = os.path.relpath(parent, self._directory)
            if relative == "." or not self._path_filter.fullmatch(relative):
                return False
        if not os.access(entry.path, os.R_OK):
            return False
        if not self._keep_source and not os.access(parent, os.W_OK):
            return False
        return self._file_filter.fullmatch(entry.name) is not None

    def _pick_up(self, context, session, path: str) -> bool:
        """Make a FlowFile of the file at ``path``; False when the file is gone or unreadable."""
        started = time.monotonic()
        flowfile = None
        try:
            with open(self._confinement.open(path, os.O_RDONLY), "rb") as source:
                status = os.fstat(source.fileno())
                flowfile = session.create()
                flowfile = session.write(flowfile, lambda out: shutil.copyfileobj(source, out, 1 << 20))
        except OSError as error:
            if flowfile is not None:
                session.remove(flowfile)
            if isinstance(error, ConfinementError):
                context.logger.error("%s", context.refused(error))
            elif isinstance(error, FileNotFoundError):
                context.logger.debug("%s vanished before it could be picked up", path)
            else:
                context.logger.warning("could not pick up %s: %s", path, error)
            return False
        parent = os.path.dirname(path)
        attributes = {
            "filename": os.path.basename(path),
            "path": relative_path(self._directory, parent),
            "absolute.path": absolute_path(parent),
            **file_attributes(status),
        }
        flowfile = session.put_all_attributes(flowfile, attributes)
        millis = int((time.monotonic() - started) * 1000)
        session.provenance.receive(flowfile, Path(path).as_uri(), duration=millis)
        session.transfer(flowfile, SUCCESS)
        return True

    def _finish(self, context, paths: list[str]) -> None:
        """After the commit: delete the files picked up (unless kept), then free them."""
        try:
            if not self._keep_source:
                for path in paths:
                    try:
                        self._confinement.remove(path)
                    except FileNotFoundError:
                        pass
                    except OSError as error:
                        context.logger.warning("picked up %s but could not delete it: %s", path, error)
        finally:
            self._release(paths)

    def _release(self, paths: list[str]) -> None:
        with self._lock:
            self._in_process.difference_update(paths)
