"""Content checksums, writers on a full or failing disk, and syncing what was written (``os`` policy)."""

from __future__ import annotations

import errno
import zlib

import msgpack
import pytest

from engine.config import StorageConfig
from engine.content.reader import ContentChecksumError, ContentNotFoundError
from engine.content.writer import WRITE_BUFFER_SIZE
from engine.flowfile import ContentClaim, FlowFile, ResourceClaim
from engine.provenance.codec import encode_events, event_from_wire, decode_wire
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType as E
from engine.repository.records import FlowFileRecordSerde, RepositoryRecord
from engine.storage import NodeStorage
from engine.testing.faults import FaultPlan
from tests.engine.session.conftest import Node


def _flip(path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(data)


def test_written_contents_carry_the_crc32_of_their_bytes(make_repo):
    repo = make_repo()
    small = repo.write_bytes(b"hello")
    with repo.open_writer() as writer:
        for _ in range(3):
            writer.write(b"x" * WRITE_BUFFER_SIZE)  # past the buffer: straight to the file
    big = writer.claim
    assert small.checksum == zlib.crc32(b"hello")
    assert big.checksum == zlib.crc32(b"x" * 3 * WRITE_BUFFER_SIZE)
    assert repo.read_bytes(small) == b"hello"
    assert repo.write_bytes(b"").checksum == 0


def test_read_bytes_refuses_a_flipped_byte_naming_file_offset_and_length(make_repo):
    repo = make_repo()
    before = repo.write_bytes(b"a" * 100)
    claim = repo.write_bytes(b"b" * 100)
    path = repo.path(claim.resource_claim)
    _flip(path, claim.offset + 42)
    with pytest.raises(ContentChecksumError) as caught:
        repo.read_bytes(claim)
    error = caught.value
    assert isinstance(error, ContentNotFoundError)
    assert error.path == str(path) and error.claim == claim and error.found.startswith("checksum mismatch")
    assert str(path) in str(error) and "offset 100" in str(error) and "length 100" in str(error)
    assert repo.read_bytes(before) == b"a" * 100, "the neighbour is intact"


@pytest.mark.parametrize("how", ["read", "readinto", "iterate"])
def test_a_stream_read_whole_in_order_raises_on_its_final_read(make_repo, how):
    repo = make_repo()
    claim = repo.write_bytes(bytes(range(256)) * 40)
    _flip(repo.path(claim.resource_claim), claim.offset + claim.length - 1)
    with repo.open_reader(claim) as reader, pytest.raises(ContentChecksumError, match="have CRC32"):
        if how == "read":
            while reader.read(1000):
                pass
        elif how == "readinto":
            buffer = bytearray(999)
            while reader.readinto(buffer):
                pass
        else:
            for _ in reader:
                pass


def test_a_stream_checks_only_what_it_read_in_order(make_repo):
    repo = make_repo()
    claim = repo.write_bytes(b"0123456789" * 10)
    _flip(repo.path(claim.resource_claim), claim.offset + 5)
    with repo.open_reader(claim) as reader:
        reader.seek(50)
        assert len(reader.read()) == 50  # skipped the damaged part: nothing to compare
    with repo.open_reader(claim) as reader:
        reader.read(10)
        reader.seek(0)
        reader.read(10)  # a re-read of checked bytes does not count twice
        with pytest.raises(ContentChecksumError):
            reader.read()


def test_slices_and_old_claims_carry_no_checksum_and_read_unchecked(make_repo):
    repo = make_repo()
    claim = repo.write_bytes(b"0123456789")
    assert claim.slice(0, 10) is claim, "the whole keeps its checksum"
    part = claim.slice(2, 3)
    assert part.checksum is None and repo.read_bytes(part) == b"234"
    old = ContentClaim(claim.resource_claim, claim.offset, claim.length)
    _flip(repo.path(claim.resource_claim), claim.offset)
    assert repo.read_bytes(old) == b"1123456789", "without a checksum damage cannot be seen"


def test_record_serde_writes_version_2_claims_and_reads_version_1():
    serde = FlowFileRecordSerde()
    assert serde.version == 2
    claim = ContentClaim(ResourceClaim("default", 3, "17-1"), 10, 20, 0xDEADBEEF)
    flowfile = FlowFile(1, "u", {"a": "b"}, claim, 5, 6, 7, 8, 9, 0)
    wire = msgpack.unpackb(msgpack.packb(serde.to_wire(RepositoryRecord.create(flowfile, "q"))))
    assert serde.from_wire(wire, 2).flowfile.content_claim == claim
    wire[1][3] = wire[1][3][:3]  # what version 1 wrote
    assert serde.from_wire(wire, 1).flowfile.content_claim == claim._replace(checksum=None)


def test_provenance_events_carry_the_claims_checksum():
    claim = ContentClaim(ResourceClaim("default", 3, "17-1"), 10, 20, 12345)
    events = [ProvenanceEvent(E.CREATE, 1, "u", "c", "T", content_claim=claim,
                              previous_content_claim=claim._replace(checksum=None))]
    (data,) = encode_events(events)
    event = event_from_wire(decode_wire(data), 1)
    assert event.content_claim == claim and event.previous_content_claim.checksum is None


# -- full disk ---------------------------------------------------------------------------------


@pytest.mark.parametrize("partial", [False, True])
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_a_failed_write_freezes_its_claim_unreferenced(make_repo, claims, code, partial):
    repo = make_repo()
    first = repo.write_bytes(b"kept")
    plan = FaultPlan(fail_at=1, errno=code, operations={"write"}, partial=partial and code == errno.ENOSPC)
    with plan.installed(), pytest.raises(OSError) as caught:
        repo.write_bytes(b"z" * (2 * WRITE_BUFFER_SIZE))
    assert caught.value.errno == code
    assert claims.counts() == {first.resource_claim: 1}, "no claimant for the failed content"
    assert first.resource_claim not in claims.writable(), "the claim with a partial tail is frozen"
    assert not repo._pool
    after = repo.write_bytes(b"next")
    assert after.resource_claim != first.resource_claim and repo.read_bytes(after) == b"next"
    assert repo.read_bytes(first) == b"kept"


def test_a_writer_that_failed_keeps_failing_and_its_close_aborts(make_repo, claims):
    repo = make_repo()
    writer = repo.open_writer()
    with FaultPlan(fail_at=1, operations={"write"}).installed(), pytest.raises(OSError):
        writer.write(b"y" * (WRITE_BUFFER_SIZE + 1))
    with pytest.raises(OSError):
        writer.write(b"more")
    with pytest.raises(OSError):
        writer.close()
    assert claims.counts() == {} and claims.writable() == set()


def test_a_failed_sync_poisons_the_file_for_good(make_repo, claims):
    repo = make_repo()
    claim = repo.write_bytes(b"a")
    with FaultPlan(fail_at=1, errno=errno.EIO, operations={"sync"}).installed(), pytest.raises(OSError):
        repo.sync([claim.resource_claim])
    assert claim.resource_claim not in claims.writable(), "the pooled claim was frozen"
    with pytest.raises(OSError, match="an earlier sync of this file failed"):
        repo.sync([claim.resource_claim])
    other = repo.write_bytes(b"b")
    assert other.resource_claim != claim.resource_claim
    repo.sync([other.resource_claim])


# -- sync_written ------------------------------------------------------------------------------


def test_sync_written_syncs_each_file_written_since_the_last_call(make_repo, claims):
    repo = make_repo(max_appendable_size=10, track_written=True)
    written = [repo.write_bytes(b"%d" % i * 20) for i in range(3)]
    files = {repo.path(c.resource_claim) for c in written}
    assert len(files) == 3
    counting = FaultPlan(operations={"sync"})
    with counting.installed():
        repo.sync_written()
    assert {path for op, path in counting.calls} >= {str(p) for p in files}
    assert {str(p.parent) for p in files} <= {path for _, path in counting.calls}, "new files' directories too"
    again = FaultPlan(operations={"sync"})
    with again.installed():
        repo.sync_written()
    assert again.calls == [], "nothing was written since"


def test_sync_written_skips_released_files_and_reports_failures_once(make_repo, claims):
    repo = make_repo(max_appendable_size=10, track_written=True)
    gone = repo.write_bytes(b"g" * 20)
    bad = repo.write_bytes(b"b" * 20)
    claims.decrement(gone.resource_claim)
    repo.release(claims.drain_destructible())
    with FaultPlan(fail_at=1, errno=errno.EIO, operations={"sync"}, matches=str(repo.path(bad.resource_claim))
                   ).installed(), pytest.raises(OSError):
        repo.sync_written()
    (damage,) = repo.damage.entries()
    assert damage.kind == "content claim" and damage.path == str(repo.path(bad.resource_claim))
    repo.sync_written()  # the next checkpoint goes ahead


def test_sync_written_tries_a_file_it_could_not_open_again(make_repo):
    repo = make_repo(track_written=True)
    claim = repo.write_bytes(b"x")
    with FaultPlan(fail_at=1, operations={"open"}).installed(), pytest.raises(OSError):
        repo.sync_written()
    assert not repo.damage.entries()
    counting = FaultPlan(operations={"sync"})
    with counting.installed():
        repo.sync_written()
    assert ("sync", str(repo.path(claim.resource_claim))) in counting.calls


@pytest.mark.parametrize("policy", ["always", "grouped", "os"])
def test_a_checkpoint_syncs_content_only_under_the_os_policy(tmp_path, policy):
    """Under always and grouped every commit synced its content: the checkpoint does not again."""
    storage = NodeStorage(tmp_path, StorageConfig.from_mapping({"flowfile_repository": {"sync_policy": policy}}))
    storage.open(background=False)
    try:
        Node(storage).seed("q", b"a" * 100, b"b" * 100)
        counting = FaultPlan(operations={"sync"}, matches="content_repository")
        with counting.installed():
            storage.flowfiles.checkpoint()
        assert (counting.count > 0) == (policy == "os"), counting.calls
    finally:
        storage.close()
