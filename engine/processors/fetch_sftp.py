"""FetchSFTP: replaces each FlowFile's content with a remote file's, then leaves, moves or deletes it."""

from __future__ import annotations

import logging
import posixpath
import time

from engine.components import (
    AllowableValue,
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.confinement import ConfinementError
from engine.expression import ExpressionError
from engine.processors import _sftp as sftp

COMPLETION_NONE = "None"
COMPLETION_MOVE = "Move File"
COMPLETION_DELETE = "Delete File"
#: NiFi's log levels and the Python levels they map to (None: do not log).
LOG_LEVELS = {"TRACE": 5, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
              "ERROR": logging.ERROR, "FATAL": logging.CRITICAL, "NONE": None}
_MOVE = (PropertyDependency("Completion Strategy", (COMPLETION_MOVE,)),)

HOSTNAME = PropertyDescriptor(
    "Hostname", description="The fully qualified hostname or IP address of the server to fetch from.", required=True,
    validators=[v.NON_EMPTY], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
REMOTE_FILE = PropertyDescriptor(
    "Remote File", description="The full path of the file on the server.", required=True, validators=[v.NON_EMPTY],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
COMPLETION_STRATEGY = PropertyDescriptor(
    "Completion Strategy", description="What to do with the remote file once its content is committed.",
    required=True, default=COMPLETION_NONE, allowed_values=[
        AllowableValue(COMPLETION_NONE, description="Leave the file as it is."),
        AllowableValue(COMPLETION_MOVE, description="Move the file to the Move Destination Directory."),
        AllowableValue(COMPLETION_DELETE, description="Delete the file from the server.")])
MOVE_DESTINATION = PropertyDescriptor(
    "Move Destination Directory", description="The directory on the server fetched files are moved to (with Move "
    "File); it must exist unless Create Directory is true.", validators=[v.NON_EMPTY],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
MOVE_CREATE_DIRECTORY = PropertyDescriptor(
    "Create Directory", description="With Move File: whether a missing Move Destination Directory is created.",
    default="false", allowed_values=["true", "false"])
MOVE_CONFLICT_RESOLUTION = PropertyDescriptor(
    "Move Conflict Resolution", description="What to do when the moved file's name exists in the destination.",
    required=True, default="FAIL", depends_on=_MOVE, allowed_values=[
        AllowableValue("FAIL", "Fail", "Leave the file where it is and log a warning."),
        AllowableValue("REPLACE", "Replace", "Delete the existing file, then move this one (OpenSSH does not "
                       "replace on rename).")])
DISABLE_DIRECTORY_LISTING = PropertyDescriptor(
    "Disable Directory Listing", description="With Create Directory: whether the destination is created without "
    "looking whether it exists first (for directories that may not be listed).", default="false",
    allowed_values=["true", "false"])
NOT_FOUND_LOG_LEVEL = PropertyDescriptor(
    "Log Level When File Not Found", description="How loudly a missing remote file is logged (WARN and above also "
    "post a bulletin).", required=True, default="ERROR", allowed_values=list(LOG_LEVELS))

SUCCESS = Relationship("success", "FlowFiles whose content is now the remote file's")
COMMS_FAILURE = Relationship("comms.failure", "FlowFiles that could not be fetched because the server could not "
                             "be reached or broke off; they are penalized")
NOT_FOUND = Relationship("not.found", "FlowFiles whose remote file does not exist; they are penalized")
PERMISSION_DENIED = Relationship("permission.denied", "FlowFiles whose remote file the server refused to read; "
                                 "they are penalized")

_BATCH = 50


class FetchSFTP(Processor):
    """Fetches the file named by Remote File from an SFTP server into the content of the incoming
    FlowFile; once that is committed, the remote file is left alone, moved or deleted
    (Completion Strategy).

    A FETCH provenance event with the ``sftp://host:port/path`` URI records each fetch. A missing
    file goes to not.found, one the server refuses to read to permission.denied, and a server
    that cannot be reached, refuses the login or breaks off to comms.failure; each is penalized,
    gets a ROUTE event, a ``fetch.failure.reason`` attribute and a bulletin saying why. The
    completion action runs only after the session is committed, so a crash in between fetches
    the same file twice but never loses it; when it fails (the file cannot be moved or deleted)
    the FlowFile stays in success and a warning is posted. FlowFiles naming the same server
    share one connection per run. NiFi's Proxy Configuration Service is not offered.

    The connection goes through the tenant's confinement: in a tenant's group a server on this
    machine must be opened by the tenant's network allowlist, the platform's own services are
    refused to everyone, and the private key and host key files must lie in the tenant's file
    roots. A refused FlowFile goes to comms.failure, penalized, with a bulletin saying what was
    refused and why.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.standard.FetchSFTP"
    tags = ("sftp", "get", "retrieve", "files", "fetch", "remote", "ingest", "source", "input")
    properties = (HOSTNAME, sftp.PORT, sftp.USERNAME, sftp.PASSWORD, sftp.PRIVATE_KEY_PATH,
                  sftp.PRIVATE_KEY_PASSPHRASE, REMOTE_FILE, COMPLETION_STRATEGY, MOVE_DESTINATION,
                  MOVE_CREATE_DIRECTORY, MOVE_CONFLICT_RESOLUTION, DISABLE_DIRECTORY_LISTING,
                  sftp.CONNECTION_TIMEOUT, sftp.DATA_TIMEOUT, sftp.KEEP_ALIVE, sftp.HOST_KEY_FILE,
                  sftp.STRICT_HOST_KEY_CHECKING, sftp.USE_COMPRESSION, NOT_FOUND_LOG_LEVEL, *sftp.ALGORITHMS)
    relationships = (SUCCESS, COMMS_FAILURE, NOT_FOUND, PERMISSION_DENIED)
    input_requirement = InputRequirement.REQUIRED
    migrated_properties = {"fetchfiletransfer-notfound-loglevel": "Log Level When File Not Found"}
    reads_attributes = (WrittenAttribute("sftp.remote.host", "The server (with Hostname ${sftp.remote.host})"),
                        WrittenAttribute("path", "The file's directory (with Remote File ${path}/${filename})"),
                        WrittenAttribute("filename", "The file's name (with Remote File ${path}/${filename})"))
    writes_attributes = (
        WrittenAttribute("sftp.remote.host", "The server the file was fetched from"),
        WrittenAttribute("sftp.remote.port", "The port used"),
        WrittenAttribute("sftp.remote.filename", "The remote file's full path"),
        WrittenAttribute("filename", "The remote file's name"),
        WrittenAttribute("path", "The remote file's directory, when Remote File names one"),
        WrittenAttribute("fetch.failure.reason", "The relationship of a failed fetch"),
    )
    see_also = ("ListSFTP", "PutSFTP")

    def __init__(self) -> None:
        self._pool = sftp.Pool()

    def on_scheduled(self, context):
        self._remote_file = context.property(REMOTE_FILE)
        self._completion = context.property(COMPLETION_STRATEGY).value
        self._destination = context.property(MOVE_DESTINATION)
        self._create = context.property(MOVE_CREATE_DIRECTORY).as_bool()
        self._replace = context.property(MOVE_CONFLICT_RESOLUTION).value == "REPLACE"
        self._disable_listing = context.property(DISABLE_DIRECTORY_LISTING).as_bool()
        self._not_found_level = LOG_LEVELS[context.property(NOT_FOUND_LOG_LEVEL).value]

    def validate(self, context):
        if (context.property(COMPLETION_STRATEGY).value == COMPLETION_MOVE
                and not context.property(MOVE_DESTINATION).is_set()):
            yield "'Move Destination Directory' must be set when the Completion Strategy is 'Move File'"

    def on_stopped(self, context):
        self._pool.close()

    def on_trigger(self, context, session):
        connections: dict[sftp.Settings, sftp.Connection] = {}
        completions: list[tuple[sftp.Settings, str, str | None]] = []
        try:
            for flowfile in session.get_batch(_BATCH):
                completion = self._fetch(context, session, flowfile, connections)
                if completion is not None:
                    completions.append(completion)
        except BaseException:
            sftp.close_all(connections.values())
            raise
        if completions:
            session.on_commit(lambda: self._complete(context, connections, completions))
            session.on_rollback(lambda: self._pool.give_back(connections.values()))
        else:
            self._pool.give_back(connections.values())

    def _fetch(self, context, session, flowfile, connections) -> tuple | None:
        started = time.monotonic()
        try:
            settings = sftp.Settings.read(context, flowfile)
            path = self._remote_file.evaluate(flowfile).value or ""
            destination = self._destination.evaluate(flowfile).value if self._completion == COMPLETION_MOVE else None
        except (ExpressionError, ValueError) as error:
            context.logger.error("could not evaluate the remote file of %s: %s; routing to comms.failure",
                                 flowfile.uuid, error)
            self._fail(session, flowfile, COMMS_FAILURE, {})
            return None
        directory, name = posixpath.split(path)
        attributes = {"sftp.remote.host": settings.host, "sftp.remote.port": str(settings.port),
                      "sftp.remote.filename": path, "filename": name or path}
        if directory:
            attributes["path"] = directory
        try:
            connection = connections.get(settings)
            if connection is None:
                connection = connections[settings] = self._pool.take(context.confinement, settings)
            flowfile = session.write(flowfile, lambda out: self._download(connection, path, out))
        except ConfinementError as error:
            context.logger.error("%s; routing %s to comms.failure", context.refused(error), flowfile.uuid)
            self._fail(session, flowfile, COMMS_FAILURE, attributes)
            return None
        except sftp.NotFound as error:
            if self._not_found_level is not None:
                context.logger.log(self._not_found_level, "could not fetch %s for %s: %s; routing to not.found",
                                   path, flowfile.uuid, error)
            self._fail(session, flowfile, NOT_FOUND, attributes)
            return None
        except sftp.Denied as error:
            context.logger.error("could not fetch %s for %s: %s; routing to permission.denied", path, flowfile.uuid,
                                 error)
            self._fail(session, flowfile, PERMISSION_DENIED, attributes)
            return None
        except sftp.CommsError as error:
            context.logger.error("could not fetch %s for %s: %s; routing to comms.failure", path, flowfile.uuid, error)
            stale = connections.pop(settings, None)
            if stale is not None:
                stale.close()
            self._fail(session, flowfile, COMMS_FAILURE, attributes)
            return None
        flowfile = session.put_all_attributes(flowfile, attributes)
        uri = f"sftp://{settings.host}:{settings.port}/{path.lstrip('/')}"
        session.provenance.fetch(flowfile, uri, duration=int((time.monotonic() - started) * 1000))
        session.transfer(flowfile, SUCCESS)
        return settings, path, destination

    @staticmethod
    def _download(connection: sftp.Connection, path: str, out) -> None:
        def copy():
            with connection.sftp.open(path, "rb") as remote:
                remote.prefetch()
                while chunk := remote.read(1 << 20):
                    out.write(chunk)
        connection.call(f"reading {path}", copy)

    @staticmethod
    def _fail(session, flowfile, relationship: Relationship, attributes: dict[str, str]) -> None:
        flowfile = session.put_all_attributes(flowfile, {**attributes, "fetch.failure.reason": relationship.name})
        session.provenance.route(flowfile, relationship.name)
        session.transfer(session.penalize(flowfile), relationship)

    def _complete(self, context, connections, completions) -> None:
        """After the commit: apply the completion strategy to each file fetched."""
        try:
            for settings, path, destination in completions:
                if self._completion == COMPLETION_NONE:
                    continue
                connection = connections.get(settings)
                try:
                    if connection is None or not connection.alive:
                        connection = connections[settings] = self._pool.take(context.confinement, settings)
                    if self._completion == COMPLETION_DELETE:
                        try:
                            connection.call(f"deleting {path}", connection.sftp.remove, path)
                        except sftp.NotFound:
                            pass  # gone already: as good as deleted
                    else:
                        self._move(connection, path, destination)
                except (sftp.CommsError, sftp.NotFound, sftp.Denied, ConfinementError) as error:
                    action = "delete" if self._completion == COMPLETION_DELETE else "move"
                    context.logger.warning("fetched %s from %s but could not %s it: %s; the FlowFile stays in success",
                                           path, settings.address, action, error)
        finally:
            self._pool.give_back(connections.values())

    def _move(self, connection: sftp.Connection, path: str, destination: str) -> None:
        if self._create:
            make_directories(connection, destination, check_first=not self._disable_listing)
        target = posixpath.join(destination, posixpath.basename(path))
        if self._replace:
            try:
                connection.call(f"replacing {target}", connection.sftp.remove, target)
            except sftp.NotFound:
                pass
        connection.call(f"moving {path} to {target}", connection.sftp.rename, path, target)


def make_directories(connection: sftp.Connection, directory: str, check_first: bool = True) -> None:
    """Create ``directory`` and its missing parents on the server; with ``check_first`` look
    whether it exists before creating it (Disable Directory Listing turns that off)."""
    if check_first:
        try:
            connection.call(f"looking up {directory}", connection.sftp.stat, directory)
            return
        except sftp.NotFound:
            pass
    try:
        connection.call(f"creating directory {directory}", connection.sftp.mkdir, directory)
    except sftp.NotFound:
        parent = posixpath.dirname(directory.rstrip("/"))
        if parent in ("", "/", ".", directory):
            raise
        make_directories(connection, parent, check_first)
        connection.call(f"creating directory {directory}", connection.sftp.mkdir, directory)
    except sftp.CommsError:
        # SFTP reports an existing directory as a generic failure; only a missing one is an error.
        if not connection.alive:
            raise
        connection.call(f"looking up {directory}", connection.sftp.stat, directory)
