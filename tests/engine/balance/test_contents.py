"""Reading a batch's contents in runs: the same bytes as one read per content, damage still named."""

from __future__ import annotations

import os

import pytest

from engine.balance.contents import content_chunks
from engine.content.reader import ContentChecksumError, ContentNotFoundError
from engine.flowfile import FlowFile
from engine.storage import NodeStorage


@pytest.fixture
def storage(tmp_path):
    storage = NodeStorage(tmp_path / "node", node="a")
    storage.open(background=False)
    yield storage
    storage.close()


def _flowfiles(storage, sizes):
    flowfiles = []
    for index, size in enumerate(sizes):
        claim = storage.content.write_bytes(os.urandom(size)) if size >= 0 else None
        flowfiles.append(FlowFile(index, f"u{index}", {}, claim, 0, 0, index))
    return flowfiles


@pytest.mark.parametrize("chunk_size", [1000, 4096, 1 << 20])
def test_chunks_hold_the_contents_end_to_end(storage, chunk_size):
    flowfiles = _flowfiles(storage, [100] * 50 + [0, -1, 5000, 3 * 4096, 7] + [1024] * 10)
    expected = b"".join(storage.content.read_bytes(f.content_claim) for f in flowfiles if f.content_claim)
    chunks = list(content_chunks(storage.content, flowfiles, chunk_size))
    assert b"".join(chunks) == expected
    assert all(len(chunk) == chunk_size for chunk in chunks[:-1]) and 0 < len(chunks[-1]) <= chunk_size


def test_a_content_of_exactly_one_chunk_is_handed_on_as_read(storage):
    flowfiles = _flowfiles(storage, [4096, 4096])
    chunks = list(content_chunks(storage.content, flowfiles, 4096))
    assert [type(chunk) for chunk in chunks] == [bytes, bytes]


def _damage(storage, claim, at=0):
    path = storage.content.path(claim.resource_claim)
    with open(path, "r+b") as file:
        file.seek(claim.offset + at)
        byte = file.read(1)
        file.seek(claim.offset + at)
        file.write(bytes([byte[0] ^ 0xFF]))


@pytest.mark.parametrize("size", [100, 20_000])
def test_a_damaged_content_in_a_run_is_named(storage, size):
    flowfiles = _flowfiles(storage, [100, size, 100])
    _damage(storage, flowfiles[1].content_claim, at=size // 2)
    with pytest.raises(ContentChecksumError) as raised:
        b"".join(content_chunks(storage.content, flowfiles, 4096))
    assert raised.value.claim == flowfiles[1].content_claim
    assert str(storage.content.path(flowfiles[1].content_claim.resource_claim)) in str(raised.value)


def test_a_content_cut_short_is_named(storage):
    flowfiles = _flowfiles(storage, [100, 100, 100])
    last = flowfiles[2].content_claim
    os.truncate(storage.content.path(last.resource_claim), last.offset + 50)
    with pytest.raises(ContentNotFoundError) as raised:
        list(content_chunks(storage.content, flowfiles, 4096))
    assert raised.value.claim == last
