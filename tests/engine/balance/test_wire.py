"""The batch wire format on its own: per-chunk compression, columnar metadata, and what is refused."""

from __future__ import annotations

import os

import msgpack
import pytest
import zstandard

from engine.balance.trust import ClusterKeyTrust
from engine.balance.wire import (
    RAW, ZSTD, BatchDigest, BatchEncoder, Compression, FlowFileMeta, Header, Limits, WireError, decode_chunk,
    decode_end, decode_entry, decode_header, decode_packed,
)

TEXT = b"".join(b"2026-11-24T19:42:%02d.%03dZ INFO order=%d status=ok\n" % (i % 60, i % 1000, i) for i in range(20000))


def _header(compression, flowfiles=None):
    flowfiles = flowfiles if flowfiles is not None else [
        FlowFileMeta("u1", {"filename": "a"}, 1, 2, 0, 5), FlowFileMeta("u2", {}, 3, 4, 9, -1)]
    return Header("t1", "a1", "conn", "node-a", compression, 1000, b"", flowfiles)


def _replay(entries, limits=Limits()):
    """Decode entries as the receiver does: (header, raw chunks, digest matches)."""
    digest = BatchDigest()
    header, chunks, end = None, [], None
    for fields in entries:
        entry = decode_entry(fields, "test")
        if entry.kind == b"H":
            header = decode_header(entry.payload, limits, "test")
            digest.header(entry.payload)
        elif entry.kind == b"C":
            digest.chunk(entry.payload, entry.codec)
            chunks.append(decode_chunk(entry.payload, entry.codec, header, limits, "test"))
        else:
            end = decode_end(entry.payload, "test")
    return header, chunks, end[1] == digest.digest()


def test_a_chunk_that_does_not_shrink_is_sent_as_it_is_and_one_that_does_is_compressed():
    encoder = BatchEncoder(_header(Compression.COMPRESS_ATTRIBUTES_AND_CONTENT), ClusterKeyTrust("k", "node-a"))
    random_bytes = os.urandom(1 << 16)
    entries = [encoder.header_entry(), encoder.chunk_entry(random_bytes), encoder.chunk_entry(TEXT),
               encoder.end_entry()]
    assert b"z" not in entries[1] and entries[1][b"d"] is random_bytes  # not even copied
    assert entries[2][b"z"] == b"1" and len(entries[2][b"d"]) < len(TEXT) / 3
    header, chunks, digest_ok = _replay(entries)
    assert chunks == [random_bytes, TEXT] and digest_ok
    assert header.flowfiles == _header(Compression.DO_NOT_COMPRESS).flowfiles


def test_the_codec_flag_is_covered_by_the_digest():
    encoder = BatchEncoder(_header(Compression.COMPRESS_ATTRIBUTES_AND_CONTENT), ClusterKeyTrust("k", "node-a"))
    entries = [encoder.header_entry(), encoder.chunk_entry(b"abcdefgh"), encoder.end_entry()]
    entries[1][b"z"] = b"1"  # claims a raw chunk is compressed: it no longer decodes, nor matches
    with pytest.raises(WireError, match="not valid zstd"):
        _replay(entries)
    digest = BatchDigest()
    digest.header(decode_entry(entries[0], "t").payload)
    digest.chunk(b"abcdefgh", ZSTD)
    assert digest.digest() != decode_end(decode_entry(entries[2], "t").payload, "t")[1]


def test_a_packed_batch_carries_its_chunk_codec():
    encoder = BatchEncoder(_header(Compression.COMPRESS_ATTRIBUTES_AND_CONTENT), ClusterKeyTrust("k", "node-a"))
    entry = decode_entry(encoder.packed_entry(TEXT[:4096]), "t")
    header_payload, chunk, end, codec = decode_packed(entry.payload, Limits(), "t")
    header = decode_header(header_payload, Limits(), "t")
    assert codec == ZSTD and decode_chunk(chunk, codec, header, Limits(), "t") == TEXT[:4096]


