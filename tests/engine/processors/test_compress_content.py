import bz2
import gzip
import lzma
import os
import tracemalloc
import zlib

import brotli
import lz4.frame
import pytest
import zstandard

from engine.processors.compress_content import CompressContent
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner

FORMATS = ["gzip", "deflate", "bzip2", "xz-lzma2", "lzma", "lz4-framed", "zstd", "brotli"]
MIME_TYPES = {"gzip": "application/gzip", "deflate": "application/deflate", "bzip2": "application/x-bzip2",
              "xz-lzma2": "application/x-xz", "lzma": "application/x-lzma", "lz4-framed": "application/x-lz4-framed",
              "zstd": "application/zstd", "brotli": "application/x-brotli"}
EXTENSIONS = {"gzip": ".gz", "deflate": ".zlib", "bzip2": ".bz2", "xz-lzma2": ".xz", "lzma": ".lzma",
              "lz4-framed": ".lz4", "zstd": ".zst", "brotli": ".br"}
# How other implementations read each format, to show the output is the real thing.
READERS = {
    "gzip": gzip.decompress, "deflate": zlib.decompress, "bzip2": bz2.decompress,
    "xz-lzma2": lambda data: lzma.decompress(data, format=lzma.FORMAT_XZ),
    "lzma": lambda data: lzma.decompress(data, format=lzma.FORMAT_ALONE),
    "lz4-framed": lz4.frame.decompress,
    "zstd": lambda data: zstandard.ZstdDecompressor().decompressobj().decompress(data),
    "brotli": brotli.decompress,
}
WRITERS = {
    "gzip": gzip.compress, "deflate": zlib.compress, "bzip2": bz2.compress,
    "xz-lzma2": lambda data: lzma.compress(data, format=lzma.FORMAT_XZ),
    "lzma": lambda data: lzma.compress(data, format=lzma.FORMAT_ALONE),
    "lz4-framed": lz4.frame.compress, "zstd": lambda data: zstandard.ZstdCompressor().compress(data),
    "brotli": brotli.compress,
}
TEXT = b"The quick brown fox jumps over the lazy dog. " * 2000


def runner_for(tmp_path, mode, fmt, **extra):
    properties = {"Mode": mode, "Compression Format": fmt, **extra}
    return ProcessorTestRunner(CompressContent, tmp_path, properties)


@pytest.mark.parametrize("fmt", FORMATS)
def test_compress_then_decompress_gives_the_content_back(tmp_path, fmt):
    with runner_for(tmp_path, "compress", fmt) as compressor:
        compressor.enqueue(TEXT, filename="data.txt")
        compressor.run()
        (compressed,) = compressor.output("success")
        packed = compressor.content(compressed)
    assert len(packed) < len(TEXT) / 5
    assert READERS[fmt](packed) == TEXT
    assert compressed.attributes["mime.type"] == MIME_TYPES[fmt]
    assert compressed.attributes["filename"] == "data.txt", "Update Filename is off by default"

    with runner_for(tmp_path, "decompress", fmt) as decompressor:
        decompressor.enqueue(packed, filename="data.txt", **{"mime.type": MIME_TYPES[fmt]})
        decompressor.run()
        (restored,) = decompressor.output("success")
        assert decompressor.content(restored) == TEXT
        assert "mime.type" not in restored.attributes
        assert decompressor.output("failure") == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_decompresses_what_other_implementations_wrote(tmp_path, fmt):
    with runner_for(tmp_path, "decompress", fmt) as runner:
        runner.enqueue(WRITERS[fmt](TEXT))
        runner.run()
        (restored,) = runner.output("success")
        assert runner.content(restored) == TEXT


@pytest.mark.parametrize("fmt", ["gzip", "bzip2", "xz-lzma2", "lz4-framed", "zstd"])
def test_concatenated_streams_decompress_as_one(tmp_path, fmt):
    with runner_for(tmp_path, "decompress", fmt) as runner:
        runner.enqueue(WRITERS[fmt](b"first part, ") + WRITERS[fmt](b"second part"))
        runner.run()
        assert runner.content(runner.output("success")[0]) == b"first part, second part"


