from __future__ import annotations

import os

import psutil
import pytest

from tests.engine.content.conftest import RepoFactory

CHUNK = 1 << 20
TOTAL = 2 << 30
RSS_LIMIT = 64 << 20


@pytest.mark.slow
def test_two_gib_content_streams_in_bounded_memory(make_repo: RepoFactory) -> None:
    repo = make_repo()
    process = psutil.Process()
    block = os.urandom(CHUNK)
    baseline = process.memory_info().rss
    peak = baseline

    with repo.open_writer() as writer:
        for _ in range(TOTAL // CHUNK):
            writer.write(block)
            peak = max(peak, process.memory_info().rss)
        claim = writer.close()
    assert claim.length == TOTAL

    try:
        buffer = bytearray(CHUNK)
        view = memoryview(buffer)
        read = 0
        with repo.open_reader(claim) as reader:
            while count := reader.readinto(view):
                assert view[:count] == block[read % CHUNK : read % CHUNK + count]
                read += count
                peak = max(peak, process.memory_info().rss)
        assert read == TOTAL

        with repo.open_reader(claim.slice(TOTAL - CHUNK - 10, CHUNK)) as reader:
            chunks = 0
            for chunk in reader:
                assert len(chunk) <= CHUNK
                chunks += 1
                peak = max(peak, process.memory_info().rss)
            assert chunks == 1 and chunk == block[-10:] + block[: CHUNK - 10]
    finally:
        os.unlink(repo.path(claim.resource_claim))

    assert peak - baseline < RSS_LIMIT, f"RSS grew by {(peak - baseline) >> 20} MiB"
