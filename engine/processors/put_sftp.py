"""PutSFTP: sends the content of each FlowFile to a file on an SFTP server."""

from __future__ import annotations

import posixpath
import stat
import time

from engine.components import (
    AllowableValue,
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.confinement import ConfinementError
from engine.expression import ExpressionError
from engine.processors import _sftp as sftp
from engine.processors.fetch_sftp import DISABLE_DIRECTORY_LISTING, make_directories

_FLOWFILE = ExpressionScope.FLOWFILE_ATTRIBUTES
REPLACE, IGNORE, RENAME, REJECT, FAIL, NONE = "REPLACE", "IGNORE", "RENAME", "REJECT", "FAIL", "NONE"

CREATE_DIRECTORY = PropertyDescriptor(
    "Create Directory", description="Whether a missing Remote Path is created.", required=True, default="false",
    allowed_values=["true", "false"])
BATCH_SIZE = PropertyDescriptor(
    "Batch Size", description="How many FlowFiles one connection sends at most per run.", required=True,
    default="500", validators=[v.POSITIVE_INTEGER])
CONFLICT_RESOLUTION = PropertyDescriptor(
    "Conflict Resolution", description="What to do when a file of the same name exists on the server.",
    required=True, default=NONE, allowed_values=[
        AllowableValue(REPLACE, REPLACE, "The remote file is replaced; the FlowFile goes to success."),
        AllowableValue(IGNORE, IGNORE, "Nothing is sent; the FlowFile goes to success."),
        AllowableValue(RENAME, RENAME, "The file is sent as '1.name' (or the first free number up to 99); the "
                       "FlowFile goes to success, or to reject when no number is free."),
        AllowableValue(REJECT, REJECT, "Nothing is sent; the FlowFile goes to reject."),
        AllowableValue(FAIL, FAIL, "Nothing is sent; the FlowFile goes to failure, penalized."),
        AllowableValue(NONE, NONE, "Nothing is checked before sending: the file is replaced (success), or the "
                       "server's refusal sends the FlowFile to failure.")])
REJECT_ZERO_BYTE = PropertyDescriptor(
    "Reject Zero-Byte Files", description="Whether empty FlowFiles go to reject instead of being sent.",
    default="true", allowed_values=["true", "false"])
DOT_RENAME = PropertyDescriptor(
    "Dot Rename", description="Whether the file is written as '.name' and renamed to its name once complete (so "
    "readers never see a partial file). Ignored when Temporary Filename is set.", default="true",
    allowed_values=["true", "false"])
TEMP_FILENAME = PropertyDescriptor(
    "Temporary Filename", description="The name the file is written under, renamed to its name once complete.",
    validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
LAST_MODIFIED_TIME = PropertyDescriptor(
    "Last Modified Time", description="The file's last-modified time, as yyyy-MM-dd'T'HH:mm:ssZ (e.g. "
    "${file.lastModifiedTime}). A value that does not parse leaves the time unchanged, with a warning.",
    validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
PERMISSIONS = PropertyDescriptor(
    "Permissions", description="The file's permissions, as rw-r--r-- or octal 644 (e.g. ${file.permissions}). A "
    "value that does not parse leaves them unchanged, with a warning.", validators=[v.NON_EMPTY],
    expression_language=_FLOWFILE)
REMOTE_OWNER = PropertyDescriptor(
    "Remote Owner", description="The numeric user id to own the file (e.g. ${file.owner}); needs the right to "
    "change owners on the server.", validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
REMOTE_GROUP = PropertyDescriptor(
    "Remote Group", description="The numeric group id to own the file (e.g. ${file.group}).",
    validators=[v.NON_EMPTY], expression_language=_FLOWFILE)

SUCCESS = Relationship("success", "FlowFiles sent (or ignored because the file existed)")
FAILURE = Relationship("failure", "FlowFiles that could not be sent; they are penalized")
REJECT_RELATIONSHIP = Relationship("reject", "FlowFiles the conflict resolution or Reject Zero-Byte Files turned "
                                   "away")


class _Rejected(Exception):
    """The FlowFile goes elsewhere than success without anything sent (conflict, empty content)."""

    def __init__(self, relationship: Relationship, penalize: bool, message: str) -> None:
        super().__init__(message)
        self.relationship = relationship
        self.penalize = penalize


class PutSFTP(Processor):
    """Sends each FlowFile's content to ``Remote Path/filename`` (the ``filename`` attribute) on an
    SFTP server.

    The content is written under a temporary name (``.filename`` with Dot Rename, or Temporary
    Filename), its time, permissions and owner are set, and it is renamed into place, so a
    reader never sees a partial file; a failed write removes the temporary file. A SEND
    provenance event with the ``sftp://host/path`` URI records each file sent. Conflict
    Resolution decides what happens when the name exists (a directory of that name always
    rejects). A FlowFile that could not be sent (the server's disk is full, permission denied,
    a missing directory without Create Directory) goes to failure, penalized, with a bulletin
    saying why; when the server cannot be reached or breaks off, the rest of the batch goes back
    to the queue and the processor yields. After a crash a FlowFile may be sent a second time
    (at least once). NiFi's Proxy Configuration Service is not offered.

    The connection goes through the tenant's confinement: in a tenant's group a server on this
    machine must be opened by the tenant's network allowlist, the platform's own services are
    refused to everyone, and the private key and host key files must lie in the tenant's file
    roots. A refused FlowFile goes to failure, penalized, with a bulletin saying what was
    refused and why.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.standard.PutSFTP"
    tags = ("remote", "copy", "egress", "put", "sftp", "archive", "files")
    properties = (sftp.HOSTNAME, sftp.PORT, sftp.USERNAME, sftp.PASSWORD, sftp.PRIVATE_KEY_PATH,
                  sftp.PRIVATE_KEY_PASSPHRASE, sftp.REMOTE_PATH, CREATE_DIRECTORY, DISABLE_DIRECTORY_LISTING,
                  BATCH_SIZE, sftp.CONNECTION_TIMEOUT, sftp.DATA_TIMEOUT, CONFLICT_RESOLUTION, REJECT_ZERO_BYTE,
                  DOT_RENAME, TEMP_FILENAME, sftp.HOST_KEY_FILE, LAST_MODIFIED_TIME, PERMISSIONS, REMOTE_OWNER,
                  REMOTE_GROUP, sftp.STRICT_HOST_KEY_CHECKING, sftp.KEEP_ALIVE, sftp.USE_COMPRESSION,
                  *sftp.ALGORITHMS)
    relationships = (SUCCESS, FAILURE, REJECT_RELATIONSHIP)
    input_requirement = InputRequirement.REQUIRED
    reads_attributes = (WrittenAttribute("filename", "The name of the file to write"),)
    see_also = ("ListSFTP", "FetchSFTP")

    def __init__(self) -> None:
        self._pool = sftp.Pool()

    def on_scheduled(self, context):
        self._batch = context.property(BATCH_SIZE).as_int()
        self._remote_path = context.property(sftp.REMOTE_PATH)
        self._create = context.property(CREATE_DIRECTORY).as_bool()
        self._check_first = not context.property(DISABLE_DIRECTORY_LISTING).as_bool()
        self._conflict = context.property(CONFLICT_RESOLUTION).value
        self._reject_empty = context.property(REJECT_ZERO_BYTE).as_bool()
        self._dot_rename = context.property(DOT_RENAME).as_bool()
        self._temporary = context.property(TEMP_FILENAME)
        self._modified = context.property(LAST_MODIFIED_TIME)
        self._permissions = context.property(PERMISSIONS)
        self._owner = context.property(REMOTE_OWNER)
        self._group = context.property(REMOTE_GROUP)

    def on_stopped(self, context):
        self._pool.close()

    def on_trigger(self, context, session):
        connections: dict[sftp.Settings, sftp.Connection] = {}
        try:
            flowfiles = session.get_batch(self._batch)
            for index, flowfile in enumerate(flowfiles):
                if not self._send(context, session, flowfile, connections):
                    for rest in flowfiles[index + 1:]:
                        session.transfer(rest)
                    context.yield_processor()
                    return
        finally:
            self._pool.give_back(connections.values())

    def _send(self, context, session, flowfile, connections) -> bool:
        """Send one FlowFile and route it; False when the server is unusable for now."""
        started = time.monotonic()
        try:
            settings = sftp.Settings.read(context, flowfile)
            directory = self._remote_path.evaluate(flowfile).value or ""
        except (ExpressionError, ValueError) as error:
            context.logger.error("could not evaluate the destination of %s: %s; routing to failure", flowfile.uuid,
                                 error)
            session.transfer(session.penalize(flowfile), FAILURE)
            return True
        name = flowfile.attributes.get("filename") or flowfile.uuid
        try:
            connection = connections.get(settings)
            if connection is None:
                connection = connections[settings] = self._pool.take(context.confinement, settings)
            target = self._put(context, session, connection, flowfile, directory, name)
        except ConfinementError as error:
            context.logger.error("%s; routing %s to failure", context.refused(error), flowfile.uuid)
            session.transfer(session.penalize(flowfile), FAILURE)
            return True
        except _Rejected as rejected:
            context.logger.warning("%s; routing to %s", rejected, rejected.relationship.name)
            session.transfer(session.penalize(flowfile) if rejected.penalize else flowfile, rejected.relationship)
            return True
        except (sftp.NotFound, sftp.Denied) as error:
            context.logger.error("could not send %s to %s: %s; routing to failure", flowfile.uuid, settings.address,
                                 error)
            session.transfer(session.penalize(flowfile), FAILURE)
            return True
        except sftp.CommsError as error:
            session.transfer(session.penalize(flowfile), FAILURE)
            connection = connections.get(settings)
            if connection is not None and connection.alive:
                context.logger.error("could not send %s to %s: %s; routing to failure", flowfile.uuid,
                                     settings.address, error)
                return True
            context.logger.error("could not send %s to %s: %s; routing to failure and yielding", flowfile.uuid,
                                 settings.address, error)
            if connections.pop(settings, None) is not None:
                connection.close()
            return False
        if target is not None:
            millis = int((time.monotonic() - started) * 1000)
            session.provenance.send(flowfile, f"sftp://{settings.host}/{target.lstrip('/')}", duration=millis)
            context.logger.info("sent %s to %s on %s in %d ms", flowfile.uuid, target, settings.address, millis)
        session.transfer(flowfile, SUCCESS)
        return True

    def _put(self, context, session, connection: sftp.Connection, flowfile, directory: str, name: str) -> str | None:
        """Write the file; its full path, or None when ignored. Raises _Rejected or sftp errors."""
        if "/" in name or name in (".", ".."):
            raise _Rejected(FAILURE, True, f"filename {name!r} of {flowfile.uuid} would leave the remote directory")
        if self._reject_empty and flowfile.size == 0:
            raise _Rejected(REJECT_RELATIONSHIP, True, f"{flowfile.uuid} is empty (Reject Zero-Byte Files)")
        if directory and self._create:
            make_directories(connection, directory, self._check_first)
        name = self._resolve_conflict(connection, flowfile, directory, name)
        if name is None:
            return None
        target = posixpath.join(directory, name) if directory else name
        temporary_name = self._temporary.evaluate(flowfile).value if self._temporary.is_set() else None
        temporary_name = temporary_name or ("." + name if self._dot_rename else name)
        temporary = posixpath.join(directory, temporary_name) if directory else temporary_name
        try:
            self._write(session, connection, flowfile, temporary)
            self._apply_metadata(context, connection, flowfile, temporary)
            if temporary != target:
                _replace(connection, temporary, target)
        except BaseException:
            if temporary != target and connection.alive:
                try:
                    connection.call(f"removing {temporary}", connection.sftp.remove, temporary)
                except (sftp.NotFound, sftp.Denied, sftp.CommsError):
                    pass  # the write failed before creating it, or the server is gone
            raise
        return target

    def _resolve_conflict(self, connection, flowfile, directory: str, name: str) -> str | None:
        """The name to write under, None to send nothing (IGNORE); raises _Rejected."""
        if self._conflict == NONE:
            return name
        existing = _stat(connection, posixpath.join(directory, name) if directory else name)
        if existing is None:
            return name
        if stat.S_ISDIR(existing.st_mode or 0):
            raise _Rejected(REJECT_RELATIONSHIP, False, f"{name} is a directory on the server")
        if self._conflict == REPLACE:
            return name
        if self._conflict == IGNORE:
            return None
        if self._conflict == RENAME:
            for number in range(1, 100):
                candidate = f"{number}.{name}"
                if _stat(connection, posixpath.join(directory, candidate) if directory else candidate) is None:
                    return candidate
            raise _Rejected(REJECT_RELATIONSHIP, False, f"no free name for {name} after 99 attempts")
        if self._conflict == REJECT:
            raise _Rejected(REJECT_RELATIONSHIP, False, f"{name} exists on the server (Conflict Resolution REJECT)")
        raise _Rejected(FAILURE, True, f"{name} exists on the server (Conflict Resolution FAIL)")

    @staticmethod
    def _write(session, connection: sftp.Connection, flowfile, path: str) -> None:
        """Write the content, each request confirmed (pipelined writes would not report a full
        disk), then check the size the server holds (closing does not report errors either)."""
        def copy():
            with session.read(flowfile) as source, connection.sftp.open(path, "wb") as remote:
                while chunk := source.read(1 << 20):
                    remote.write(chunk)
        connection.call(f"writing {path}", copy)
        stored = connection.call(f"looking up {path}", connection.sftp.stat, path).st_size
        if stored != flowfile.size:
            raise sftp.CommsError(f"writing {path} failed: the server holds {stored} of its {flowfile.size} bytes "
                                  f"(is its disk full?)")

    def _apply_metadata(self, context, connection: sftp.Connection, flowfile, path: str) -> None:
        """Set the time, permissions and owner asked for; a value that does not parse is a warning."""
        def value(prop) -> str | None:
            return (prop.evaluate(flowfile).value or "").strip() or None if prop.is_set() else None

        modified, mode, owner, group = (value(self._modified), value(self._permissions), value(self._owner),
                                        value(self._group))
        try:
            if modified is not None:
                moment = sftp.parse_modified_time(modified)
                connection.call(f"setting the time of {path}", connection.sftp.utime, path, (moment, moment))
            if mode is not None:
                connection.call(f"setting the permissions of {path}", connection.sftp.chmod, path,
                                sftp.parse_permissions(mode))
            if owner is not None or group is not None:
                current = connection.call(f"looking up {path}", connection.sftp.stat, path)
                uid = int(owner) if owner is not None else current.st_uid
                gid = int(group) if group is not None else current.st_gid
                connection.call(f"setting the owner of {path}", connection.sftp.chown, path, uid, gid)
        except (ValueError, sftp.NotFound, sftp.Denied, sftp.CommsError) as error:
            context.logger.warning("sent %s but could not set its attributes: %s", flowfile.uuid, error)


def _stat(connection: sftp.Connection, path: str):
    try:
        return connection.call(f"looking up {path}", connection.sftp.stat, path)
    except sftp.NotFound:
        return None


def _replace(connection: sftp.Connection, source: str, target: str) -> None:
    """Rename ``source`` to ``target``, replacing it at once where the server can (OpenSSH's
    posix-rename); else remove ``target`` first, as plain SFTP renames only onto a free name."""
    try:
        connection.call(f"renaming {source} to {target}", connection.sftp.posix_rename, source, target)
        return
    except sftp.CommsError:
        if not connection.alive:
            raise
    try:
        connection.call(f"removing {target}", connection.sftp.remove, target)
    except sftp.NotFound:
        pass
    connection.call(f"renaming {source} to {target}", connection.sftp.rename, source, target)
