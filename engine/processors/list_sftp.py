"""ListSFTP: lists the files of a directory on an SFTP server, one content-less FlowFile per new or
changed file."""

from __future__ import annotations

import hashlib
import posixpath
import stat
import time
from typing import NamedTuple

from engine.components import (
    AllowableValue,
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDescriptor,
    Relationship,
    Scope,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.confinement import ConfinementError
from engine.expression import ExpressionError
from engine.processors import _sftp as sftp
from engine.processors._files import MAX_AGE, MAX_SIZE, MIN_AGE, MIN_SIZE, SizeAndAge, format_file_time
from engine.processors._listing import TIMESTAMP_PRECISION, TimestampListing

TRACKING_TIMESTAMPS = AllowableValue(
    "timestamps", "Tracking Timestamps", "Remembers the newest last-modified time listed (and the files having it); "
    "a file is listed when it is newer.")
NO_TRACKING = AllowableValue("none", "No Tracking", "Remembers nothing: every run lists every file passing the "
                             "filters.")

LISTING_STRATEGY = PropertyDescriptor(
    "Listing Strategy", description="How new and changed files are told apart from those listed before.",
    required=True, default=TRACKING_TIMESTAMPS.value, allowed_values=[TRACKING_TIMESTAMPS, NO_TRACKING])
REMOTE_PATH = PropertyDescriptor(
    "Remote Path", description="The directory on the server to list (relative to the user's home directory "
    "unless absolute).", default=".", validators=[v.NON_EMPTY], expression_language=ExpressionScope.ENVIRONMENT)
RECURSIVE_SEARCH = PropertyDescriptor(
    "Search Recursively", description="Whether the files of subdirectories are listed too.", required=True,
    default="false", allowed_values=["true", "false"])
FOLLOW_SYMLINK = PropertyDescriptor(
    "Follow Symbolic Links", description="Whether symbolic links are followed: to files (listed) and, when "
    "searching recursively, to directories (searched).", required=True, default="false",
    allowed_values=["true", "false"])
FILE_FILTER_REGEX = PropertyDescriptor(
    "File Filter Regex", description="Only files whose whole name matches this regular expression are listed.",
    validators=[v.REGEX])
PATH_FILTER_REGEX = PropertyDescriptor(
    "Path Filter Regex", description="When searching recursively, only subdirectories whose path relative to the "
    "Remote Path wholly matches this regular expression are listed (the Remote Path itself always is).",
    validators=[v.REGEX])
IGNORE_DOTTED_FILES = PropertyDescriptor(
    "Ignore Dotted Files", description="Whether files and directories whose names start with a dot are left out.",
    required=True, default="true", allowed_values=["true", "false"])

SUCCESS = Relationship("success", "One FlowFile per file listed")

_RESET_BY = (sftp.HOSTNAME, sftp.PORT, sftp.USERNAME, REMOTE_PATH, RECURSIVE_SEARCH, FOLLOW_SYMLINK,
             FILE_FILTER_REGEX, PATH_FILTER_REGEX, IGNORE_DOTTED_FILES, MIN_AGE, MAX_AGE, MIN_SIZE, MAX_SIZE)
_MAX_DEPTH = 100


class _Entry(NamedTuple):
    identifier: str  # the full remote path
    directory: str
    name: str
    size: int
    modified: int
    uid: int
    gid: int
    mode: int


class ListSFTP(Processor):
    """Lists the files of a directory on an SFTP server without fetching them: one FlowFile
    without content per file, carrying what FetchSFTP needs to fetch it (``sftp.remote.host``,
    ``sftp.remote.port``, ``sftp.listing.user``, ``path``, ``filename``).

    With the Tracking Timestamps strategy a file is listed once; it is listed again when its
    last-modified time moves past the newest time listed so far. The state, kept cluster-wide,
    holds that time (``listing.timestamp``, ``processed.timestamp``) and the full paths of the
    files listed having it (``id.0``, ``id.1``...). The newest files are held back one run until
    no file can still get the same time (Target System Timestamp Precision; SFTP servers report
    whole seconds). The state is saved only once the FlowFiles are committed, so a crash may list
    files a second time but never skips one. Changing the server, user, path or filters starts a
    new listing; so does clearing the state. No Tracking keeps no state.

    Set the processor's execution node to Primary in a cluster, as in NiFi: the state is
    cluster-wide, so a new primary node (or a restarted one) continues where the former one
    stopped and lists nothing twice; spread the fetching with a load-balanced connection to
    FetchSFTP. NiFi's Tracking Entities and Time Window strategies, Record Writer and Proxy
    Configuration Service are not offered: flows using them are reported invalid.

    The connection goes through the tenant's confinement: in a tenant's group a server on this
    machine must be opened by the tenant's network allowlist, the platform's own services are
    refused to everyone, and the private key and host key files must lie in the tenant's file
    roots. A refusal, a server that cannot be reached or refuses the login, or a Remote Path that
    does not exist posts a bulletin saying why and the processor yields; nothing is listed.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.standard.ListSFTP"
    tags = ("list", "sftp", "remote", "ingest", "source", "input", "files")
    properties = (LISTING_STRATEGY, sftp.HOSTNAME, sftp.PORT, sftp.USERNAME, sftp.PASSWORD, sftp.PRIVATE_KEY_PATH,
                  sftp.PRIVATE_KEY_PASSPHRASE, REMOTE_PATH, RECURSIVE_SEARCH, FOLLOW_SYMLINK, FILE_FILTER_REGEX,
                  PATH_FILTER_REGEX, IGNORE_DOTTED_FILES, sftp.STRICT_HOST_KEY_CHECKING, sftp.HOST_KEY_FILE,
                  sftp.CONNECTION_TIMEOUT, sftp.DATA_TIMEOUT, sftp.KEEP_ALIVE, TIMESTAMP_PRECISION,
                  sftp.USE_COMPRESSION, MIN_AGE, MAX_AGE, MIN_SIZE, MAX_SIZE, *sftp.ALGORITHMS)
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.FORBIDDEN
    trigger_serially = True
    default_scheduling_period = "1 min"
    stateful = ("Cluster-wide: the newest last-modified time listed and the paths of the files listed having it, "
                "so that each file is listed once, whichever node is primary.")
    migrated_properties = {"follow-symlink": "Follow Symbolic Links", "listing-strategy": "Listing Strategy",
                           "target-system-timestamp-precision": "Target System Timestamp Precision"}
    writes_attributes = (
        WrittenAttribute("sftp.remote.host", "The hostname of the SFTP server"),
        WrittenAttribute("sftp.remote.port", "The port connected to on the SFTP server"),
        WrittenAttribute("sftp.listing.user", "The user who listed the file"),
        WrittenAttribute("file.owner", "The numeric owner id of the file"),
        WrittenAttribute("file.group", "The numeric group id of the file"),
        WrittenAttribute("file.permissions", "The file's permissions, such as 'rw-r--r--'"),
        WrittenAttribute("file.size", "The file's size in bytes"),
        WrittenAttribute("file.lastModifiedTime", "When the file was last modified (yyyy-MM-dd'T'HH:mm:ssZ)"),
        WrittenAttribute("filename", "The file's name"),
        WrittenAttribute("path", "The file's directory on the server, as listed (no trailing '/')"),
    )
    see_also = ("FetchSFTP", "PutSFTP")

    def __init__(self) -> None:
        self._tracker = TimestampListing()

    def on_scheduled(self, context):
        self._tracking = context.property(LISTING_STRATEGY).value == TRACKING_TIMESTAMPS.value
        self._remote_path = context.property(REMOTE_PATH).evaluate().value or "."
        self._recurse = context.property(RECURSIVE_SEARCH).as_bool()
        self._follow = context.property(FOLLOW_SYMLINK).as_bool()
        self._file_filter = context.property(FILE_FILTER_REGEX).as_regex()
        self._path_filter = context.property(PATH_FILTER_REGEX).as_regex() if self._recurse else None
        self._ignore_dotted = context.property(IGNORE_DOTTED_FILES).as_bool()
        self._limits = SizeAndAge(context)
        if self._tracking:
            self._tracker.start(context, _fingerprint(context), context.property(TIMESTAMP_PRECISION).value)
        elif context.state.get_state(Scope.CLUSTER).values:
            context.state.clear(Scope.CLUSTER)

    def on_primary_node_change(self, context, is_primary):
        if is_primary:
            self._tracker.reload()

    def on_trigger(self, context, session):
        try:
            settings = sftp.Settings.read(context)
            connection = sftp.connect(context.confinement, settings)
        except ConfinementError as error:
            context.logger.error("%s; yielding", context.refused(error))
            context.yield_processor()
            return
        except (sftp.CommsError, ExpressionError, ValueError) as error:
            context.logger.error("could not list %s: %s; yielding", self._remote_path, error)
            context.yield_processor()
            return
        try:
            entries = self._list(context, connection)
        except (sftp.CommsError, sftp.NotFound, sftp.Denied) as error:
            context.logger.error("could not list %s: %s; yielding", self._remote_path, error)
            context.yield_processor()
            return
        finally:
            connection.close()
        chosen = self._tracker.select(context, session, entries) if self._tracking else sorted(
            entries, key=lambda e: (e.modified, e.identifier))
        if not chosen:
            context.yield_processor()
            return
        common = {"sftp.remote.host": settings.host, "sftp.remote.port": str(settings.port),
                  "sftp.listing.user": settings.username}
        for entry in chosen:
            attributes = dict(common, **{
                "filename": entry.name, "path": entry.directory, "file.size": str(entry.size),
                "file.owner": str(entry.uid), "file.group": str(entry.gid),
                "file.permissions": sftp.permissions(entry.mode),
                "file.lastModifiedTime": format_file_time(entry.modified / 1000)})
            session.transfer(session.put_all_attributes(session.create(), attributes), SUCCESS)
        context.logger.info("listed %d new file(s) in %s on %s", len(chosen), self._remote_path, settings.address)

    def _list(self, context, connection: sftp.Connection) -> list[_Entry]:
        """Every file under the Remote Path passing the filters."""
        now_ms = int(time.time() * 1000)
        found: list[_Entry] = []
        pending = [(self._remote_path.rstrip("/") or "/", "", 0)]
        while pending:
            directory, relative, depth = pending.pop()
            try:
                children = connection.call(f"listing {directory}", connection.sftp.listdir_attr, directory)
            except (sftp.NotFound, sftp.Denied) as error:
                if depth == 0:
                    raise
                context.logger.warning("skipping %s", error)
                continue
            matched = self._path_filter is None or relative == "" or bool(self._path_filter.fullmatch(relative))
            for child in children:
                name = child.filename
                if name in (".", "..") or (self._ignore_dotted and name.startswith(".")):
                    continue
                full = posixpath.join(directory, name)
                attributes = child
                if stat.S_ISLNK(child.st_mode or 0):
                    if not self._follow:
                        continue
                    try:
                        attributes = connection.call(f"following {full}", connection.sftp.stat, full)
                    except (sftp.NotFound, sftp.Denied):
                        continue  # a dangling or unreadable link
                mode = attributes.st_mode or 0
                if stat.S_ISDIR(mode):
                    if self._recurse and depth + 1 < _MAX_DEPTH:
                        pending.append((full, f"{relative}/{name}" if relative else name, depth + 1))
                    continue
                if not matched or (self._file_filter is not None and not self._file_filter.fullmatch(name)):
                    continue
                entry = _Entry(full, directory, name, attributes.st_size or 0, int(attributes.st_mtime or 0) * 1000,
                               attributes.st_uid or 0, attributes.st_gid or 0, mode)
                if self._limits.accepts(entry.size, entry.modified, now_ms):
                    found.append(entry)
        return found


def _fingerprint(context) -> str:
    """A digest of the settings that decide which files a listing holds."""
    values = [context.property(descriptor).evaluate().value or "" for descriptor in _RESET_BY]
    return hashlib.sha256("\0".join(values).encode()).hexdigest()
