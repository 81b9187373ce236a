"""Swap file format 2 (chunks of 1,000 FlowFiles, ``ready_at``), format 1 still read, and recovery
that contains damage instead of refusing to start."""

from __future__ import annotations

import struct
import zlib

import msgpack

from engine.content.claims import ResourceClaimManager
from engine.damage import DamageLog
from engine.repository.flowfile_repository import FlowFileRepository
from engine.repository.records import FlowFileRecordSerde, RepositoryRecord
from engine.repository.swap import MAGIC_V1
from engine.wal.serde import UpdateType
from tests.engine.repository.conftest import claim, make_flowfile
from tests.engine.repository.swap_helpers import Node, layout, swap_files


def swapped_out(repo, count: int, **options):
    flowfiles = [make_flowfile(repo, claim("S", offset=i, length=1), index=str(i)) for i in range(count)]
    repo.claim_manager.increment(claim("S").resource_claim, count)
    repo.update([RepositoryRecord.create(f, "q") for f in flowfiles])
    return flowfiles, repo.swap.swap_out("q", flowfiles, **options)


def test_format_2_holds_chunks_of_at_most_1000_flowfiles_and_when_they_are_ready(open_repo):
    repo = open_repo()
    flowfiles, location = swapped_out(repo, 2500)
    file_layout = layout(repo.swap.path(location))
    assert [len(indexes) for _, _, indexes in file_layout.chunks] == [1000, 1000, 500]
    assert repo.swap.read_summary(location).ready_at == 0
    assert repo.swap.read(location).flowfiles == flowfiles

    penalized = [make_flowfile(repo, penalty_expiration=5000 + i) for i in range(3)]
    penalized = [f._replace(penalty_expiration=5000 + i) for i, f in enumerate(penalized)]
    repo.update([RepositoryRecord.create(f, "q") for f in penalized])
    later = repo.swap.swap_out("q", penalized, now=4000)
    assert repo.swap.read_summary(later).ready_at == 5000
    assert repo.swap.swap_in(later) == penalized


def test_format_1_files_are_still_read(tmp_path):
    node = Node.open(tmp_path)
    node.fill(range(100))
    node.close()
    (path,) = swap_files(tmp_path)
    contents = node.storage.flowfiles.swap.read(path.name)
    summary = contents.summary
    raw = {"queue": "q", "count": summary.count, "bytes": summary.bytes, "max_id": summary.max_id,
           "claims": [(*c, n) for c, n in summary.claims.items()], "min_queue_date": summary.min_queue_date,
           "total_queue_date": summary.total_queue_date, "order": summary.order}
    serde = FlowFileRecordSerde()
    body = [serde.to_wire(RepositoryRecord(UpdateType.CREATE, f, "q")) for f in contents.flowfiles]
    path.write_bytes(MAGIC_V1 + b"".join(struct.pack(">II", len(p), zlib.crc32(p)) + p
                                         for p in (msgpack.packb(raw), msgpack.packb(body))))
    node = Node.open(tmp_path)
    assert node.storage.verify().ok
    assert sorted(node.drain()) == list(range(100))
    assert not node.storage.damage.entries() and node.storage.verify().ok
    node.close()


def test_a_damaged_format_1_body_costs_its_flowfiles_and_nothing_else(tmp_path):
    node = Node.open(tmp_path)
    node.fill(range(100))
    node.close()
    (path,) = swap_files(tmp_path)
    data = node.storage.flowfiles.swap.read(path.name)
    assert data.summary.count == 60
    raw = path.read_bytes()
    summary_end = 16 + struct.unpack_from(">I", raw, 8)[0]
    path.write_bytes(MAGIC_V1 + raw[8:summary_end] + struct.pack(">II", 5, 0) + b"trash")
    node = Node.open(tmp_path)
    assert sorted(node.drain()) == list(range(40))
    (report,) = node.storage.damage.entries()
    assert report.offset == summary_end and "checksum" in report.found
    assert "60 FlowFile(s) of connection q lost, 0 swapped back in" in report.effect
    assert node.storage.verify().ok
    node.close()


def test_read_only_recovery_reports_a_missing_swap_file_and_changes_nothing(tmp_path):
    node = Node.open(tmp_path)
    node.fill(range(100))
    node.close()
    (path,) = swap_files(tmp_path)
    path.unlink()
    before = {p: p.read_bytes() for p in (tmp_path / "flowfile_repository").rglob("*") if p.is_file()}
    damage = DamageLog()
    repo = FlowFileRepository(tmp_path / "flowfile_repository", ResourceClaimManager(), damage=damage)
    recovered = repo.recover(read_only=True)
    assert recovered.swap_files == {} and repo.swap_locations == {path.name}
    (report,) = damage.entries()
    assert report.path == str(path) and report.offset is None and "missing" in report.found
    assert before == {p: p.read_bytes() for p in (tmp_path / "flowfile_repository").rglob("*") if p.is_file()}
    assert not (tmp_path / "quarantine").exists()


def test_a_damaged_summary_at_start_up_gives_back_every_readable_chunk(tmp_path):
    node = Node.open(tmp_path, chunk_records=20)
    node.fill(range(100))
    node.close()
    (path,) = swap_files(tmp_path)
    data = bytearray(path.read_bytes())
    data[20] ^= 0x55
    path.write_bytes(bytes(data))
    node = Node.open(tmp_path)
    (report,) = node.storage.damage.entries()
    assert report.offset == 8 and "summary fails its checksum" in report.found
    assert "60 FlowFile(s) of connection q recovered from its readable chunks" in report.effect
    assert node.queue.size().count == 100 and node.storage.verify().ok
    node.close()
    node = Node.open(tmp_path)
    assert not node.storage.damage.entries(), "the log no longer names the file"
    assert sorted(node.drain()) == list(range(100))
    node.close()
