"""CompressContent: compresses or decompresses FlowFile content (gzip, deflate, bzip2, xz, lzma, zstd, brotli, lz4)."""

from __future__ import annotations

import bz2
import lzma
import time
import zlib
from collections.abc import Callable, Iterator
from typing import BinaryIO

import brotli
import lz4.frame
import zstandard

from engine.components import (
    InputRequirement,
    Processor,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)

MODE_COMPRESS = "compress"
MODE_DECOMPRESS = "decompress"
USE_MIME_TYPE = "use mime.type attribute"

MODE = PropertyDescriptor(
    "Mode", description="Whether content is compressed or decompressed.", required=True, default=MODE_COMPRESS,
    allowed_values=[MODE_COMPRESS, MODE_DECOMPRESS])
COMPRESSION_FORMAT = PropertyDescriptor(
    "Compression Format", description="The compression format; 'use mime.type attribute' takes it from each "
    "FlowFile's mime.type (a FlowFile without one goes to failure, one whose type is no compression format "
    "passes to success untouched).", required=True, default=USE_MIME_TYPE,
    allowed_values=[USE_MIME_TYPE, "gzip", "deflate", "bzip2", "xz-lzma2", "lzma", "lz4-framed", "zstd", "brotli"])
COMPRESSION_LEVEL = PropertyDescriptor(
    "Compression Level", description="How hard to compress, 0 (fastest) to 9 (smallest): the level of gzip and "
    "deflate, the preset of xz-lzma2, the quality of brotli; zstd uses twice the value (0 meaning zstd's default "
    "level).", required=True, default="1", allowed_values=[str(level) for level in range(10)],
    depends_on=[PropertyDependency("Compression Format", (USE_MIME_TYPE, "gzip", "deflate", "xz-lzma2", "zstd",
                                                          "brotli")),
                PropertyDependency("Mode", (MODE_COMPRESS,))])
UPDATE_FILENAME = PropertyDescriptor(
    "Update Filename", description="Whether compressing appends the format's extension to the filename (.gz, "
    ".zlib, .bz2, .xz, .lzma, .lz4, .zst, .br) and decompressing removes it (when the filename ends with it).",
    required=True, default="false", allowed_values=["true", "false"])

SUCCESS = Relationship("success", "FlowFiles compressed or decompressed (and those whose mime.type names no "
                       "compression format, untouched)")
FAILURE = Relationship("failure", "FlowFiles that could not be processed (corrupt or truncated compressed "
                       "content, no mime.type); they are penalized")

_BATCH = 50
_READ_CHUNK = 1 << 16
_OUTPUT_LIMIT = 1 << 20
_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE = 0x184D2A50


class CorruptContentError(Exception):
    """The content is not valid data of the compression format."""


class _Decoder:
    """A streaming decompressor of one compressed stream (member, frame): ``feed`` yields the output
    in bounded pieces; once ``finished``, ``leftover`` holds the input that followed the stream."""

    finished = False
    leftover = b""

    def feed(self, data: bytes) -> Iterator[bytes]:
        raise NotImplementedError


class _ZlibDecoder(_Decoder):
    def __init__(self, wbits: int) -> None:
        self._decoder = zlib.decompressobj(wbits)

    def feed(self, data):
        decoder = self._decoder
        while True:
            piece = decoder.decompress(data, _OUTPUT_LIMIT)
            if piece:
                yield piece
            data = decoder.unconsumed_tail
            if decoder.eof:
                self.finished, self.leftover = True, decoder.unused_data
                return
            if not data and len(piece) < _OUTPUT_LIMIT:
                return


class _BoundedDecoder(_Decoder):
    """For decompressors with ``decompress(data, max_length)``, ``needs_input``, ``eof`` and
    ``unused_data`` (bz2, lzma, lz4)."""

    def __init__(self, decoder) -> None:
        self._decoder = decoder

    def feed(self, data):
        decoder = self._decoder
        while True:
            piece = decoder.decompress(data, _OUTPUT_LIMIT)
            if piece:
                yield piece
            data = b""
            if decoder.eof:
                self.finished, self.leftover = True, decoder.unused_data or b""
                return
            if decoder.needs_input:
                return


class _BrotliDecoder(_Decoder):
    def __init__(self) -> None:
        self._decoder = brotli.Decompressor()

    def feed(self, data):
        decoder = self._decoder
        yield decoder.process(data, output_buffer_limit=_OUTPUT_LIMIT)
        while not decoder.can_accept_more_data():
            yield decoder.process(b"", output_buffer_limit=_OUTPUT_LIMIT)
        self.finished = decoder.is_finished()


