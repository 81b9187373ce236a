"""The contents of a batch laid end to end and cut into chunks, read in large reads.

Contents that lie next to each other in one content file (small contents written one after
the other share files) are read with one read per run instead of one per FlowFile, and each
content's checksum is checked on its slice of the run. A content larger than a chunk is
streamed; a read of exactly one chunk is handed on without being copied.
"""

from __future__ import annotations

from typing import Iterator

from engine.checksums import crc32
from engine.content.reader import ContentNotFoundError, checksum_error
from engine.content.repository import ContentRepository
from engine.flowfile import ContentClaim, FlowFile

__all__ = ["content_chunks"]

Chunk = bytes | bytearray


def content_chunks(content: ContentRepository, flowfiles: list[FlowFile], chunk_size: int) -> Iterator[Chunk]:
    """The contents of ``flowfiles`` laid end to end, in chunks of ``chunk_size`` bytes (the last
    one shorter). Raises ``ContentNotFoundError`` naming the claim of a missing or damaged content."""
    buffer = bytearray()
    for run in _runs(flowfiles, chunk_size):
        if len(run) == 1 and run[0].length > chunk_size:
            pieces = _stream(content, run[0], chunk_size)
        else:
            pieces = iter((_read_run(content, run),))
        for piece in pieces:
            view = memoryview(piece)
            while view:
                if not buffer and len(view) >= chunk_size:
                    yield piece if len(view) == len(piece) == chunk_size else bytes(view[:chunk_size])
                    view = view[chunk_size:]
                    continue
                take = min(len(view), chunk_size - len(buffer))
                buffer += view[:take]
                view = view[take:]
                if len(buffer) == chunk_size:
                    yield buffer
                    buffer = bytearray()
    if buffer:
        yield buffer


def _runs(flowfiles: list[FlowFile], chunk_size: int) -> Iterator[list[ContentClaim]]:
    """The batch's content claims grouped into runs of adjacent bytes of one file, each run at
    most ``chunk_size`` bytes (a larger content is a run of its own)."""
    run: list[ContentClaim] = []
    end = -1
    size = 0
    for flowfile in flowfiles:
        claim = flowfile.content_claim
        if claim is None or claim.length == 0:
            continue
        if run and (claim.offset != end or claim.resource_claim != run[0].resource_claim
                    or size + claim.length > chunk_size):
            yield run
            run, size = [], 0
        run.append(claim)
        size += claim.length
        end = claim.offset + claim.length
    if run:
        yield run


def _stream(content: ContentRepository, claim: ContentClaim, chunk_size: int) -> Iterator[bytes]:
    with content.open_reader(claim) as reader:  # checks the checksum as it reads
        while piece := reader.read(chunk_size):
            yield piece


def _read_run(content: ContentRepository, run: list[ContentClaim]) -> bytes:
    """The bytes of adjacent claims, read at once; every claim's checksum checked."""
    if len(run) == 1:
        return content.read_bytes(run[0])
    first = run[0]
    total = run[-1].offset + run[-1].length - first.offset
    try:
        with content.open_reader(ContentClaim(first.resource_claim, first.offset, total, None)) as reader:
            data = reader.read()
            path = reader.path
    except ContentNotFoundError:
        for claim in run:  # to name the FlowFile whose content is missing
            content.read_bytes(claim)
        raise
    if len(data) < total:  # the file was cut while being read: each content read on its own says which
        return b"".join(content.read_bytes(claim) for claim in run)
    view = memoryview(data)
    for claim in run:
        if claim.checksum is not None:
            start = claim.offset - first.offset
            actual = crc32(view[start:start + claim.length])
            if actual != claim.checksum:
                raise checksum_error(claim, path, actual)
    return data
