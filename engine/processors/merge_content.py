"""MergeContent: merges groups of FlowFiles into one FlowFile (concatenation, TAR, ZIP or FlowFile Stream v3)."""

from __future__ import annotations

import os
import shutil
import struct
import tarfile
import time
import zipfile
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, BinaryIO

from engine.components import (
    AllowableValue,
    ExpressionScope,
    InputRequirement,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.confinement import ConfinementError
from engine.expression import ExpressionError
from engine.processors._bins import (
    FRAGMENT_COUNT,
    FRAGMENT_ID,
    FRAGMENT_INDEX,
    UNBOUNDED,
    Bin,
    BinningProcessor,
    Member,
    Thresholds,
    defragment_problem,
    keep_common,
    keep_first,
    keep_unique,
    roll_back,
)
from engine.session.session import TaskTerminatedError
from engine.units import parse_duration

if TYPE_CHECKING:
    from engine.flowfile import FlowFile
    from engine.session import ProcessSession

BIN_PACKING = "Bin-Packing Algorithm"
DEFRAGMENT = "Defragment"

FORMAT_TAR = "TAR"
FORMAT_ZIP = "ZIP"
FORMAT_FLOWFILE_STREAM_V3 = "FlowFile Stream, v3"
FORMAT_CONCAT = "Binary Concatenation"

DELIMITERS_NONE = "Do Not Use Delimiters"
DELIMITERS_FILENAME = "Filename"
DELIMITERS_TEXT = "Text"

KEEP_COMMON = "Keep Only Common Attributes"
KEEP_UNIQUE = "Keep All Unique Attributes"
KEEP_FIRST = "Keep First Attributes"

SEGMENT_ORIGINAL_FILENAME = "segment.original.filename"
TAR_PERMISSIONS = "tar.permissions"
MERGE_COUNT = "merge.count"
MERGE_BIN_AGE = "merge.bin.age"
MERGE_UUID = "merge.uuid"
MERGE_REASON = "merge.reason"


def _present(value: str, context) -> str | None:
    """Any value but the empty string (a lone newline is a fine demarcator)."""
    return None if value else "must not be empty"


def _bin_age(value: str, context) -> str | None:
    try:
        seconds = parse_duration(value)
    except ValueError as error:
        return str(error)
    return None if seconds >= 1 else "must be at least 1 sec"


_IS_BIN_PACKING = PropertyDependency("Merge Strategy", (BIN_PACKING,))
_IS_CONCAT = PropertyDependency("Merge Format", (FORMAT_CONCAT,))
_HAS_DELIMITERS = PropertyDependency("Delimiter Strategy", (DELIMITERS_FILENAME, DELIMITERS_TEXT))

MERGE_STRATEGY = PropertyDescriptor(
    "Merge Strategy", description="How FlowFiles are grouped: 'Bin-Packing Algorithm' fills bins with whatever "
    "FlowFiles arrive (per correlation value) up to the thresholds below; 'Defragment' puts back together the "
    "fragments of one FlowFile, grouped by fragment.identifier and ordered by fragment.index.",
    required=True, default=BIN_PACKING, allowed_values=[
        AllowableValue(BIN_PACKING, description="Bins are filled with FlowFiles as they come, up to the size and "
                       "entry thresholds, optionally per value of the correlation attribute"),
        AllowableValue(DEFRAGMENT, description="The fragments sharing a fragment.identifier are merged once all "
                       "fragment.count of them have arrived, in fragment.index order"),
    ])
MERGE_FORMAT = PropertyDescriptor(
    "Merge Format", description="The format of the merged content.", required=True, default=FORMAT_CONCAT,
    allowed_values=[
        AllowableValue(FORMAT_TAR, description="A TAR archive with one entry per FlowFile, named after its filename "
                       "(and path, with Keep Path); a tar.permissions attribute of three octal digits sets the "
                       "entry's mode"),
        AllowableValue(FORMAT_ZIP, description="A ZIP archive with one entry per FlowFile, named after its filename "
                       "(and path, with Keep Path), deflated at the Compression Level"),
        AllowableValue(FORMAT_FLOWFILE_STREAM_V3, description="NiFi's FlowFile Stream version 3: each FlowFile's "
                       "attributes and content, one after the other"),
        AllowableValue(FORMAT_CONCAT, description="The contents one after the other, with the optional header, "
                       "demarcator and footer"),
    ])
ATTRIBUTE_STRATEGY = PropertyDescriptor(
    "Attribute Strategy", description="Which attributes of the merged FlowFiles the merged FlowFile gets.",
    required=True, default=KEEP_COMMON, allowed_values=[
        AllowableValue(KEEP_COMMON, description="Only the attributes every FlowFile has, with the same value"),
        AllowableValue(KEEP_UNIQUE, description="Every attribute whose FlowFiles do not disagree on its value (a "
                       "FlowFile without the attribute does not disagree)"),
        AllowableValue(KEEP_FIRST, description="For each attribute, the value of the first FlowFile that has it"),
    ])
CORRELATION_ATTRIBUTE = PropertyDescriptor(
    "Correlation Attribute Name", description="The attribute whose value groups FlowFiles: only FlowFiles with "
    "the same value share a bin. Unset, FlowFiles are binned in the order they are taken from the queue.",
    validators=[v.ATTRIBUTE_NAME], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    depends_on=[_IS_BIN_PACKING])
METADATA_STRATEGY = PropertyDescriptor(
    "mergecontent-metadata-strategy", display_name="Metadata Strategy", description="How embedded metadata of "
    "formats that have it (Avro) is merged. Flowsite has no Avro merge format, so this property never applies; "
    "it is accepted so that NiFi flows load unchanged.", required=True, default="Do Not Merge Uncommon Metadata",
    allowed_values=["Use First Metadata", "Keep Only Common Metadata", "Do Not Merge Uncommon Metadata",
                    "Ignore Metadata"],
    depends_on=[PropertyDependency("Merge Format", ("Avro",))])
MIN_ENTRIES = PropertyDescriptor(
    "Minimum Number of Entries", description="The fewest FlowFiles a bin may be merged with (unless it reaches "
    "the Max Bin Age).", required=True, default="1", validators=[v.POSITIVE_INTEGER], depends_on=[_IS_BIN_PACKING])
MAX_ENTRIES = PropertyDescriptor(
    "Maximum Number of Entries", description="The most FlowFiles one bin holds; a full bin is merged at once.",
    required=True, default="1000", validators=[v.POSITIVE_INTEGER], depends_on=[_IS_BIN_PACKING])
MIN_SIZE = PropertyDescriptor(
    "Minimum Group Size", description="The least content a bin may be merged with (unless it reaches the Max "
    "Bin Age).", required=True, default="0 B", validators=[v.DATA_SIZE], depends_on=[_IS_BIN_PACKING])
MAX_SIZE = PropertyDescriptor(
    "Maximum Group Size", description="The most content one bin holds (no limit when unset). A FlowFile larger "
    "than this is merged on its own.", validators=[v.DATA_SIZE], depends_on=[_IS_BIN_PACKING])
MAX_BIN_AGE = PropertyDescriptor(
    "Max Bin Age", description="How long a bin may wait for more FlowFiles (at least 1 sec): older bins are "
    "merged whatever their size, and incomplete Defragment bins go to failure. Unset, bins wait indefinitely.",
    validators=[_bin_age])
MAX_BINS = PropertyDescriptor(
    "Maximum number of Bins", description="The most bins kept open at once; when a FlowFile needs one more, the "
    "oldest bin is merged (or, defragmenting, failed) to make room.", required=True, default="5",
    validators=[v.POSITIVE_INTEGER])
DELIMITER_STRATEGY = PropertyDescriptor(
    "Delimiter Strategy", description="Where the Header, Footer and Demarcator come from: the content of the "
    "files they name ('Filename'), their own text ('Text'), or nowhere.", required=True, default=DELIMITERS_NONE,
    allowed_values=[DELIMITERS_NONE, DELIMITERS_FILENAME, DELIMITERS_TEXT], depends_on=[_IS_CONCAT])
HEADER = PropertyDescriptor(
    "Header File", display_name="Header", description="Written before the merged contents: text, or the name of "
    "a file holding it (an expression over the first FlowFile's attributes).", validators=[_present],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES, depends_on=[_HAS_DELIMITERS, _IS_CONCAT])
FOOTER = PropertyDescriptor(
    "Footer File", display_name="Footer", description="Written after the merged contents: text, or the name of "
    "a file holding it (an expression over the first FlowFile's attributes).", validators=[_present],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES, depends_on=[_HAS_DELIMITERS, _IS_CONCAT])
DEMARCATOR = PropertyDescriptor(
    "Demarcator File", display_name="Demarcator", description="Written between two merged contents: text, or "
    "the name of a file holding it (an expression over the first FlowFile's attributes).", validators=[_present],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES, depends_on=[_HAS_DELIMITERS, _IS_CONCAT])
COMPRESSION_LEVEL = PropertyDescriptor(
    "Compression Level", description="The deflate level of ZIP entries (0: stored uncompressed in deflate "
    "blocks, 9: smallest).", required=True, default="1", allowed_values=[str(level) for level in range(10)],
    depends_on=[PropertyDependency("Merge Format", (FORMAT_ZIP,))])
KEEP_PATH = PropertyDescriptor(
    "Keep Path", description="Whether TAR and ZIP entry names start with the FlowFile's path attribute.",
    required=True, default="false", allowed_values=["true", "false"],
    depends_on=[PropertyDependency("Merge Format", (FORMAT_TAR, FORMAT_ZIP))])
TAR_MODIFIED_TIME = PropertyDescriptor(
    "Tar Modified Time", description="The modification time of each TAR entry, in ISO 8601 with an offset "
    "(2024-05-01T10:00:00Z, 2024-05-01T10:00:00+0200); an expression over the FlowFile's attributes. A value "
    "that is empty or not such a time leaves the merge time.", default="${file.lastModifiedTime}",
    validators=[v.NON_EMPTY], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    depends_on=[PropertyDependency("Merge Format", (FORMAT_TAR,))])

MERGED = Relationship("merged", "The FlowFile holding the merged content")
ORIGINAL = Relationship("original", "The FlowFiles that were merged, each with merge.uuid naming the merged one")
FAILURE = Relationship("failure", "FlowFiles that could not be merged: incomplete or inconsistent fragments, "
                       "unreadable content, duplicate ZIP entry names")

_COPY_CHUNK = 1 << 20
_MIME_TYPES = {FORMAT_TAR: "application/tar", FORMAT_ZIP: "application/zip",
               FORMAT_FLOWFILE_STREAM_V3: "application/flowfile-v3"}
_EXTENSIONS = {FORMAT_TAR: ".tar", FORMAT_ZIP: ".zip", FORMAT_FLOWFILE_STREAM_V3: ".pkg", FORMAT_CONCAT: ""}
_FLOWFILE_V3_MAGIC = b"NiFiFF3"


class MergeContent(BinningProcessor):
    """Merges groups of FlowFiles into one FlowFile: their contents concatenated (with an optional
    header, demarcator and footer), or packed as a TAR or ZIP archive or a NiFi FlowFile Stream
    (version 3). Groups are either bins filled up to size and count thresholds, optionally one per
    value of a correlation attribute (Bin-Packing Algorithm), or the fragments of one FlowFile put
    back together in order (Defragment).

    A bin is merged once it is full (Maximum Number of Entries or Maximum Group Size reached);
    when the queue runs dry, every bin that reached the minimums is merged; a bin older than Max
    Bin Age is merged whatever its size; and when a FlowFile needs a bin beyond Maximum number of
    Bins, the oldest bin is merged to make room. merge.reason tells which happened. A Defragment
    bin is complete when it holds fragment.count fragments with distinct fragment.index values; one
    that ages out (or is evicted) incomplete, or whose fragments disagree, goes to failure whole.

    FlowFiles waiting in a bin stay in a session of the bin's own that is committed only when the
    bin is merged: the merged FlowFile (a JOIN provenance event names every original as a parent)
    goes to merged and the originals, with merge.uuid, to original in one commit (a bin of a single
    FlowFile records a FORK instead). Stopping the processor rolls the open bins back, so their
    FlowFiles return to the input queue; after a crash they are there too. The processor is
    triggered even when no FlowFile waits, so that aged bins are merged on time; with nothing to do
    it yields, so bin ages are checked about once per yield duration.

    Contents are copied through streams; a bin of any size is merged without being held in
    memory. The merged FlowFile's mime.type is application/tar, application/zip or
    application/flowfile-v3; a concatenation keeps the mime.type its FlowFiles share, else
    application/octet-stream. Its filename is that of a lone FlowFile, else the first FlowFile's
    segment.original.filename, else a number, with .tar, .zip or .pkg appended per format. In ZIP
    archives a second FlowFile with an entry name already used is left out (a clone of it goes to
    failure). tar.permissions is read as an octal mode. The FlowFile Stream v2, FlowFile Tar v1
    and Avro formats of NiFi are not offered.
    """

    nifi_type = "org.apache.nifi.processors.standard.MergeContent"
    nifi_bundle = {"group": "org.apache.nifi", "artifact": "nifi-standard-nar"}
    tags = ("merge", "content", "correlation", "tar", "zip", "stream", "concatenation", "archive",
            "flowfile-stream", "flowfile-stream-v3")
    properties = (MERGE_STRATEGY, MERGE_FORMAT, ATTRIBUTE_STRATEGY, CORRELATION_ATTRIBUTE, METADATA_STRATEGY,
                  MIN_ENTRIES, MAX_ENTRIES, MIN_SIZE, MAX_SIZE, MAX_BIN_AGE, MAX_BINS, DELIMITER_STRATEGY, HEADER,
                  FOOTER, DEMARCATOR, COMPRESSION_LEVEL, KEEP_PATH, TAR_MODIFIED_TIME)
    relationships = (ORIGINAL, FAILURE, MERGED)
    input_requirement = InputRequirement.REQUIRED
    trigger_when_empty = True
    reads_attributes = (
        WrittenAttribute(FRAGMENT_ID, "Defragment: the FlowFiles to merge together"),
        WrittenAttribute(FRAGMENT_INDEX, "Defragment: the fragment's place, an integer unique in its group"),
        WrittenAttribute(FRAGMENT_COUNT, "Defragment: how many fragments the group has"),
        WrittenAttribute(SEGMENT_ORIGINAL_FILENAME, "The merged FlowFile's filename"),
        WrittenAttribute(TAR_PERMISSIONS, "TAR: the entry's mode, three octal digits"),
    )
    writes_attributes = (
        WrittenAttribute("filename", "The merged FlowFile's name (see above)"),
        WrittenAttribute("mime.type", "The merged content's type"),
        WrittenAttribute(MERGE_COUNT, "How many FlowFiles were merged"),
        WrittenAttribute(MERGE_BIN_AGE, "How long the bin waited, in milliseconds"),
        WrittenAttribute(MERGE_UUID, "On each original: the uuid of the merged FlowFile"),
        WrittenAttribute(MERGE_REASON, "Why the bin was merged: MAX_BYTES_THRESHOLD_REACHED, "
                         "MAX_ENTRIES_THRESHOLD_REACHED, MIN_THRESHOLDS_REACHED, TIMEOUT, BIN_MANAGER_FULL or "
                         "UNSET (a FlowFile merged alone because it fits no bin)"),
    )
    see_also = ("SegmentContent", "MergeRecord", "UnpackContent")

    def validate(self, context):
        if context.property(MERGE_STRATEGY).value == BIN_PACKING:
            max_size = context.property(MAX_SIZE).as_data_size()
            if max_size is not None and context.property(MIN_SIZE).as_data_size() > max_size:
                yield "'Minimum Group Size' must not be larger than 'Maximum Group Size'"
            if context.property(MIN_ENTRIES).as_int() > context.property(MAX_ENTRIES).as_int():
                yield "'Minimum Number of Entries' must not be larger than 'Maximum Number of Entries'"
        if (context.property(MERGE_FORMAT).value == FORMAT_CONCAT
                and context.property(DELIMITER_STRATEGY).value == DELIMITERS_FILENAME):
            for descriptor in (HEADER, FOOTER, DEMARCATOR):
                value = context.property(descriptor).value
                if value is None or "${" in value:
                    continue
                if not context.confinement.allows(value):
                    yield f"'{descriptor.name}' names {value!r}, which this component may not read"
                elif not Path(value).is_file():
                    yield f"'{descriptor.name}' names {value!r}, which is not an existing file"

    def on_scheduled(self, context):
        defragment = context.property(MERGE_STRATEGY).value == DEFRAGMENT
        self._format = context.property(MERGE_FORMAT).value
        self._attribute_strategy = _ATTRIBUTE_STRATEGIES[context.property(ATTRIBUTE_STRATEGY).value]
        self._correlation = None if defragment else context.property(CORRELATION_ATTRIBUTE)
        if self._correlation is not None and not self._correlation.is_set():
            self._correlation = None
        if defragment:
            thresholds = UNBOUNDED
        else:
            max_size = context.property(MAX_SIZE).as_data_size()
            thresholds = Thresholds(context.property(MIN_SIZE).as_data_size(),
                                    float("inf") if max_size is None else max_size,
                                    context.property(MIN_ENTRIES).as_int(), context.property(MAX_ENTRIES).as_int())
        self._delimiters = context.property(DELIMITER_STRATEGY).value if self._format == FORMAT_CONCAT else None
        self._compression_level = int(context.property(COMPRESSION_LEVEL).value)
        self._keep_path = context.property(KEEP_PATH).as_bool()
        self._tar_modified_time = context.property(TAR_MODIFIED_TIME)
        self.configure_bins(thresholds, context.property(MAX_BIN_AGE).as_duration(),
                            context.property(MAX_BINS).as_int(), defragment=defragment)

    # -- binning --------------------------------------------------------------------------

    def members(self, context, session, flowfiles):
        members = []
        for flowfile in flowfiles:
            try:
                group = self._group_of(flowfile)
            except ExpressionError as error:
                context.logger.error("cannot tell which bin %s belongs to: %s; routing to failure",
                                     flowfile.uuid, error)
                session.transfer(flowfile, FAILURE)
                continue
            members.append(Member(flowfile, group))
        return members

    def _group_of(self, flowfile: FlowFile) -> str | None:
        if self._correlation is not None:
            name = self._correlation.evaluate(flowfile).value
            return flowfile.attributes.get(name) if name else None
        if self._defragment:
            return flowfile.attributes.get(FRAGMENT_ID)
        return None

    # -- merging one bin ------------------------------------------------------------------

    def merge_bin(self, context, bin_: Bin) -> None:
        session = bin_.session
        contents = bin_.contents
        try:
            if self._defragment:
                problem = defragment_problem(contents)
                if problem is not None:
                    context.logger.error("%s; routing %d FlowFile(s) to failure", problem, len(contents))
                    self._fail(session, contents)
                    return
                contents.sort(key=lambda flowfile: int(flowfile.attributes[FRAGMENT_INDEX]))
            try:
                bundle, unmerged = self._merge(context, bin_, contents)
            except Exception as error:
                reason = (context.refused(error) if isinstance(error, ConfinementError)
                          else f"{type(error).__name__}: {error}")
                context.logger.error("failed to merge %d FlowFile(s): %s; routing them to failure", len(contents),
                                     reason)
                self._fail(session, contents)
                return
            session.transfer(bundle, MERGED)
            for flowfile in unmerged:
                session.transfer(session.clone(flowfile), FAILURE)
            for flowfile in contents:
                session.transfer(session.put_attribute(flowfile, MERGE_UUID, bundle.uuid), ORIGINAL)
            session.commit()
            context.logger.info("merged %d FlowFile(s) into %s (%s)", len(contents), bundle.uuid, bin_.reason)
        except TaskTerminatedError:
            return
        except Exception as error:
            context.logger.error("failed to merge a bin of %d FlowFile(s): %s: %s; rolling it back",
                                 len(contents), type(error).__name__, error)
            roll_back(session, context)

    @staticmethod
    def _fail(session: ProcessSession, contents: Sequence[FlowFile]) -> None:
        for flowfile in contents:
            session.transfer(flowfile, FAILURE)
        session.commit()

    def _merge(self, context, bin_: Bin, contents: list[FlowFile]) -> tuple[FlowFile, list[FlowFile]]:
        """Write the merged FlowFile (attributes included); returns it and the FlowFiles left out of it."""
        session = bin_.session
        unmerged: list[FlowFile] = []
        mime_type = _MIME_TYPES.get(self._format)
        if self._format == FORMAT_CONCAT:
            writer = self._concatenation(context, session, contents)
            mime_types = {flowfile.attributes.get("mime.type") for flowfile in contents}
            mime_type = mime_types.pop() if len(mime_types) == 1 else None
            mime_type = mime_type or "application/octet-stream"
        elif self._format == FORMAT_TAR:
            writer = self._tar(context, session, contents)
        elif self._format == FORMAT_ZIP:
            writer = self._zip(context, session, contents, unmerged)
        else:
            writer = self._flowfile_stream(session, contents)
        bundle = session.create(contents)
        try:
            bundle = session.write(bundle, writer)
        except BaseException:
            session.remove(bundle)
            raise
        attributes = self._attribute_strategy(contents)
        attributes.update({
            "filename": _merged_filename(contents) + _EXTENSIONS[self._format],
            "mime.type": mime_type,
            MERGE_COUNT: str(len(contents)),
            MERGE_BIN_AGE: str(int((context.clock.monotonic() - bin_.created) * 1000)),
            MERGE_REASON: bin_.reason,
        })
        return session.put_all_attributes(bundle, attributes), unmerged

    def _concatenation(self, context, session, contents) -> Callable[[BinaryIO], None]:
        header = self._delimiter(HEADER, context, contents[0])
        demarcator = self._delimiter(DEMARCATOR, context, contents[0])
        footer = self._delimiter(FOOTER, context, contents[0])

        def write(out: BinaryIO) -> None:
            if header:
                out.write(header)
            for position, flowfile in enumerate(contents):
                if position and demarcator:
                    out.write(demarcator)
                with session.read(flowfile) as source:
                    shutil.copyfileobj(source, out, _COPY_CHUNK)
            if footer:
                out.write(footer)

        return write

    def _delimiter(self, descriptor: PropertyDescriptor, context, first: FlowFile) -> bytes | None:
        if self._delimiters not in (DELIMITERS_TEXT, DELIMITERS_FILENAME):
            return None
        value = context.property(descriptor).evaluate(first).value
        if value is None:
            return None
        if self._delimiters == DELIMITERS_TEXT:
            return value.encode("utf-8")
        with open(context.confinement.open(value, os.O_RDONLY), "rb") as source:
            return source.read()

    def _tar(self, context, session, contents) -> Callable[[BinaryIO], None]:
        def write(out: BinaryIO) -> None:
            now = time.time()
            with tarfile.open(fileobj=_Sink(out), mode="w|", format=tarfile.GNU_FORMAT) as archive:
                for flowfile in contents:
                    entry = tarfile.TarInfo(self._entry_name(flowfile))
                    entry.size = flowfile.size
                    entry.mode = _tar_mode(flowfile.attributes.get(TAR_PERMISSIONS))
                    entry.mtime = self._tar_mtime(context, flowfile, now)
                    with session.read(flowfile) as source:
                        archive.addfile(entry, source)

        return write

    def _tar_mtime(self, context, flowfile: FlowFile, default: float) -> float:
        try:
            value = self._tar_modified_time.evaluate(flowfile).value
        except ExpressionError as error:
            context.logger.debug("Tar Modified Time failed for %s: %s; using the current time", flowfile.uuid, error)
            return default
        if not value or not value.strip():
            return default
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            context.logger.debug("Tar Modified Time of %s is %r, not an ISO 8601 time with an offset; using "
                                 "the current time", flowfile.uuid, value)
            return default
        return moment.timestamp()

    def _zip(self, context, session, contents, unmerged: list[FlowFile]) -> Callable[[BinaryIO], None]:
        level = self._compression_level

        def write(out: BinaryIO) -> None:
            unmerged.clear()
            names: set[str] = set()
            stamp = time.localtime()[:6]
            with zipfile.ZipFile(_Sink(out), "w", compression=zipfile.ZIP_DEFLATED, compresslevel=level) as archive:
                for flowfile in contents:
                    name = self._entry_name(flowfile)
                    if name in names:
                        context.logger.error("cannot add %s to the ZIP archive: an entry named %r is already in it",
                                             flowfile.uuid, name)
                        unmerged.append(flowfile)
                        continue
                    names.add(name)
                    entry = zipfile.ZipInfo(name, date_time=stamp)
                    entry.compress_type = zipfile.ZIP_DEFLATED
                    entry._compresslevel = level  # ZipFile.open takes the level from the entry
                    entry.file_size = flowfile.size
                    with session.read(flowfile) as source, \
                            archive.open(entry, "w", force_zip64=flowfile.size >= zipfile.ZIP64_LIMIT) as target:
                        shutil.copyfileobj(source, target, _COPY_CHUNK)

        return write

    def _flowfile_stream(self, session, contents) -> Callable[[BinaryIO], None]:
        def write(out: BinaryIO) -> None:
            for flowfile in contents:
                header = bytearray(_FLOWFILE_V3_MAGIC)
                attributes = flowfile.attributes
                header += _field_length(len(attributes))
                for key, value in attributes.items():
                    for text in (key, value or ""):
                        encoded = text.encode("utf-8")
                        header += _field_length(len(encoded))
                        header += encoded
                header += struct.pack(">q", flowfile.size)
                out.write(header)
                with session.read(flowfile) as source:
                    shutil.copyfileobj(source, out, _COPY_CHUNK)

        return write

    def _entry_name(self, flowfile: FlowFile) -> str:
        filename = flowfile.attributes.get("filename", flowfile.uuid)
        if not self._keep_path:
            return filename
        path = str(PurePosixPath(flowfile.attributes.get("path", "")))
        return filename if path in (".", "/", "") else f"{path}/{filename}"


class _Sink:
    """A write-only file object over a content stream, for archive writers (no seek, no tell)."""

    def __init__(self, target: BinaryIO) -> None:
        self._target = target

    def write(self, data) -> int:
        return self._target.write(data)

    def flush(self) -> None:
        """Nothing to flush: the content writer buffers on its own."""


def _field_length(length: int) -> bytes:
    """A FlowFile Stream v3 length: two bytes, or 0xFFFF and four bytes for 65535 and more."""
    return struct.pack(">H", length) if length < 0xFFFF else b"\xff\xff" + struct.pack(">I", length)


def _tar_mode(permissions: str | None) -> int:
    if permissions and len(permissions) == 3 and all(digit in "01234567" for digit in permissions):
        return int(permissions, 8)
    return 0o644


def _merged_filename(contents: Sequence[FlowFile]) -> str:
    if len(contents) == 1:
        return contents[0].attributes.get("filename", contents[0].uuid)
    return contents[0].attributes.get(SEGMENT_ORIGINAL_FILENAME) or str(time.time_ns())


_ATTRIBUTE_STRATEGIES = {KEEP_COMMON: keep_common, KEEP_UNIQUE: keep_unique, KEEP_FIRST: keep_first}