class _Format:
    """One compression format: its extension, mime.type, and streaming coders."""

    def __init__(self, name: str, extension: str, mime_type: str, compressor: Callable[[int], object],
                 decoder: Callable[[], _Decoder] | None, after_end: str) -> None:
        self.name = name
        self.extension = extension
        self.mime_type = mime_type
        self._compressor = compressor
        self._decoder = decoder
        #: What follows the end of a compressed stream: "concatenated" (another stream),
        #: "ignored" (any bytes, skipped) or "refused" (an error).
        self._after_end = after_end

    def compress(self, source: BinaryIO, out: BinaryIO, level: int) -> None:
        """Compress all of ``source`` into ``out``, a chunk at a time."""
        compressor = self._compressor(level)
        while chunk := source.read(_READ_CHUNK):
            data = compressor.compress(chunk)
            if data:
                out.write(data)
        out.write(compressor.flush())

    def decompress(self, source: BinaryIO, out: BinaryIO) -> None:
        """Decompress all of ``source`` into ``out``; raises CorruptContentError for content that
        is empty, truncated or not of this format."""
        decoder: _Decoder | None = None
        streams = 0
        try:
            while chunk := source.read(_READ_CHUNK):
                pending = chunk
                while pending:
                    if decoder is None:
                        if streams and self._after_end == "ignored":
                            return
                        if streams and self._after_end == "refused":
                            raise CorruptContentError(f"data follows the end of the {self.name} stream")
                        decoder = self._decoder()
                    for piece in decoder.feed(pending):
                        out.write(piece)
                    if not decoder.finished:
                        break
                    pending, decoder = decoder.leftover, None
                    streams += 1
        except CorruptContentError:
            raise
        except (OSError, EOFError, ValueError, RuntimeError, zlib.error, lzma.LZMAError, zstandard.ZstdError,
                brotli.error) as error:
            raise CorruptContentError(f"not valid {self.name} data: {error}") from error
        if decoder is not None:
            raise CorruptContentError(f"the {self.name} data is truncated")
        if not streams:
            raise CorruptContentError(f"the content is empty, not {self.name} data")


class _ZstdFormat(_Format):
    """zstd, decoded by a stream writer (whose output is bounded however well the data compresses)
    while a frame tracker tells whether the content stops at a frame boundary (the writer cannot)."""

    def decompress(self, source: BinaryIO, out: BinaryIO) -> None:
        frames = _ZstdFrames()
        writer = zstandard.ZstdDecompressor().stream_writer(out, write_size=_OUTPUT_LIMIT, closefd=False)
        try:
            while chunk := source.read(_READ_CHUNK):
                frames.feed(chunk)
                writer.write(chunk)
        except zstandard.ZstdError as error:
            raise CorruptContentError(f"not valid zstd data: {error}") from error
        if not frames.at_boundary:
            raise CorruptContentError("the zstd data is truncated")
        if not frames.count:
            raise CorruptContentError("the content is empty, not zstd data")


class _ZstdFrames:
    """Follows the frame layout of a zstd stream (RFC 8878: frame headers, block headers, checksums,
    skippable frames) without decoding it, to count frames and tell where they end."""

    def __init__(self) -> None:
        self.count = 0
        self._field = bytearray()
        self._size = 4
        self._state = "magic"
        self._skip = 0
        self._after_skip = "magic"
        self._checksum = False

    @property
    def at_boundary(self) -> bool:
        """True when the bytes fed so far end with a complete frame."""
        return self._state == "magic" and not self._field and not self._skip

    def feed(self, data: bytes) -> None:
        view = memoryview(data)
        position = 0
        while position < len(view):
            if self._skip:
                taken = min(self._skip, len(view) - position)
                self._skip -= taken
                position += taken
                if not self._skip:
                    self._enter(self._after_skip)
                continue
            taken = min(self._size - len(self._field), len(view) - position)
            self._field += view[position:position + taken]
            position += taken
            if len(self._field) == self._size:
                value = int.from_bytes(self._field, "little")
                self._field.clear()
                self._parse(value)

    def _parse(self, value: int) -> None:
        state = self._state
        if state == "magic":
            if value == _ZSTD_MAGIC:
                self._expect("descriptor", 1)
            elif value & 0xFFFFFFF0 == _ZSTD_SKIPPABLE:
                self._expect("skippable size", 4)
            else:
                raise CorruptContentError("not valid zstd data: unknown frame magic number")
        elif state == "descriptor":
            single_segment = value >> 5 & 1
            self._checksum = bool(value >> 2 & 1)
            header = (0 if single_segment else 1) + (0, 1, 2, 4)[value & 3] + (single_segment, 2, 4, 8)[value >> 6]
            self._skip_then(header, "block")
        elif state == "block":
            block_type = value >> 1 & 3
            if block_type == 3:
                raise CorruptContentError("not valid zstd data: reserved block type")
            body = 1 if block_type == 1 else value >> 3
            if not value & 1:
                self._skip_then(body, "block")
            else:
                self._skip_then(body, "checksum" if self._checksum else "end")
        elif state == "skippable size":
            self._skip_then(value, "end")

    def _skip_then(self, count: int, state: str) -> None:
        self._skip = count
        self._after_skip = state
        if not count:
            self._enter(state)

    def _enter(self, state: str) -> None:
        if state == "checksum":
            self._skip_then(4, "end")
        elif state == "end":
            self.count += 1
            self._expect("magic", 4)
        else:
            self._expect(state, 3 if state == "block" else 4)

    def _expect(self, state: str, size: int) -> None:
        self._state = state
        self._size = size