@pytest.mark.parametrize("fmt", FORMATS)
def test_corrupt_content_goes_to_failure_penalized_and_unchanged(tmp_path, fmt):
    garbage = b"this is not compressed at all" * 10
    with runner_for(tmp_path, "decompress", fmt, **{"Update Filename": "true"}) as runner:
        original = runner.enqueue(garbage, filename=f"x{EXTENSIONS[fmt]}")
        runner.run()
        (failed,) = runner.output("failure")
        assert failed.uuid == original.uuid and runner.content(failed) == garbage
        assert failed.attributes["filename"] == f"x{EXTENSIONS[fmt]}"
        assert failed.penalty_expiration > 0
        assert runner.output("success") == []
        assert any(f"cannot decompress {original.uuid} with {fmt}" in message for message in runner.bulletins)
        assert not runner.events(event_type=E.CONTENT_MODIFIED)


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_content_goes_to_failure(tmp_path, fmt):
    packed = WRITERS[fmt](os.urandom(50_000))
    with runner_for(tmp_path, "decompress", fmt) as runner:
        runner.enqueue(packed[: len(packed) // 2])
        runner.run()
        assert len(runner.output("failure")) == 1 and runner.output("success") == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_content_is_not_compressed_data(tmp_path, fmt):
    with runner_for(tmp_path, "decompress", fmt) as runner:
        runner.enqueue(b"")
        runner.run()
        assert len(runner.output("failure")) == 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_content_compresses_to_a_valid_stream(tmp_path, fmt):
    with runner_for(tmp_path, "compress", fmt) as runner:
        runner.enqueue(b"")
        runner.run()
        assert READERS[fmt](runner.content(runner.output("success")[0])) == b""


def test_bytes_after_a_brotli_stream_are_refused(tmp_path):
    with runner_for(tmp_path, "decompress", "brotli") as runner:
        runner.enqueue(brotli.compress(b"data") + b"trailing")
        runner.run()
        assert len(runner.output("failure")) == 1


def test_compression_level_changes_the_output(tmp_path):
    sizes = {}
    for level in ("0", "9"):
        with runner_for(tmp_path, "compress", "gzip", **{"Compression Level": level}) as runner:
            runner.enqueue(TEXT)
            runner.run()
            sizes[level] = runner.output("success")[0].size
    assert sizes["0"] > len(TEXT) > 20 * sizes["9"]


def zstd_stream(data, level):
    compressor = zstandard.ZstdCompressor(level=level).compressobj()
    return compressor.compress(data) + compressor.flush()


def test_zstd_level_is_twice_the_compression_level(tmp_path):
    data = os.urandom(2000) * 50 + TEXT
    with runner_for(tmp_path, "compress", "zstd", **{"Compression Level": "9"}) as runner:
        runner.enqueue(data)
        runner.run()
        packed = runner.content(runner.output("success")[0])
    assert packed == zstd_stream(data, 18) != zstd_stream(data, 9)


def test_update_filename_adds_and_removes_the_extension(tmp_path):
    with runner_for(tmp_path, "compress", "gzip", **{"Update Filename": "true"}) as runner:
        runner.enqueue(b"abc", filename="report.csv")
        runner.run()
        (compressed,) = runner.output("success")
        assert compressed.attributes["filename"] == "report.csv.gz"
        packed = runner.content(compressed)
    with runner_for(tmp_path, "decompress", "gzip", **{"Update Filename": "true"}) as runner:
        runner.enqueue(packed, filename="REPORT.CSV.GZ")
        runner.enqueue(packed, filename="report.csv.zip")
        runner.run()
        assert [f.attributes["filename"] for f in runner.output("success")] == ["REPORT.CSV", "report.csv.zip"]


def test_use_mime_type_attribute_picks_the_format_per_flowfile(tmp_path):
    with runner_for(tmp_path, "decompress", "use mime.type attribute") as runner:
        runner.enqueue(gzip.compress(b"from gzip"), **{"mime.type": "application/x-gzip"})
        runner.enqueue(bz2.compress(b"from bzip2"), **{"mime.type": "application/bzip2"})
        runner.enqueue(zstandard.ZstdCompressor().compress(b"from zstd"), **{"mime.type": "application/zstd"})
        runner.enqueue(b"plain text", **{"mime.type": "text/plain"})
        runner.run()
        assert [runner.content(f) for f in runner.output("success")] == [
            b"from gzip", b"from bzip2", b"from zstd", b"plain text"]
        assert runner.output("success")[3].attributes["mime.type"] == "text/plain", "passed through untouched"
        assert [e.event_type for e in runner.events(event_type=E.CONTENT_MODIFIED)] == [E.CONTENT_MODIFIED] * 3


def test_use_mime_type_attribute_without_a_mime_type_fails(tmp_path):
    with runner_for(tmp_path, "decompress", "use mime.type attribute") as runner:
        runner.enqueue(b"?")
        runner.enqueue(b"?", **{"mime.type": "application/x-snappy"})
        runner.run()
        assert len(runner.output("failure")) == 2
        assert all(f.penalty_expiration > 0 for f in runner.output("failure"))
        assert any("no mime.type" in message for message in runner.bulletins)
        assert any("snappy" in message for message in runner.bulletins)


def test_compressing_with_the_mime_type_attribute_uses_its_format(tmp_path):
    with runner_for(tmp_path, "compress", "use mime.type attribute") as runner:
        runner.enqueue(b"x" * 100, **{"mime.type": "application/gzip"})
        runner.run()
        (compressed,) = runner.output("success")
        assert gzip.decompress(runner.content(compressed)) == b"x" * 100
        assert compressed.attributes["mime.type"] == "application/gzip"


def test_a_deflate_flowfile_round_trips_through_its_mime_type(tmp_path):
    with runner_for(tmp_path, "compress", "deflate") as runner:
        runner.enqueue(TEXT)
        runner.run()
        compressed = runner.output("success")[0]
        packed, mime_type = runner.content(compressed), compressed.attributes["mime.type"]
    with runner_for(tmp_path, "decompress", "use mime.type attribute") as runner:
        runner.enqueue(packed, **{"mime.type": mime_type})
        runner.run()
        assert runner.content(runner.output("success")[0]) == TEXT


def test_a_content_modified_event_records_each_flowfile(tmp_path):
    with runner_for(tmp_path, "compress", "gzip") as runner:
        flowfiles = [runner.enqueue(b"abc") for _ in range(3)]
        runner.run()
        events = runner.events(event_type=E.CONTENT_MODIFIED)
        assert sorted(e.flowfile_uuid for e in events) == sorted(f.uuid for f in flowfiles)
        assert all(e.updated_attributes.get("mime.type") == "application/gzip" for e in events)


@pytest.mark.parametrize("fmt", ["gzip", "zstd", "xz-lzma2"])
def test_large_content_is_streamed(tmp_path, fmt):
    block = os.urandom(1 << 16)
    size = 24 << 20
    with runner_for(tmp_path, "compress", fmt) as compressor:
        compressor.enqueue(block * (size // len(block)))
        tracemalloc.start()
        try:
            compressor.run()
            compress_peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        (compressed,) = compressor.output("success")
        packed = compressor.content(compressed)
    with runner_for(tmp_path, "decompress", fmt) as decompressor:
        decompressor.enqueue(packed)
        tracemalloc.start()
        try:
            decompressor.run()
            decompress_peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        (restored,) = decompressor.output("success")
        assert restored.size == size
        with decompressor.storage.content.open_reader(restored.content_claim) as reader:
            assert all(chunk == block for chunk in iter(lambda: reader.read(len(block)), b""))
    # Well below the 24 MiB of content (xz's encoder alone takes about 9 MiB at level 1).
    assert compress_peak < 12 << 20 and decompress_peak < 12 << 20, (compress_peak, decompress_peak)


def test_a_decompression_bomb_is_written_out_in_bounded_pieces(tmp_path):
    size = 64 << 20
    packed = zstandard.ZstdCompressor(level=19).compress(b"\0" * size)
    with runner_for(tmp_path, "decompress", "zstd") as runner:
        runner.enqueue(packed)
        tracemalloc.start()
        try:
            runner.run()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert runner.output("success")[0].size == size
    assert peak < 8 << 20, peak


def test_unsupported_formats_and_values_are_reported(tmp_path):
    with runner_for(tmp_path, "decompress", "snappy") as runner:
        assert any("'Compression Format' is 'snappy', which is not one of the allowed values" in p
                   for p in runner.validate())
    with runner_for(tmp_path, "compress", "gzip", **{"Compression Level": "10"}) as runner:
        assert any("'Compression Level' is '10'" in p for p in runner.validate())
    with runner_for(tmp_path, "decompress", "gzip", **{"Compression Level": "10"}) as runner:
        assert runner.validate() == [], "the level only matters when compressing"


def test_zstd_frames_with_checksums_sizes_and_skippable_frames_decompress(tmp_path):
    skippable = (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"notes"
    with_checksum = zstandard.ZstdCompressor(level=3, write_checksum=True, write_content_size=True)
    packed = skippable + with_checksum.compress(b"one ") + zstandard.ZstdCompressor(level=1).compress(b"two")
    with runner_for(tmp_path, "decompress", "zstd") as runner:
        runner.enqueue(packed)
        runner.enqueue(packed[:-1])
        runner.enqueue(with_checksum.compress(b"one ")[:-2])
        runner.enqueue(skippable[:-1])
        runner.run()
        assert [runner.content(f) for f in runner.output("success")] == [b"one two"]
        assert len(runner.output("failure")) == 3
        assert sum("truncated" in message for message in runner.bulletins) == 3
