"""ListFile: lists the files of a directory, one content-less FlowFile per new or changed file."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping
from typing import ClassVar, NamedTuple

from engine.components import (
    AllowableValue,
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
    Scope,
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
    format_file_time,
    is_hidden,
    modified_millis,
    relative_path,
)
from engine.processors._listing import TIMESTAMP_PRECISION, TimestampListing
from engine.services.apis import DistributedMapCacheClient

TRACKING_TIMESTAMPS = AllowableValue(
    "timestamps", "Tracking Timestamps", "Remembers the newest last-modified time listed (and the files having it); "
    "a file is listed when it is newer. Files that appear with an older time (moved in with their time kept) are "
    "missed.")
NO_TRACKING = AllowableValue(
    "none", "No Tracking", "Remembers nothing: every run lists every file passing the filters.")

DIRECTORY = PropertyDescriptor(
    "Input Directory", description="The directory to list.", required=True, validators=[v.DIRECTORY_EXISTS],
    expression_language=ExpressionScope.ENVIRONMENT)
LISTING_STRATEGY = PropertyDescriptor(
    "Listing Strategy", description="How new and changed files are told apart from those listed before.",
    required=True, default=TRACKING_TIMESTAMPS.value, allowed_values=[TRACKING_TIMESTAMPS, NO_TRACKING])
RECURSE = PropertyDescriptor(
    "Recurse Subdirectories", description="Whether files of subdirectories are listed too.", required=True,
    default="true", allowed_values=["true", "false"])
DIRECTORY_LOCATION = PropertyDescriptor(
    "Input Directory Location", description="Where the directory is: on a local disk or a share every node "
    "mounts. Either way the listing state is kept cluster-wide, since ListFile runs on the primary node only.",
    required=True, default="Local", allowed_values=[
        AllowableValue("Local", "Local", "The directory is on a local disk."),
        AllowableValue("Remote", "Remote", "The directory is on a share every node mounts.")])
FILE_FILTER = PropertyDescriptor(
    "File Filter", description="Only files whose whole name matches this regular expression are listed.",
    required=True, default=r"[^\.].*", validators=[v.REGEX])
PATH_FILTER = PropertyDescriptor(
    "Path Filter", description="With Recurse Subdirectories, only files whose directory (relative to the input "
    "directory, empty for the directory itself) wholly matches this regular expression are listed.",
    validators=[v.REGEX])
INCLUDE_FILE_ATTRIBUTES = PropertyDescriptor(
    "Include File Attributes", description="Whether each FlowFile also gets the file's owner, group, permissions, "
    "creation and last-access times (reading them costs a little more on remote shares).", required=True,
    default="true", allowed_values=["true", "false"])
IGNORE_HIDDEN_FILES = PropertyDescriptor(
    "Ignore Hidden Files", description="Whether hidden files (names starting with a dot) are left out.",
    required=True, default="true", allowed_values=["true", "false"])
_ENTITIES = (PropertyDependency("Listing Strategy", ("entities",)),)
TRACKING_STATE_CACHE = PropertyDescriptor(
    "Entity Tracking State Cache", description="Used by the Tracking Entities strategy, which Flowsite does not "
    "offer.", service=DistributedMapCacheClient, depends_on=_ENTITIES)
TRACKING_TIME_WINDOW = PropertyDescriptor(
    "Entity Tracking Time Window", description="Used by the Tracking Entities strategy, which Flowsite does not "
    "offer.", default="3 hours", validators=[v.TIME_PERIOD], expression_language=ExpressionScope.ENVIRONMENT,
    depends_on=_ENTITIES)
INITIAL_LISTING_TARGET = PropertyDescriptor(
    "Entity Tracking Initial Listing Target", description="Used by the Tracking Entities strategy, which Flowsite "
    "does not offer.", default="all", allowed_values=[AllowableValue("window", "Tracking Time Window"),
                                                      AllowableValue("all", "All Available")],
    depends_on=_ENTITIES)
NODE_IDENTIFIER = PropertyDescriptor(
    "Entity Tracking Node Identifier", description="Used by the Tracking Entities strategy, which Flowsite does not "
    "offer.", default="${hostname()}", validators=[v.NON_EMPTY], expression_language=ExpressionScope.ENVIRONMENT,
    depends_on=_ENTITIES)
TRACK_PERFORMANCE = PropertyDescriptor(
    "Track Performance", description="Whether the time each disk operation of a listing takes is recorded and "
    "summed up in a DEBUG log message after each listing (with the slowest files).", required=True,
    default="false", allowed_values=["true", "false"])
MAX_TRACKED_FILES = PropertyDescriptor(
    "Maximum Number of Files to Track", description="With Track Performance, how many files' timings one listing "
    "keeps at most.", required=True, default="100000", validators=[v.POSITIVE_INTEGER],
    expression_language=ExpressionScope.ENVIRONMENT)
MAX_DISK_OPERATION_TIME = PropertyDescriptor(
    "Max Disk Operation Time", description="Reading one file's details taking longer than this posts a warning.",
    default="10 secs", validators=[v.TIME_PERIOD], expression_language=ExpressionScope.ENVIRONMENT)
MAX_LISTING_TIME = PropertyDescriptor(
    "Max Directory Listing Time", description="Listing one directory taking longer than this posts a warning.",
    default="3 mins", validators=[v.TIME_PERIOD], expression_language=ExpressionScope.ENVIRONMENT)

SUCCESS = Relationship("success", "One FlowFile per file listed")

#: The properties whose change makes a new listing start from scratch.
_RESET_BY = (DIRECTORY, RECURSE, FILE_FILTER, PATH_FILTER, MIN_AGE, MAX_AGE, MIN_SIZE, MAX_SIZE, IGNORE_HIDDEN_FILES)


class _Entry(NamedTuple):
    path: str
    name: str
    parent: str
    size: int
    modified: int
    status: os.stat_result

    @property
    def identifier(self) -> str:
        """What the listing state remembers of a file: its absolute path."""
        return self.path


class ListFile(Processor):
    """Lists the files of a directory (and, optionally, its subdirectories) without reading them:
    one FlowFile without content per file, carrying what FetchFile needs to fetch it.

    With the Tracking Timestamps strategy a file is listed once; it is listed again when its
    last-modified time moves past the newest time listed so far. The state holds that time
    (``listing.timestamp``, ``processed.timestamp``) and the absolute paths of the files listed
    having it (``id.0``, ``id.1``...). The newest files are held back one run until no file can
    still get the same time (see Target System Timestamp Precision). A file that appears with a
    time older than the newest listed (moved in with its time kept) is never listed. The state
    is saved only once the FlowFiles are committed, so a crash may list files a second time but
    never skips one. Changing the directory, the filters, recursion, ages or sizes starts a new
    listing from scratch; clearing the component's state does too. No Tracking keeps no state
    and lists every file at each run.

    ListFile runs on the primary node only, one task at a time, every minute unless the flow
    says otherwise. Its state is cluster-wide, so a new primary node continues where the
    former one stopped; Input Directory Location is accepted for compatibility but changes
    nothing. NiFi's Tracking Entities strategy (with its Entity Tracking properties) is not
    offered, and neither is Record Writer (Flowsite has no record writers yet): flows using
    them are reported invalid. FlowFiles get a CREATE provenance event.

    In a tenant's group the input directory must lie in the tenant's file roots, and entries
    leading elsewhere (symbolic links) are not listed; ``/proc``, ``/sys``, ``/dev``, the node's
    data directory and the platform's directories are refused to everyone
    (``engine.confinement``). A refused input directory posts a bulletin saying why and the
    processor yields; nothing is listed.
    """

    nifi_type = "org.apache.nifi.processors.standard.ListFile"
    tags = ("file", "get", "list", "ingest", "source", "filesystem")
    properties = (DIRECTORY, LISTING_STRATEGY, RECURSE, DIRECTORY_LOCATION, FILE_FILTER, PATH_FILTER,
                  INCLUDE_FILE_ATTRIBUTES, MIN_AGE, MAX_AGE, MIN_SIZE, MAX_SIZE, IGNORE_HIDDEN_FILES,
                  TIMESTAMP_PRECISION, TRACKING_STATE_CACHE, TRACKING_TIME_WINDOW, INITIAL_LISTING_TARGET,
                  NODE_IDENTIFIER, TRACK_PERFORMANCE, MAX_TRACKED_FILES, MAX_DISK_OPERATION_TIME, MAX_LISTING_TIME)
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.FORBIDDEN
    trigger_serially = True
    primary_node_only = True
    default_scheduling_period = "1 min"
    stateful = ("Cluster-wide: the newest last-modified time listed and the paths of the files listed having it, "
                "so that each file is listed once.")
    migrated_properties: ClassVar[Mapping[str, str]] = {
        "listing-strategy": "Listing Strategy", "target-system-timestamp-precision": "Target System Timestamp Precision",
        "et-state-cache": "Entity Tracking State Cache", "et-time-window": "Entity Tracking Time Window",
        "et-initial-listing-target": "Entity Tracking Initial Listing Target",
        "et-node-identifier": "Entity Tracking Node Identifier", "track-performance": "Track Performance",
        "max-performance-metrics": "Maximum Number of Files to Track",
        "max-operation-time": "Max Disk Operation Time", "max-listing-time": "Max Directory Listing Time",
    }
    writes_attributes = (
        WrittenAttribute("filename", "The file's name"),
        WrittenAttribute("path", "The file's directory relative to the input directory: './' or 'sub/dir/'"),
        WrittenAttribute("absolute.path", "The file's directory, absolute, ending with '/'"),
        WrittenAttribute("file.size", "The file's size in bytes"),
        WrittenAttribute("file.lastModifiedTime", "When the file was last modified (yyyy-MM-dd'T'HH:mm:ssZ)"),
        WrittenAttribute("file.creationTime", "When the file was created, where recorded (with file attributes)"),
        WrittenAttribute("file.lastAccessTime", "When the file was last read (with file attributes)"),
        WrittenAttribute("file.owner", "The user owning the file (with file attributes)"),
        WrittenAttribute("file.group", "The group owning the file (with file attributes)"),
        WrittenAttribute("file.permissions", "The file's permissions, such as 'rw-r--r--' (with file attributes)"),
    )
    see_also = ("FetchFile", "GetFile", "PutFile")

    def __init__(self) -> None:
        self._tracker = TimestampListing()

    def on_scheduled(self, context):
        self._confinement = context.confinement
        self._directory = os.path.abspath(context.property(DIRECTORY).evaluate().value)
        self._tracking = context.property(LISTING_STRATEGY).value == TRACKING_TIMESTAMPS.value
        self._recurse = context.property(RECURSE).as_bool()
        self._file_filter = context.property(FILE_FILTER).as_regex()
        self._path_filter = context.property(PATH_FILTER).as_regex() if self._recurse else None
        self._include_attributes = context.property(INCLUDE_FILE_ATTRIBUTES).as_bool()
        self._ignore_hidden = context.property(IGNORE_HIDDEN_FILES).as_bool()
        self._limits = SizeAndAge(context)
        self._precision = context.property(TIMESTAMP_PRECISION).value
        self._track_performance = context.property(TRACK_PERFORMANCE).as_bool()
        self._max_tracked = context.property(MAX_TRACKED_FILES).evaluate().as_int()
        self._max_operation = context.property(MAX_DISK_OPERATION_TIME).evaluate().as_duration()
        self._max_listing = context.property(MAX_LISTING_TIME).evaluate().as_duration()
        if self._tracking:
            self._tracker.start(context, _fingerprint(context), self._precision)
        elif context.state.get_state(Scope.CLUSTER).values:
            context.state.clear(Scope.CLUSTER)

    def on_primary_node_change(self, context, is_primary):
        if is_primary:
            self._tracker.reload()

    def on_trigger(self, context, session):
        if self._tracking:
            self._list_tracking_timestamps(context, session)
            return
        entries = self._list(context, None)
        if not entries:
            context.yield_processor()
            return
        for entry in sorted(entries, key=lambda e: (e.modified, e.path)):
            self._emit(session, entry)

    def _list_tracking_timestamps(self, context, session) -> None:
        entries = self._list(context, self._tracker.base(context).listed)
        chosen = self._tracker.select(context, session, entries) if entries else []
        if not chosen:
            context.yield_processor()
            return
        for entry in chosen:
            self._emit(session, entry)
        context.logger.info("listed %d new file(s)", len(chosen))

    def _emit(self, session, entry: _Entry) -> None:
        attributes = {
            "filename": entry.name,
            "path": relative_path(self._directory, entry.parent),
            "absolute.path": absolute_path(entry.parent),
            "file.size": str(entry.size),
            "file.lastModifiedTime": format_file_time(entry.modified / 1000),
        }
        if self._include_attributes:
            attributes.update(file_attributes(entry.status))
        flowfile = session.create()
        session.transfer(session.put_all_attributes(flowfile, attributes), SUCCESS)

    def _list(self, context, min_timestamp: int | None) -> list[_Entry]:
        """Every file passing the filters, modified at or after ``min_timestamp``."""
        try:
            self._confinement.check_path(self._directory)
        except ConfinementError as error:
            context.logger.error("%s; yielding", context.refused(error))
            return []
        timings = _Timings(context, self._track_performance, self._max_tracked, self._max_operation)
        now_ms = int(time.time() * 1000)
        found: list[_Entry] = []
        visited: set[tuple[int, int]] = set()
        pending = [(self._directory, "")]
        while pending:
            directory, relative = pending.pop()
            if not os.access(directory, os.R_OK | os.X_OK):
                if directory == self._directory:
                    context.logger.error("input directory %s does not exist or cannot be read", directory)
                else:
                    context.logger.debug("directory %s is not readable: skipped", directory)
                continue
            started = time.monotonic()
            try:
                identity = os.stat(directory)
                with os.scandir(directory) as listing:
                    children = list(listing)
            except OSError as error:
                context.logger.error("could not list directory %s: %s", directory, error)
                continue
            elapsed = time.monotonic() - started
            if elapsed > self._max_listing:
                context.logger.warning("listing directory %s took %.1f s, more than the %g s expected",
                                       directory, elapsed, self._max_listing)
            visited.add((identity.st_dev, identity.st_ino))
            for child in children:
                if not self._confinement.allows(child.path):
                    continue  # a symbolic link out of the allowed roots
                try:
                    if child.is_dir():
                        if self._recurse:
                            target = child.stat()
                            if (target.st_dev, target.st_ino) not in visited:
                                pending.append((child.path, f"{relative}/{child.name}" if relative else child.name))
                        continue
                    with timings.measure(child.path):
                        status = child.stat()
                except OSError:
                    continue  # vanished or unreadable while listing
                entry = _Entry(child.path, child.name, directory, status.st_size, modified_millis(status), status)
                if min_timestamp is not None and entry.modified < min_timestamp:
                    continue
                if self._accepts(entry, relative, now_ms):
                    found.append(entry)
        timings.report(len(found))
        return found

    def _accepts(self, entry: _Entry, relative: str, now_ms: int) -> bool:
        if not self._limits.accepts(entry.size, entry.modified, now_ms):
            return False
        if self._path_filter is not None and not self._path_filter.fullmatch(relative):
            return False
        if not self._file_filter.fullmatch(entry.name):
            return False
        if not os.access(entry.path, os.R_OK):
            return False
        return not (self._ignore_hidden and is_hidden(entry.name))


class _Timings:
    """Times the disk operations of one listing: warns about slow ones and, when tracking
    performance, sums them up in a DEBUG message."""

    def __init__(self, context, track: bool, max_tracked: int, max_seconds: float) -> None:
        self._context = context
        self._track = track
        self._max_tracked = max_tracked
        self._max_seconds = max_seconds
        self._samples: list[tuple[float, str]] = []
        self._count = 0
        self._total = 0.0
        self._started = time.monotonic()

    def measure(self, path: str) -> _Measure:
        """A context manager timing one operation on ``path``."""
        return _Measure(self, path)

    def record(self, path: str, seconds: float) -> None:
        if seconds > self._max_seconds:
            self._context.logger.warning("reading the details of %s took %.1f s, more than the %g s expected",
                                         path, seconds, self._max_seconds)
        if self._track:
            self._count += 1
            self._total += seconds
            if len(self._samples) < self._max_tracked:
                self._samples.append((seconds, path))

    def report(self, found: int) -> None:
        if not self._track:
            return
        slowest = sorted(self._samples, reverse=True)[:5]
        average = self._total / self._count * 1000 if self._count else 0.0
        self._context.logger.debug(
            "listing took %.0f ms: %d file(s) examined (%.2f ms each on average), %d passed the filters; "
            "slowest: %s", (time.monotonic() - self._started) * 1000, self._count, average, found,
            ", ".join(f"{path} ({seconds * 1000:.1f} ms)" for seconds, path in slowest) or "none")


class _Measure:
    def __init__(self, timings: _Timings, path: str) -> None:
        self._timings = timings
        self._path = path

    def __enter__(self) -> None:
        self._started = time.monotonic()

    def __exit__(self, *exc_info) -> None:
        self._timings.record(self._path, time.monotonic() - self._started)


def _fingerprint(context) -> str:
    """A digest of the settings that decide which files a listing holds."""
    values = [context.property(DIRECTORY).evaluate().value or ""]
    values += [context.property(descriptor).value or "" for descriptor in _RESET_BY[1:]]
    return hashlib.sha256("\0".join(values).encode()).hexdigest()