class _BrotliCompressor:
    def __init__(self, level: int) -> None:
        self._compressor = brotli.Compressor(quality=level)

    def compress(self, data: bytes) -> bytes:
        return self._compressor.process(data)

    def flush(self) -> bytes:
        return self._compressor.finish()


class _Lz4Compressor:
    """An lz4 frame with NiFi's settings: 4 MB blocks and a content checksum."""

    def __init__(self, level: int) -> None:
        self._compressor = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX4MB, content_checksum=True)
        self._header = self._compressor.begin()

    def compress(self, data: bytes) -> bytes:
        header, self._header = self._header, b""
        return header + self._compressor.compress(data)

    def flush(self) -> bytes:
        header, self._header = self._header, b""
        return header + self._compressor.flush()


_FORMATS = {
    "gzip": _Format("gzip", ".gz", "application/gzip",
                    lambda level: zlib.compressobj(level, zlib.DEFLATED, 31),
                    lambda: _ZlibDecoder(31), "concatenated"),
    "deflate": _Format("deflate", ".zlib", "application/deflate", lambda level: zlib.compressobj(level),
                       lambda: _ZlibDecoder(15), "ignored"),
    "bzip2": _Format("bzip2", ".bz2", "application/x-bzip2", lambda level: bz2.BZ2Compressor(9),
                     lambda: _BoundedDecoder(bz2.BZ2Decompressor()), "concatenated"),
    "xz-lzma2": _Format("xz-lzma2", ".xz", "application/x-xz",
                        lambda level: lzma.LZMACompressor(format=lzma.FORMAT_XZ, preset=level),
                        lambda: _BoundedDecoder(lzma.LZMADecompressor(format=lzma.FORMAT_XZ)), "concatenated"),
    "lzma": _Format("lzma", ".lzma", "application/x-lzma", lambda level: lzma.LZMACompressor(format=lzma.FORMAT_ALONE),
                    lambda: _BoundedDecoder(lzma.LZMADecompressor(format=lzma.FORMAT_ALONE)), "ignored"),
    "lz4-framed": _Format("lz4-framed", ".lz4", "application/x-lz4-framed", _Lz4Compressor,
                          lambda: _BoundedDecoder(lz4.frame.LZ4FrameDecompressor()), "concatenated"),
    "zstd": _ZstdFormat("zstd", ".zst", "application/zstd",
                        lambda level: zstandard.ZstdCompressor(level=level * 2).compressobj(), None,
                        "concatenated"),
    "brotli": _Format("brotli", ".br", "application/x-brotli", _BrotliCompressor, _BrotliDecoder, "refused"),
}

#: mime.type values that name a compression format ("use mime.type attribute").
_BY_MIME_TYPE = {
    "application/gzip": "gzip", "application/x-gzip": "gzip",
    "application/deflate": "deflate", "application/x-deflate": "deflate",
    "application/bzip2": "bzip2", "application/x-bzip2": "bzip2",
    "application/x-xz": "xz-lzma2",
    "application/x-lzma": "lzma",
    "application/x-lz4-framed": "lz4-framed",
    "application/zstd": "zstd",
    "application/x-brotli": "brotli",
}
#: Formats NiFi knows by mime.type that Flowsite cannot process.
_UNSUPPORTED_MIME_TYPES = {
    "application/x-snappy": "snappy", "application/x-snappy-hadoop": "snappy-hadoop",
    "application/x-snappy-framed": "snappy framed",
}


