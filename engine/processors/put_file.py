"""PutFile: writes the content of each FlowFile to a file in a directory."""

from __future__ import annotations

import grp
import os
import pwd
import re
import stat
import time
from datetime import datetime
from urllib.parse import quote

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
from engine.expression import ExpressionError

DIRECTORY = PropertyDescriptor(
    "Directory", description="The directory to write files to (an expression over the FlowFile's attributes).",
    required=True, validators=[v.NON_EMPTY], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
CONFLICT_RESOLUTION = PropertyDescriptor(
    "Conflict Resolution Strategy", description="What to do when a file of the same name exists: replace it, "
    "ignore the FlowFile (it goes to success unwritten), or fail (the FlowFile is penalized and goes to failure).",
    required=True, default="fail", allowed_values=["replace", "ignore", "fail"])
CREATE_DIRECTORIES = PropertyDescriptor(
    "Create Missing Directories", description="Whether missing directories are created; if false, a FlowFile "
    "whose directory is missing goes to failure.", required=True, default="true", allowed_values=["true", "false"])
MAX_FILE_COUNT = PropertyDescriptor(
    "Maximum File Count", description="Write no more files while the directory holds this many (the FlowFile is "
    "penalized and goes to failure).", validators=[v.POSITIVE_INTEGER])
LAST_MODIFIED_TIME = PropertyDescriptor(
    "Last Modified Time", description="The file's last-modified time, as 'dd/MM/yyyy HH:mm:ss Z' (an "
    "expression; e.g. ${file.lastModifiedTime}).", expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
PERMISSIONS = PropertyDescriptor(
    "Permissions", description="The file's permissions, as 'rwxr-x---' or octal '750' (an expression).",
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
OWNER = PropertyDescriptor(
    "Owner", description="The user to own the file (an expression); needs the right to change owners.",
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
GROUP = PropertyDescriptor(
    "Group", description="The group to own the file (an expression).",
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)

SUCCESS = Relationship("success", "FlowFiles written (or ignored because the file existed)")
FAILURE = Relationship("failure", "FlowFiles that could not be written; they are penalized")

_BATCH = 100
_SMALL = 1 << 20
_SYMBOLIC = re.compile(r"[r-][w-][x-][r-][w-][x-][r-][w-][x-]")
_OCTAL = re.compile(r"0?[0-7]{3}")


class PutFile(Processor):
    """Writes each FlowFile's content to ``Directory/filename`` (the ``filename`` attribute).

    The content goes to a hidden ``.filename`` file first, renamed into place once complete, so
    a reader never sees a partial file. A SEND provenance event records each file written. A
    FlowFile that cannot be written (disk full, no permission, a conflict with the 'fail'
    strategy) is penalized and routed to failure. After a crash a FlowFile may be written a
    second time (delivery is at least once); with 'replace' the result is the same file.

    In a tenant's group the directory must lie in the tenant's file roots; ``/proc``, ``/sys``,
    ``/dev``, the node's data directory and the platform's directories are refused to everyone
    (``engine.confinement``). The file is created inside its checked directory, never through a
    symbolic link. A refused FlowFile is penalized and routed to failure with a bulletin saying
    what was refused and why; nothing is written.
    """

    nifi_type = "org.apache.nifi.processors.standard.PutFile"
    tags = ("put", "local", "copy", "archive", "files", "filesystem")
    properties = (DIRECTORY, CONFLICT_RESOLUTION, CREATE_DIRECTORIES, MAX_FILE_COUNT, LAST_MODIFIED_TIME,
                  PERMISSIONS, OWNER, GROUP)
    relationships = (SUCCESS, FAILURE)
    input_requirement = InputRequirement.REQUIRED
    restricted = ("write-filesystem",)
    reads_attributes = (WrittenAttribute("filename", "The name of the file to write"),)
    see_also = ("GetFile", "FetchFile")

    def on_scheduled(self, context):
        self._confinement = context.confinement
        self._directory = context.property(DIRECTORY)
        self._conflict = context.property(CONFLICT_RESOLUTION).value
        self._create = context.property(CREATE_DIRECTORIES).as_bool()
        self._max_files = context.property(MAX_FILE_COUNT).as_int()
        self._modified = context.property(LAST_MODIFIED_TIME)
        self._permissions = context.property(PERMISSIONS)
        self._owner = context.property(OWNER)
        self._group = context.property(GROUP)
        self._known_directories: set[str] = set()

    def on_trigger(self, context, session):
        folders: dict[str, tuple[str, int]] = {}
        try:
            for flowfile in session.get_batch(_BATCH):
                started = time.monotonic()
                try:
                    target = self._write(context, session, flowfile, folders)
                except ConfinementError as error:
                    context.logger.error("%s; routing %s to failure", context.refused(error), flowfile.uuid)
                    session.transfer(session.penalize(flowfile), FAILURE)
                    continue
                except _Failure as failure:
                    context.logger.error("could not write %s: %s; routing to failure", flowfile.uuid, failure)
                    session.transfer(session.penalize(flowfile), FAILURE)
                    continue
                if target is not None:
                    millis = int((time.monotonic() - started) * 1000)
                    session.provenance.send(flowfile, "file://" + quote(target), duration=millis)
                session.transfer(flowfile, SUCCESS)
        finally:
            for _, folder_fd in folders.values():
                os.close(folder_fd)

    def _write(self, context, session, flowfile, folders: dict[str, tuple[str, int]]) -> str | None:
        """Write one FlowFile; ``folders`` keeps the folders this trigger opened (checked once
        each: the files are created through the checked descriptor, never by path)."""
        try:
            directory = os.path.abspath(self._directory.evaluate(flowfile).value or "")
        except ExpressionError as error:
            raise _Failure(f"the Directory expression failed: {error}") from error
        name = flowfile.attributes.get("filename") or flowfile.uuid
        if os.path.isabs(name) or ".." in name.split(os.sep):
            raise _Failure(f"filename {name!r} would leave the directory {directory!r}")
        target = os.path.join(directory, name)
        folder = os.path.dirname(target)
        base = os.path.basename(target)
        try:
            opened = folders.get(folder)
            if opened is None:
                real_folder = self._ensure_directory(folder)
                opened = folders[folder] = (real_folder, self._confinement.open_directory(real_folder))
            real_folder, folder_fd = opened
            if self._max_files is not None and _count_files(real_folder) >= self._max_files:
                raise _Failure(f"directory {folder!r} already holds {self._max_files} files")
            if self._conflict != "replace" and _exists(folder_fd, base):
                if self._conflict == "ignore":
                    context.logger.info("%s exists; ignoring FlowFile %s", target, flowfile.uuid)
                    return None
                raise _Failure(f"{target!r} already exists")
            self._put(session, flowfile, folder_fd, base)
        except ConfinementError:
            raise
        except OSError as error:
            self._known_directories.discard(folder)
            stale = folders.pop(folder, None)
            if stale is not None:
                os.close(stale[1])
            raise _Failure(f"{type(error).__name__}: {error}") from error
        return target

    def _ensure_directory(self, folder: str) -> str:
        """The folder's real path, once checked (and created when missing)."""
        real = self._confinement.check_path(folder)
        if folder in self._known_directories:
            return real
        if not os.path.isdir(real):
            if not self._create:
                raise _Failure(f"directory {folder!r} does not exist")
            real = self._confinement.make_directories(real)
        self._known_directories.add(folder)
        return real

    def _put(self, session, flowfile, folder_fd: int, name: str) -> None:
        """Write the content to ``.name`` in the folder, set its metadata, rename it into place."""
        temporary = "." + name
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                     dir_fd=folder_fd)
        try:
            if flowfile.size <= _SMALL:
                _write_all(fd, session.read_bytes(flowfile))
            else:
                with session.read(flowfile) as source:
                    while chunk := source.read(1 << 20):
                        _write_all(fd, chunk)
            self._apply_metadata(flowfile, fd)
        finally:
            os.close(fd)
        os.replace(temporary, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)

    def _apply_metadata(self, flowfile, fd: int) -> None:
        try:
            if self._modified.is_set():
                text = self._modified.evaluate(flowfile).value
                if text:
                    moment = datetime.strptime(text, "%d/%m/%Y %H:%M:%S %z").timestamp()
                    os.utime(fd, (moment, moment))
            if self._permissions.is_set():
                text = (self._permissions.evaluate(flowfile).value or "").strip()
                if text:
                    os.fchmod(fd, _mode(text))
            owner = self._owner.evaluate(flowfile).value if self._owner.is_set() else None
            group = self._group.evaluate(flowfile).value if self._group.is_set() else None
            if owner or group:
                uid = pwd.getpwnam(owner).pw_uid if owner else -1
                gid = grp.getgrnam(group).gr_gid if group else -1
                os.fchown(fd, uid, gid)
        except (ValueError, KeyError, ExpressionError) as error:
            raise _Failure(f"could not set the file's metadata: {error}") from error


class _Failure(Exception):
    """Why one FlowFile could not be written."""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _exists(folder_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _count_files(directory: str) -> int:
    with os.scandir(directory) as entries:
        return sum(1 for entry in entries if entry.is_file() and not entry.name.startswith("."))


def _mode(text: str) -> int:
    if _OCTAL.fullmatch(text):
        return int(text, 8)
    if _SYMBOLIC.fullmatch(text):
        bits = (stat.S_IRUSR, stat.S_IWUSR, stat.S_IXUSR, stat.S_IRGRP, stat.S_IWGRP, stat.S_IXGRP,
                stat.S_IROTH, stat.S_IWOTH, stat.S_IXOTH)
        return sum(bit for bit, char in zip(bits, text) if char != "-")
    raise ValueError(f"permissions {text!r} are neither 'rwxr-x---' nor octal like '750'")
