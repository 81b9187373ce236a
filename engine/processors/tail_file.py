"""TailFile: ingests the lines appended to a file, or to the files of a directory, as they are
written, following the file when it is rolled over."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

from engine.components import (
    AllowableValue,
    ExpressionScope,
    InputRequirement,
    ProcessException,
    Processor,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
    Scope,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.confinement import ConfinementError
from engine.java_regex import java_regex
from engine.processors._tail import (
    TailState,
    crc_of,
    flowfile_name,
    glob_regex,
    read_lines,
    state_indexes,
)

SINGLE_FILE, MULTIPLE_FILES = "Single file", "Multiple files"
BEGINNING_OF_TIME, BEGINNING_OF_FILE, CURRENT_TIME = "Beginning of Time", "Beginning of File", "Current Time"

MODE = PropertyDescriptor(
    "Tailing Mode", description="Single file tails the one file named by Files to Tail; Multiple files tails the "
    "files of Base Directory whose path matches Files to Tail.", required=True, default=SINGLE_FILE,
    allowed_values=[
        AllowableValue(SINGLE_FILE, description="Only the file named in Files to Tail is tailed; it need not exist "
                       "yet when the processor starts."),
        AllowableValue(MULTIPLE_FILES, description="Files to Tail is a regular expression; the files of Base "
                       "Directory it matches are tailed.")])
FILES_TO_TAIL = PropertyDescriptor(
    "Files to Tail", description="In Single file mode, the path of the file to tail. In Multiple files mode, a "
    "regular expression the path of a file relative to Base Directory must match (with Recursive Lookup, "
    "subdirectories are part of that path: 'logs/.*\\.log').", required=True, validators=[v.NON_EMPTY],
    expression_language=ExpressionScope.ENVIRONMENT)
ROLLING_FILENAME_PATTERN = PropertyDescriptor(
    "Rolling Filename Pattern", description="A glob (* and ? wildcards, [...] and {a,b}) naming the files a "
    "tailed file is rolled over to, in the tailed file's directory; ${filename} stands for the tailed file's "
    "name without its extension ('${filename}.*.log'). With it, what was appended to a file before it rolled "
    "over is read too, even while the processor was stopped.", validators=[v.NON_EMPTY])
POST_ROLLOVER_TAIL_PERIOD = PropertyDescriptor(
    "Post-Rollover Tail Period", description="After a rollover, keep reading the rolled-over file until it has "
    "not been modified for this long (for writers that flush after renaming); the new file is read only then. "
    "Set it longer than the run schedule.", default="0 sec", validators=[v.TIME_PERIOD])
BASE_DIRECTORY = PropertyDescriptor(
    "Base Directory", description="The directory whose files are tailed in Multiple files mode.",
    validators=[v.NON_EMPTY], expression_language=ExpressionScope.ENVIRONMENT)
START_POSITION = PropertyDescriptor(
    "Initial Start Position", description="Where reading starts for a file the processor has no state for; "
    "afterwards it continues where it left off.", required=True, default=BEGINNING_OF_FILE,
    allowed_values=[
        AllowableValue(BEGINNING_OF_TIME, description="The oldest rolled-over file first, then the others "
                       "oldest first, then the tailed file from its beginning."),
        AllowableValue(BEGINNING_OF_FILE, description="The tailed file from its beginning; nothing already "
                       "rolled over."),
        AllowableValue(CURRENT_TIME, description="The end of the tailed file: only what is written from now on.")])
STATE_LOCATION = PropertyDescriptor(
    "State Location", description="Whether the position is kept on this node (each node tails its own file) or "
    "cluster-wide (for a processor running on the primary node only, continued by the next primary).",
    required=True, default="Local", allowed_values=[
        AllowableValue("Local", description="State is kept on the node."),
        AllowableValue("Remote", description="State is kept cluster-wide.")])
RECURSIVE = PropertyDescriptor(
    "Recursive Lookup", description="In Multiple files mode, whether files of subdirectories are tailed too.",
    required=True, default="false", allowed_values=["true", "false"])
LOOKUP_FREQUENCY = PropertyDescriptor(
    "Lookup Frequency", description="In Multiple files mode, the least time between two listings of the files "
    "to tail.", default="10 minutes", validators=[v.TIME_PERIOD])
MAXIMUM_AGE = PropertyDescriptor(
    "Maximum Age", description="In Multiple files mode, files not modified for this long are not tailed (no "
    "more lines are expected in them). Too short a value may bring data in twice when the file is written "
    "again.", default="24 hours", validators=[v.TIME_PERIOD])
REREAD_ON_NUL = PropertyDescriptor(
    "Reread on NUL Encountered", description="If true, a NUL byte stops reading before its line and the "
    "processor yields, reading it again later (some network file systems show holes as NULs for a while). A "
    "file holding real NUL bytes then stops the processor for good.", default="false",
    allowed_values=["true", "false"])
LINE_START_PATTERN = PropertyDescriptor(
    "Line Start Pattern", description="A regular expression matching the start of the first line of a message: "
    "lines are kept together until a line matching it starts the next message, so that multi-line messages "
    "(stack traces) are not split. Assumes UTF-8.", validators=[v.REGEX],
    depends_on=[PropertyDependency("Tailing Mode", (SINGLE_FILE,))])
PRE_ALLOCATED_BUFFER_SIZE = PropertyDescriptor(
    "Preallocated Buffer Size", description="The memory set aside for reading each tailed file (kept for NiFi "
    "flows; reading here is in 64 KB pieces whatever it says).", required=True, default="65536 B",
    validators=[v.DATA_SIZE])
MAX_BUFFER_SIZE = PropertyDescriptor(
    "Max Buffer Size", description="With Line Start Pattern, the most a message may hold before what was "
    "gathered is sent even though no new message started.", required=True, default="64 KB",
    validators=[v.DATA_SIZE], depends_on=[PropertyDependency("Line Start Pattern")])

SUCCESS = Relationship("success", "All FlowFiles are routed to this relationship")

#: Stored beside NiFi's keys while a commit is under way: the mark it carries and the state it makes.
PENDING_MARK, PENDING_STATE = "flowsite.pending.mark", "flowsite.pending.state"


@dataclass
class _Tailed:
    """A tailed file: its state number, its committed state, and the open file it is read from."""

    index: int
    state: TailState
    fresh: bool = False            # no stored state: Initial Start Position applies
    fd: int | None = None
    identity: tuple[int, int] | None = None


class TailFile(Processor):
    """"Tails" a file, or the files of a directory, turning the whole lines written to it since the
    last run into a FlowFile; a line is ingested once its end (``\\n``, ``\\r\\n`` or ``\\r``) is written.

    A tailed file that is rolled over (renamed, then created again) is followed: with Rolling Filename
    Pattern the processor finds the rolled-over files in the tailed file's directory and reads what was
    appended to the old file before the rollover, then the new file from its start, even if the
    rollover happened while the processor was stopped. Each rolled-over file read to its end becomes
    a FlowFile named after it. A file truncated in place (copytruncate) is read again from its start.

    The position in each file is component state (local, or cluster-wide with State Location Remote)
    under NiFi's keys ``file.<n>.filename``, ``.position``, ``.timestamp``, ``.length``, ``.checksum``
    (the CRC-32 of the bytes read, to recognise the file after a rollover or a restart) and
    ``.tailingPostRollover``. The new state is saved as pending, together with a mark written in the
    same FlowFile-repository transaction as the FlowFiles, before each commit, so that after a crash
    the processor knows whether the FlowFiles were committed: every line is ingested exactly once
    across restarts and kills (as long as the node restarts within the repository's transfer-mark
    window, 24 hours).

    FlowFiles of the tailed file are named ``<name>.<first byte>-<end byte>.<extension>``; all carry
    ``mime.type`` text/plain, ``tailfile.original.path`` and a RECEIVE event whose transit URI is the
    file's ``file://`` URI. Paths go through the tenant's file confinement: a file or directory
    outside the tenant's roots is refused with a bulletin and nothing is read.
    """

    nifi_type = "org.apache.nifi.processors.standard.TailFile"
    tags = ("tail", "file", "log", "text", "source")
    properties = (MODE, FILES_TO_TAIL, ROLLING_FILENAME_PATTERN, POST_ROLLOVER_TAIL_PERIOD, BASE_DIRECTORY,
                  START_POSITION, STATE_LOCATION, RECURSIVE, LOOKUP_FREQUENCY, MAXIMUM_AGE, REREAD_ON_NUL,
                  LINE_START_PATTERN, PRE_ALLOCATED_BUFFER_SIZE, MAX_BUFFER_SIZE)
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.FORBIDDEN
    trigger_serially = True
    trigger_when_empty = True
    default_scheduling_period = "30 sec"
    restricted = ("read-filesystem",)
    migrated_properties = {
        "tail-base-directory": "Base Directory", "tail-mode": "Tailing Mode", "File to Tail": "Files to Tail",
        "File Location": "State Location", "tailfile-recursive-lookup": "Recursive Lookup",
        "tailfile-lookup-frequency": "Lookup Frequency", "tailfile-maximum-age": "Maximum Age",
        "reread-on-nul": "Reread on NUL Encountered", "pre-allocated-buffer-size": "Preallocated Buffer Size",
    }
    writes_attributes = (
        WrittenAttribute("tailfile.original.path", "The path of the tailed file the data comes from"),
        WrittenAttribute("filename", "'<name>.<first byte>-<end byte>.<extension>' of the tailed file, or the name "
                         "of the rolled-over file read"),
        WrittenAttribute("mime.type", "text/plain"),
    )
    stateful = ("Local (or cluster-wide with State Location Remote): for each tailed file, NiFi's file.<n>.* keys "
                "holding its path, position, checksum, timestamp and length")

    def validate(self, context):
        if context.property(MODE).value == MULTIPLE_FILES:
            base = context.property(BASE_DIRECTORY)
            directory = base.evaluate().value if base.is_set() else None
            if not directory:
                yield "'Base Directory' is required in Multiple files mode"
            elif not os.path.isdir(directory):
                yield f"'Base Directory' {directory} is not a directory"
            files = context.property(FILES_TO_TAIL)
            if files.is_set():
                try:
                    java_regex(files.evaluate().value)
                except ValueError as error:
                    yield f"'Files to Tail' is not a valid regular expression: {error}"

    def on_scheduled(self, context):
        self._confinement = context.confinement
        self._multiple = context.property(MODE).value == MULTIPLE_FILES
        self._files_to_tail = context.property(FILES_TO_TAIL).evaluate().value
        base = context.property(BASE_DIRECTORY)
        self._base = os.path.abspath(base.evaluate().value) if self._multiple and base.is_set() else None
        rolling = context.property(ROLLING_FILENAME_PATTERN).value
        self._rolling = rolling
        self._post_rollover_ms = int(context.property(POST_ROLLOVER_TAIL_PERIOD).as_duration() * 1000)
        self._start = context.property(START_POSITION).value
        self._scope = Scope.CLUSTER if context.property(STATE_LOCATION).value == "Remote" else Scope.LOCAL
        self._recursive = context.property(RECURSIVE).as_bool()
        self._lookup_every = context.property(LOOKUP_FREQUENCY).as_duration()
        self._max_age_ms = context.property(MAXIMUM_AGE).as_duration() * 1000
        self._reread_on_nul = context.property(REREAD_ON_NUL).as_bool()
        self._line_start = None if self._multiple else context.property(LINE_START_PATTERN).as_regex()
        self._max_buffer = context.property(MAX_BUFFER_SIZE).as_data_size() if self._line_start else 0
        self._mark = f"TailFile:{context.identifier}"
        self._tailed: dict[str, _Tailed] = {}
        self._recovered = False
        self._last_lookup = float("-inf")

    def on_stopped(self, context):
        for tailed in getattr(self, "_tailed", {}).values():
            _close(tailed)

    # -- the task ---------------------------------------------------------------------------

    def on_trigger(self, context, session):
        session.on_rollback(self._rolled_back)
        if not self._recovered:
            self._recover(context, session)
        elif self._multiple and context.clock.monotonic() - self._last_lookup >= self._lookup_every:
            self._update_files(context, self._list_files(context))
        if not self._tailed:
            context.yield_processor()
            return
        new_states: dict[str, TailState] = {}
        self._emitted = 0
        for path, tailed in self._tailed.items():
            try:
                new_states[path] = self._tail(context, session, path, tailed)
            except _Nul as nul:
                new_states[path] = nul.state
                context.logger.warning("NUL character encountered in %s and 'Reread on NUL Encountered' is true; "
                                       "yielding", path)
                context.yield_processor()
            except ConfinementError as error:
                new_states[path] = tailed.state
                context.logger.error("%s; yielding", context.refused(error))
                context.yield_processor()
            except OSError as error:
                context.yield_processor()
                raise ProcessException(f"could not read {path} or its rolled-over files: {error}; nothing of it "
                                       "was ingested, the processor will read it again") from error
        self._save(context, session, new_states)
        if not self._emitted:
            context.yield_processor()  # nothing new: leave the thread to others for a while

    def _tail(self, context, session, path: str, tailed: _Tailed) -> TailState:
        """Read what was written to ``path`` (and the files it rolled over to) since ``tailed.state``."""
        listed = self._rolled_files(path, 0 if tailed.fresh else tailed.state.timestamp)
        if tailed.fresh:
            state, rotated = self._initial(context, session, path, tailed, listed)
            tailed.fresh = False
        else:
            state, rotated, wait = self._rolled_over(context, session, path, tailed.state, listed)
            if wait:
                return state
        if rotated:
            _close(tailed)  # the state is the end of the last rolled-over file read; the tailed file is new
        elif tailed.fd is not None:
            status = os.fstat(tailed.fd)
            if status.st_size < state.position:
                return self._read(context, session, path, tailed.fd, state.restart(), path,  # truncated in place
                                  read_fully=False)
            if status.st_size > state.position or _identity(path) in (None, tailed.identity):
                return self._read(context, session, path, tailed.fd, state, path, read_fully=False)
            _close(tailed)  # renamed away and read to its end: the file now at the path is new
        if not self._open(path, tailed):
            return state
        if not rotated and state.position and crc_of(tailed.fd, state.position) == state.checksum:
            start = state
        elif self._rolled_again(path, state, {identity for _, identity in listed} | {tailed.identity}):
            # It rolled over again between the listing of the rolled-over files and this opening:
            # the next task reads the files in between first.
            _close(tailed)
            return state
        else:
            start = state.restart()  # it rolled over (while the processor was stopped, or just now)
        new = self._read(context, session, path, tailed.fd, start, path, read_fully=False)
        if rotated and new is start:
            # Nothing in the new file yet: the state keeps naming the end of the rolled-over file,
            # which the next task finds again; the file is opened afresh then.
            _close(tailed)
            return state
        return new

    def _rolled_again(self, path: str, state: TailState, known: set[tuple[int, int] | None]) -> bool:
        """Whether ``path`` rolled over, since ``state``, to a file that is not ``known`` (listed
        before, or the file just opened at ``path`` and renamed since)."""
        return any(identity not in known for _, identity in self._rolled_files(path, state.timestamp))

    def _initial(self, context, session, path: str, tailed: _Tailed,
                 rolled: list[tuple[str, tuple[int, int]]]) -> tuple[TailState, bool]:
        """Where reading starts in a file without state (Initial Start Position); ``rolled`` are
        all its rolled-over files."""
        state = tailed.state
        if self._start == BEGINNING_OF_TIME:
            for other, _ in rolled:
                state = self._read_rolled(context, session, path, other, state.restart(), read_fully=True)
            return state, bool(rolled)
        if self._start == CURRENT_TIME and self._open(path, tailed):
            status = os.fstat(tailed.fd)
            return TailState(path, status.st_size, _millis(status), status.st_size,
                             crc_of(tailed.fd, status.st_size)), False
        # Files rolled over before now are not read.
        return replace(state, timestamp=int(time.time() * 1000)), False

    def _rolled_over(self, context, session, path: str, state: TailState,
                     listed: list[tuple[str, tuple[int, int]]]) -> tuple[TailState, bool, bool]:
        """Read the files ``path`` rolled over to since ``state`` (``listed``): the rest of the one
        the state is in, then all of those rolled over after it. Returns the new state, whether a
        rollover happened, and whether the rolled-over file is still being written (Post-Rollover
        Tail Period)."""
        rolled = [other for other, _ in listed]
        if not rolled:
            return state, False, False
        current = None
        if state.position and state.checksum is not None:
            current = next((index for index, candidate in enumerate(rolled) if self._holds(candidate, state)), None)
            if current is None and self._holds(path, state):
                return state, False, False  # the files found are older: the tailed file did not roll over
        if current is not None:
            rolled = rolled[current:]
            quiet = _age_ms(rolled[0]) >= self._post_rollover_ms
            if self._post_rollover_ms and not quiet:
                state = self._read_rolled(context, session, path, rolled[0], state, read_fully=False)
                return replace(state, tailing_post_rollover=True), True, True
        else:
            state = state.restart()
        for index, other in enumerate(rolled):
            start = state if index == 0 and current is not None else state.restart()
            state = self._read_rolled(context, session, path, other, start, read_fully=True)
        return replace(state, tailing_post_rollover=False), True, False

    def _holds(self, candidate: str, state: TailState) -> bool:
        """Whether ``candidate`` starts with the ``state.position`` bytes read (by their checksum)."""
        try:
            fd = self._confinement.open(candidate, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            return crc_of(fd, state.position) == state.checksum
        finally:
            os.close(fd)

    def _read_rolled(self, context, session, path: str, rolled: str, state: TailState, *, read_fully: bool):
        """Read a rolled-over file from ``state.position``; the state then names its end, and its
        last-modified time (files rolled over before it are done)."""
        fd = self._confinement.open(rolled, os.O_RDONLY)
        try:
            status = os.fstat(fd)
            state = self._read(context, session, path, fd, state, rolled, read_fully=read_fully)
            if state.position == 0 and state.checksum is None:
                state = replace(state, checksum=0)
        finally:
            os.close(fd)
        return replace(state, timestamp=_millis(status), length=status.st_size)

    def _read(self, context, session, path: str, fd: int, state: TailState, source: str, *,
              read_fully: bool) -> TailState:
        """Make a FlowFile of what ``fd`` holds past ``state.position``; the state after it."""
        started = time.monotonic()
        status = os.fstat(fd)
        result = None

        def copy(out):
            nonlocal result
            result = read_lines(fd, state.position, state.checksum or 0, out, read_fully=read_fully,
                                stop_at_nul=self._reread_on_nul, line_start=self._line_start,
                                max_buffer=self._max_buffer)

        flowfile = session.write(session.create(), copy)
        if not result.written:
            session.remove(flowfile)
            new_state = state
        else:
            name = os.path.basename(source)
            if source == path:
                name = flowfile_name(name, state.position, result.end)
            flowfile = session.put_all_attributes(flowfile, {
                "filename": name, "mime.type": "text/plain", "tailfile.original.path": path})
            session.provenance.receive(
                flowfile, Path(source).as_uri(), details=f"FlowFile contains bytes {state.position} through "
                f"{result.end} of source file", duration=int((time.monotonic() - started) * 1000))
            session.transfer(flowfile, SUCCESS)
            self._emitted += 1
            new_state = replace(state, position=result.end, checksum=result.checksum, length=status.st_size,
                                timestamp=max(state.timestamp, _millis(status)))
        if result.nul:
            raise _Nul(new_state)
        return new_state

    # -- files and state --------------------------------------------------------------------

    def _open(self, path: str, tailed: _Tailed) -> bool:
        """Open the tailed file; False when it does not exist (yet)."""
        try:
            tailed.fd = self._confinement.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        status = os.fstat(tailed.fd)
        tailed.identity = (status.st_dev, status.st_ino)
        return True

    def _rolled_files(self, path: str, since: int) -> list[tuple[str, tuple[int, int]]]:
        """The rolled-over files of ``path`` modified at ``since`` (ms) or later, oldest first, each
        with its identity (device and inode)."""
        if not self._rolling:
            return []
        directory, name = os.path.split(path)
        pattern = glob_regex(self._rolling.replace("${filename}", name.rpartition(".")[0] or name))
        directory = self._confinement.check_path(directory or ".")
        found = []
        try:
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            return []
        for entry in entries:
            if entry.name == name or not pattern.match(entry.name) or not self._confinement.allows(entry.path):
                continue
            try:
                if entry.is_file() and _millis(status := entry.stat()) >= since:
                    found.append((_millis(status), entry.name, entry.path, (status.st_dev, status.st_ino)))
            except FileNotFoundError:
                continue
        return [(entry_path, identity) for _, _, entry_path, identity in sorted(found)]

    def _list_files(self, context) -> list[str]:
        """The files to tail now."""
        self._last_lookup = context.clock.monotonic()
        if not self._multiple:
            return [os.path.abspath(self._files_to_tail)]
        pattern = java_regex(self._base.rstrip("/") + "/" + self._files_to_tail)
        now = time.time() * 1000
        found = []
        try:
            self._confinement.check_path(self._base)
        except ConfinementError as error:
            context.logger.error("%s", context.refused(error))
            return []
        for directory, subdirectories, names in os.walk(self._base):
            if not self._recursive:
                subdirectories.clear()
            subdirectories[:] = [d for d in subdirectories if self._confinement.allows(os.path.join(directory, d))]
            for name in names:
                path = os.path.join(directory, name)
                try:
                    if pattern.fullmatch(path) and now - _millis(os.stat(path)) < self._max_age_ms \
                            and self._confinement.allows(path):
                        found.append(path)
                except FileNotFoundError:
                    continue
        return sorted(found)

    def _recover(self, context, session) -> None:
        """Load the stored state (settling a commit a crash interrupted) and list the files."""
        stored = dict(context.state.get_state(self._scope).values)
        mark = stored.pop(PENDING_MARK, None)
        pending = stored.pop(PENDING_STATE, None)
        if mark is not None and pending is not None:
            committed = session.committed_mark(self._mark)
            if committed is not None and committed >= int(mark):
                stored = json.loads(pending)
        self._stored = stored
        self._tailed = {}
        self._update_files(context, self._list_files(context))
        self._recovered = True

    def _update_files(self, context, paths: list[str]) -> None:
        """Tail ``paths``: keep the files already tailed, take the stored state of the others."""
        for path in set(self._tailed) - set(paths):
            _close(self._tailed.pop(path))
        indexes = state_indexes(self._stored)
        used = {tailed.index for tailed in self._tailed.values()} | set(indexes.values())
        for path in paths:
            if path in self._tailed:
                continue
            index = indexes.get(path)
            state = TailState.from_state(self._stored, index) if index is not None else None
            if state is None:
                index = max(used, default=-1) + 1
                used.add(index)
                self._tailed[path] = _Tailed(index, TailState(path), fresh=True)
            else:
                self._tailed[path] = _Tailed(index, state)

    def _save(self, context, session, new_states: dict[str, TailState]) -> None:
        """Store the states the session's commit makes: as pending, with a mark in the commit,
        before it; for good after it."""
        values = {}
        for path, tailed in self._tailed.items():
            values.update(new_states.get(path, tailed.state).to_state(tailed.index))
        if values == self._stored:
            return
        previous = self._stored
        at = max(int(time.time() * 1000), (session.committed_mark(self._mark) or 0) + 1)
        try:
            context.state.set_state({**previous, PENDING_MARK: str(at), PENDING_STATE: json.dumps(values)},
                                    self._scope)
        except Exception as error:
            self._recovered = False
            raise ProcessException(f"could not save the tailing position ({error}); nothing was ingested, the "
                                   "processor will try again") from error
        session.commit_mark(self._mark, at)
        session.on_commit(lambda: self._committed(context, new_states, values))

    def _committed(self, context, new_states: dict[str, TailState], values: dict[str, str]) -> None:
        for path, state in new_states.items():
            if path in self._tailed:
                self._tailed[path].state = state
        self._stored = values
        try:
            context.state.set_state(values, self._scope)
        except Exception as error:  # noqa: BLE001 - the pending state and the commit's mark still say it
            context.logger.warning("could not store the tailing position (%s); it stays pending and is "
                                   "settled at the next start", error)

    def _rolled_back(self) -> None:
        """Forget what is in memory; the next task starts from the stored state."""
        for tailed in self._tailed.values():
            _close(tailed)
        self._recovered = False


class _Nul(Exception):
    """A NUL byte stopped the reading (Reread on NUL Encountered); ``state`` is what was read before it."""

    def __init__(self, state: TailState) -> None:
        super().__init__("NUL character encountered")
        self.state = state


def _close(tailed: _Tailed) -> None:
    if tailed.fd is not None:
        os.close(tailed.fd)
        tailed.fd, tailed.identity = None, None


def _identity(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_dev, status.st_ino


def _millis(status: os.stat_result) -> int:
    return status.st_mtime_ns // 1_000_000


def _age_ms(path: str) -> float:
    try:
        return time.time() * 1000 - _millis(os.stat(path))
    except FileNotFoundError:
        return float("inf")
