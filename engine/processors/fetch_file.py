"""FetchFile: replaces each FlowFile's content with a file's, then leaves, moves or deletes the file."""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from pathlib import Path

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

COMPLETION_NONE = "None"
COMPLETION_MOVE = "Move File"
COMPLETION_DELETE = "Delete File"
CONFLICT_RENAME = "Rename"
CONFLICT_REPLACE = "Replace File"
CONFLICT_KEEP = "Keep Existing"
CONFLICT_FAIL = "Fail"
#: NiFi's log levels and the Python levels they map to (None: do not log).
LOG_LEVELS = {"TRACE": 5, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
              "ERROR": logging.ERROR, "FATAL": logging.CRITICAL, "NONE": None}

FILE_TO_FETCH = PropertyDescriptor(
    "File to Fetch", description="The full path of the file to fetch (an expression over the FlowFile's "
    "attributes).", required=True, default="${absolute.path}/${filename}", validators=[v.NON_EMPTY],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
COMPLETION_STRATEGY = PropertyDescriptor(
    "Completion Strategy", description="What to do with the file once its content is committed.", required=True,
    default=COMPLETION_NONE, allowed_values=[
        AllowableValue(COMPLETION_NONE, description="Leave the file where it is."),
        AllowableValue(COMPLETION_MOVE, description="Move the file to the Move Destination Directory."),
        AllowableValue(COMPLETION_DELETE, description="Delete the file.")])
MOVE_DESTINATION = PropertyDescriptor(
    "Move Destination Directory", description="Where fetched files are moved (an expression over the FlowFile's "
    "attributes); created when missing.", required=True, validators=[v.NON_EMPTY],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    depends_on=[PropertyDependency("Completion Strategy", (COMPLETION_MOVE,))])
CONFLICT_STRATEGY = PropertyDescriptor(
    "Move Conflict Strategy", description="What to do when moving a file onto an existing one of the same name.",
    required=True, default=CONFLICT_RENAME, allowed_values=[
        AllowableValue(CONFLICT_RENAME, description="Keep the existing file; move the fetched one under its name "
                       "with a random UUID added before the extension."),
        AllowableValue(CONFLICT_REPLACE, description="Replace the existing file with the fetched one."),
        AllowableValue(CONFLICT_KEEP, description="Keep the existing file and delete the fetched one."),
        AllowableValue(CONFLICT_FAIL, description="Do not fetch: route the FlowFile to failure.")])
NOT_FOUND_LOG_LEVEL = PropertyDescriptor(
    "Log level when file not found", description="How loudly a missing file is logged (WARN and above also post "
    "a bulletin).", required=True, default="ERROR", allowed_values=list(LOG_LEVELS))
PERMISSION_DENIED_LOG_LEVEL = PropertyDescriptor(
    "Log level when permission denied", description="How loudly a file Flowsite may not read is logged.",
    required=True, default="ERROR", allowed_values=list(LOG_LEVELS))

SUCCESS = Relationship("success", "FlowFiles whose content is now the file's")
NOT_FOUND = Relationship("not.found", "FlowFiles whose file does not exist; they are penalized")
PERMISSION_DENIED = Relationship("permission.denied", "FlowFiles whose file Flowsite may not read; they are "
                                 "penalized")
FAILURE = Relationship("failure", "FlowFiles that could not be fetched for another reason")

_BATCH = 50


class FetchFile(Processor):
    """Reads the file named by File to Fetch into the content of the incoming FlowFile; once
    that is committed, the file is left alone, moved or deleted (Completion Strategy).

    A FETCH provenance event with the file's ``file://`` URI records each fetch. A FlowFile
    whose file does not exist goes to not.found, one whose file is unreadable to permission.
    denied, both penalized and with a ROUTE event; other problems (the file is a directory, a
    read error, a move destination that is not a writable directory, a conflict under the Fail
    strategy) go to failure. The completion action runs only after the session is committed, so
    a crash in between can fetch the same file twice but never loses it (at least once). When
    the completion action itself fails (the file cannot be moved or deleted), the FlowFile stays
    in success and a warning is posted.

    In a tenant's group the file and the move destination must lie in the tenant's file roots;
    ``/proc``, ``/sys``, ``/dev``, the node's data directory and the platform's directories are
    refused to everyone (``engine.confinement``). A refused FlowFile is penalized and routed to
    failure with a bulletin saying what was refused and why; nothing is read.
    """

    nifi_type = "org.apache.nifi.processors.standard.FetchFile"
    tags = ("local", "files", "filesystem", "ingest", "ingress", "get", "source", "input", "fetch")
    properties = (FILE_TO_FETCH, COMPLETION_STRATEGY, MOVE_DESTINATION, CONFLICT_STRATEGY, NOT_FOUND_LOG_LEVEL,
                  PERMISSION_DENIED_LOG_LEVEL)
    relationships = (SUCCESS, NOT_FOUND, PERMISSION_DENIED, FAILURE)
    input_requirement = InputRequirement.REQUIRED
    restricted = ("read-filesystem", "write-filesystem")
    reads_attributes = (WrittenAttribute("absolute.path", "The file's directory (with the default File to Fetch)"),
                        WrittenAttribute("filename", "The file's name (with the default File to Fetch)"))
    see_also = ("ListFile", "GetFile", "PutFile")

    def on_scheduled(self, context):
        self._confinement = context.confinement
        self._file = context.property(FILE_TO_FETCH)
        self._completion = context.property(COMPLETION_STRATEGY).value
        self._destination = context.property(MOVE_DESTINATION)
        self._conflict = context.property(CONFLICT_STRATEGY).value
        self._not_found_level = LOG_LEVELS[context.property(NOT_FOUND_LOG_LEVEL).value]
        self._denied_level = LOG_LEVELS[context.property(PERMISSION_DENIED_LOG_LEVEL).value]

    def on_trigger(self, context, session):
        completions = []
        for flowfile in session.get_batch(_BATCH):
            completion = self._fetch(context, session, flowfile)
            if completion is not None:
                completions.append(completion)
        if completions:
            session.on_commit(lambda: self._complete(context, completions))

    def _fetch(self, context, session, flowfile) -> tuple[str, str | None] | None:
        """Fetch one FlowFile's file; the completion to run after the commit, if it succeeded."""
        started = time.monotonic()
        try:
            path = self._file.evaluate(flowfile).value or ""
            destination = self._destination.evaluate(flowfile).value if self._completion == COMPLETION_MOVE else None
        except ExpressionError as error:
            context.logger.error("could not evaluate the file of %s: %s; routing to failure", flowfile.uuid, error)
            session.transfer(session.penalize(flowfile), FAILURE)
            return None
        try:
            self._confinement.check_path(path)
            if destination is not None:
                self._confinement.check_path(destination)
        except ConfinementError as error:
            context.logger.error("%s; routing to failure", context.refused(error))
            session.transfer(session.penalize(flowfile), FAILURE)
            return None
        try:
            os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            self._log(context, self._not_found_level, "could not fetch %s for %s: the file does not exist; routing "
                      "to not.found", path, flowfile.uuid)
            self._route(session, flowfile, NOT_FOUND)
            return None
        except OSError as error:
            self._log(context, self._not_found_level, "could not fetch %s for %s: its existence cannot be "
                      "verified (%s); routing to failure", path, flowfile.uuid, error)
            session.transfer(session.penalize(flowfile), FAILURE)
            return None
        if not os.access(path, os.R_OK):
            self._denied(context, session, flowfile, path)
            return None
        if destination is not None and not self._destination_usable(context, session, flowfile, path, destination):
            return None
        try:
            with open(self._confinement.open(path, os.O_RDONLY), "rb") as source:
                flowfile = session.write(flowfile, lambda out: shutil.copyfileobj(source, out, 1 << 20))
        except ConfinementError as error:
            context.logger.error("%s; routing to failure", context.refused(error))
            session.transfer(session.penalize(flowfile), FAILURE)
            return None
        except PermissionError:
            self._denied(context, session, flowfile, path)
            return None
        except OSError as error:
            context.logger.error("could not fetch %s for %s: %s; routing to failure", path, flowfile.uuid, error)
            session.transfer(session.penalize(flowfile), FAILURE)
            return None
        uri = Path(os.path.abspath(path)).as_uri()
        millis = int((time.monotonic() - started) * 1000)
        session.provenance.fetch(flowfile, uri, details=f"Replaced content of FlowFile with contents of {uri}",
                                 duration=millis)
        session.transfer(flowfile, SUCCESS)
        return path, destination

    def _destination_usable(self, context, session, flowfile, path: str, destination: str) -> bool:
        """Check (and create) the move destination before fetching; False routes to failure."""
        if os.path.exists(destination):
            if not os.path.isdir(destination) or not os.access(destination, os.W_OK):
                context.logger.error("could not fetch %s for %s: the move destination %s is not a directory Flowsite "
                                     "may write to; routing to failure", path, flowfile.uuid, destination)
                session.transfer(flowfile, FAILURE)
                return False
        else:
            try:
                self._confinement.make_directories(destination)
            except OSError as error:
                context.logger.error("could not fetch %s for %s: the move destination %s could not be created (%s); "
                                     "routing to failure", path, flowfile.uuid, destination, error)
                session.transfer(flowfile, FAILURE)
                return False
        if self._conflict == CONFLICT_FAIL and os.path.exists(os.path.join(destination, os.path.basename(path))):
            context.logger.error("could not fetch %s for %s: a file of that name exists in %s and the conflict "
                                 "strategy is Fail; routing to failure", path, flowfile.uuid, destination)
            session.transfer(flowfile, FAILURE)
            return False
        return True

    def _denied(self, context, session, flowfile, path: str) -> None:
        self._log(context, self._denied_level, "could not fetch %s for %s: permission to read it is denied; routing "
                  "to permission.denied", path, flowfile.uuid)
        self._route(session, flowfile, PERMISSION_DENIED)

    @staticmethod
    def _route(session, flowfile, relationship: Relationship) -> None:
        session.provenance.route(flowfile, relationship.name)
        session.transfer(session.penalize(flowfile), relationship)

    @staticmethod
    def _log(context, level: int | None, message: str, *args) -> None:
        if level is not None:
            context.logger.log(level, message, *args)

    def _complete(self, context, completions: list[tuple[str, str | None]]) -> None:
        """After the commit: apply the completion strategy to each file fetched."""
        for path, destination in completions:
            try:
                if self._completion == COMPLETION_DELETE:
                    self._confinement.remove(path)
                elif self._completion == COMPLETION_MOVE:
                    self._move(path, destination)
            except OSError as error:
                context.logger.warning("fetched %s but could not %s it: %s; the FlowFile stays in success", path,
                                       "delete" if self._completion == COMPLETION_DELETE else "move", error)

    def _move(self, path: str, destination: str) -> None:
        self._confinement.check_path(path)
        destination = self._confinement.make_directories(destination)
        name = os.path.basename(path)
        target = os.path.join(destination, name)
        if os.path.exists(target):
            if self._conflict == CONFLICT_KEEP:
                self._confinement.remove(path)
                return
            if self._conflict == CONFLICT_RENAME:
                stem, dot, extension = name.rpartition(".")
                unique = str(uuid.uuid4())
                renamed = f"{stem}-{unique}.{extension}" if dot else f"{name}-{unique}"
                target = os.path.join(destination, renamed)
            elif self._conflict != CONFLICT_REPLACE:
                raise FileExistsError(f"{target} appeared after the fetch")
        shutil.move(path, target)