class CompressContent(Processor):
    """Compresses or decompresses the content of FlowFiles with gzip, deflate (zlib), bzip2, xz
    (LZMA2), lzma (the legacy .lzma format), lz4 (frame format), zstd or brotli, and updates
    mime.type.

    Content is streamed through the codec, so FlowFiles of any size are processed in little
    memory. Compressing sets mime.type to the format's type (application/gzip, application/deflate,
    application/x-bzip2, application/x-xz, application/x-lzma, application/x-lz4-framed,
    application/zstd, application/x-brotli); decompressing removes mime.type, since the type of
    the result is unknown. With 'use mime.type attribute' the format comes from each FlowFile's
    mime.type: one without mime.type goes to failure, one whose type is no compression format
    passes to success untouched. Decompressing accepts concatenated gzip, bzip2, xz, lz4 and zstd
    streams. Content that is empty, truncated or not of the format is penalized and routed to
    failure unchanged. A CONTENT_MODIFIED provenance event records each FlowFile processed.

    Unlike NiFi, deflate output is labelled application/deflate (NiFi labels it application/gzip,
    which its own decompression then misreads), and application/x-xz is recognised as xz-lzma2.
    NiFi's snappy, snappy-hadoop and snappy framed formats are not offered; a FlowFile whose
    mime.type names one of them goes to failure.
    """

    nifi_type = "org.apache.nifi.processors.standard.CompressContent"
    nifi_bundle = {"group": "org.apache.nifi", "artifact": "nifi-standard-nar"}
    tags = ("content", "compress", "decompress", "gzip", "bzip2", "lzma", "xz-lzma2", "lz4-framed", "deflate",
            "zstd", "brotli")
    properties = (MODE, COMPRESSION_FORMAT, COMPRESSION_LEVEL, UPDATE_FILENAME)
    relationships = (SUCCESS, FAILURE)
    input_requirement = InputRequirement.REQUIRED
    reads_attributes = (WrittenAttribute("mime.type", "The compression format, with 'use mime.type attribute'"),)
    writes_attributes = (WrittenAttribute("mime.type", "Set to the format's type when compressing; removed when "
                                          "decompressing"),)
    see_also = ("IdentifyMimeType", "UnpackContent")

    def on_scheduled(self, context):
        self._compress = context.property(MODE).value == MODE_COMPRESS
        self._format = context.property(COMPRESSION_FORMAT).value
        self._level = context.property(COMPRESSION_LEVEL).as_int()
        self._update_filename = context.property(UPDATE_FILENAME).as_bool()

    def on_trigger(self, context, session):
        for flowfile in session.get_batch(_BATCH):
            self._process(context, session, flowfile)

    def _process(self, context, session, flowfile) -> None:
        name = self._format
        if name == USE_MIME_TYPE:
            mime_type = flowfile.attributes.get("mime.type")
            if mime_type is None:
                context.logger.error("%s has no mime.type attribute; routing to failure", flowfile.uuid)
                session.transfer(session.penalize(flowfile), FAILURE)
                return
            if mime_type in _UNSUPPORTED_MIME_TYPES:
                context.logger.error("%s is %s data (mime.type %s), a format this node cannot process; routing to "
                                     "failure", flowfile.uuid, _UNSUPPORTED_MIME_TYPES[mime_type], mime_type)
                session.transfer(session.penalize(flowfile), FAILURE)
                return
            name = _BY_MIME_TYPE.get(mime_type)
            if name is None:
                context.logger.info("mime.type of %s is %r, no compression format; routing to success unchanged",
                                    flowfile.uuid, mime_type)
                session.transfer(flowfile, SUCCESS)
                return
        codec = _FORMATS[name]
        started = time.monotonic()
        before = flowfile.size
        try:
            if self._compress:
                flowfile = session.modify(flowfile, lambda source, out: codec.compress(source, out, self._level))
            else:
                flowfile = session.modify(flowfile, codec.decompress)
        except Exception as error:
            context.logger.error("cannot %s %s with %s: %s; routing to failure",
                                 "compress" if self._compress else "decompress", flowfile.uuid, name, error)
            session.transfer(session.penalize(flowfile), FAILURE)
            return
        filename = flowfile.attributes.get("filename", "")
        if self._compress:
            flowfile = session.put_attribute(flowfile, "mime.type", codec.mime_type)
            if self._update_filename:
                flowfile = session.put_attribute(flowfile, "filename", filename + codec.extension)
        else:
            flowfile = session.remove_attribute(flowfile, "mime.type")
            if self._update_filename and filename.lower().endswith(codec.extension):
                flowfile = session.put_attribute(flowfile, "filename", filename[:-len(codec.extension)])
        millis = int((time.monotonic() - started) * 1000)
        session.provenance.modify_content(flowfile, duration=millis)
        context.logger.debug("%sed %s with %s: %d bytes became %d", "compress" if self._compress else "decompress",
                             flowfile.uuid, name, before, flowfile.size)
        session.transfer(flowfile, SUCCESS)