def test_a_decompression_bomb_is_refused_before_it_is_inflated():
    header = _header(Compression.COMPRESS_ATTRIBUTES_AND_CONTENT)
    bomb = zstandard.ZstdCompressor(level=1).compress(bytes(9 << 20))
    with pytest.raises(WireError, match="more than the receiver's limit"):
        decode_chunk(bomb, ZSTD, header, Limits(max_chunk_bytes=8 << 20), "stream s entry 1-0")
    unsized = zstandard.ZstdCompressor(level=1, write_content_size=False).compress(b"x" * 100)
    with pytest.raises(WireError, match="does not declare its decompressed size"):
        decode_chunk(unsized, ZSTD, header, Limits(), "stream s entry 1-0")
    cut = zstandard.ZstdCompressor(level=1).compress(TEXT)[:-50]
    with pytest.raises(WireError, match="entry 1-0: the content chunk is cut short or damaged"):
        decode_chunk(cut, ZSTD, header, Limits(), "stream s entry 1-0")


def test_a_compressed_chunk_in_a_batch_whose_content_is_not_compressed_is_refused():
    payload = zstandard.ZstdCompressor(level=1).compress(TEXT)
    with pytest.raises(WireError, match="content is not compressed"):
        decode_chunk(payload, ZSTD, _header(Compression.COMPRESS_ATTRIBUTES_ONLY), Limits(), "t")
    assert decode_chunk(b"abc", RAW, _header(Compression.COMPRESS_ATTRIBUTES_AND_CONTENT), Limits(), "t") == b"abc"


def _header_payload(columns):
    return msgpack.packb([2, "t1", "a1", "conn", "node-a", "DO_NOT_COMPRESS", 1000, b"", msgpack.packb(columns)])


@pytest.mark.parametrize("damage, index", [
    (lambda c: c[0].__setitem__(1, 7), 1),                      # a uuid that is not a string
    (lambda c: c[0].__setitem__(0, ""), 0),                     # an empty uuid
    (lambda c: c[1].__setitem__(2, {"a": 1}), 2),               # an attribute value that is not a string
    (lambda c: c[1].__setitem__(1, [1]), 1),                    # attributes that are not a map
    (lambda c: c[3].__setitem__(2, "x"), 2),                    # a date that is not an integer
    (lambda c: c[5].__setitem__(1, -2), 1),                     # a content length below -1
])
def test_malformed_metadata_names_the_flowfile(damage, index):
    columns = [["u0", "u1", "u2"], [{}, {"k": "v"}, {}], [1, 1, 1], [1, 1, 1], [0, 0, 0], [3, -1, 0]]
    assert len(decode_header(_header_payload(columns), Limits(), "t").flowfiles) == 3
    damage(columns)
    with pytest.raises(WireError, match=f"entry 9-0: the metadata of FlowFile {index} is malformed"):
        decode_header(_header_payload(columns), Limits(), "stream s entry 9-0")


def test_metadata_columns_of_different_lengths_or_too_many_flowfiles_are_refused():
    columns = [["u0", "u1"], [{}, {}], [1, 1], [1, 1], [0, 0], [3]]
    with pytest.raises(WireError, match="not six columns"):
        decode_header(_header_payload(columns), Limits(), "t")
    columns = [["u0", "u1"], [{}, {}], [1, 1], [1, 1], [0, 0], [3, 3]]
    with pytest.raises(WireError, match="at most 1 FlowFiles"):
        decode_header(_header_payload(columns), Limits(max_flowfiles=1), "t")


def test_an_unknown_codec_is_refused():
    encoder = BatchEncoder(_header(Compression.DO_NOT_COMPRESS), ClusterKeyTrust("k", "node-a"))
    fields = encoder.chunk_entry(b"abc")
    fields[b"z"] = b"7"
    with pytest.raises(WireError, match="unknown content codec"):
        decode_entry(fields, "t")
