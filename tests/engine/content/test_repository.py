from __future__ import annotations

import io
import os
import re
import threading
from collections import Counter
from pathlib import Path

import pytest

from engine.content.claims import ResourceClaimManager
from engine.content.reader import READ_CHUNK_SIZE
from engine.content.repository import ContentNotFoundError
from engine.flowfile import ContentClaim, ResourceClaim
from tests.engine.content.conftest import RepoFactory


def test_small_contents_share_a_file_until_max_appendable_size(
    make_repo: RepoFactory, claims: ResourceClaimManager
) -> None:
    repo = make_repo(max_appendable_size=1000)
    written = [repo.write_bytes(bytes([i]) * 100) for i in range(12)]

    first, second = written[0].resource_claim, written[10].resource_claim
    assert {c.resource_claim for c in written[:10]} == {first}
    assert [c.offset for c in written[:10]] == [i * 100 for i in range(10)]
    assert second != first and written[11].resource_claim == second
    assert os.path.getsize(repo.path(first)) == 1000
    assert claims.count(first) == 10 and claims.count(second) == 2
    # A full file is frozen; the partly filled one stays writable for the next content.
    assert claims.writable() == {second}
    for i, claim in enumerate(written):
        assert repo.read_bytes(claim) == bytes([i]) * 100


def test_a_content_larger_than_max_appendable_size_freezes_its_file(
    make_repo: RepoFactory, claims: ResourceClaimManager
) -> None:
    repo = make_repo(max_appendable_size=1000)
    big = repo.write_bytes(b"b" * 5000)
    small = repo.write_bytes(b"s")
    assert big.resource_claim != small.resource_claim
    assert big.resource_claim not in claims.writable()
    assert repo.read_bytes(big) == b"b" * 5000


def test_claims_spread_over_containers_round_robin_and_over_sections(make_repo: RepoFactory) -> None:
    repo = make_repo(containers=("disk1", "disk2"), sections=3, max_appendable_size=1)
    written = [repo.write_bytes(b"%d" % i) for i in range(12)]

    rcs = [c.resource_claim for c in written]
    assert [rc.container for rc in rcs] == ["disk1", "disk2"] * 6
    per_container = Counter((rc.container, rc.section) for rc in rcs)
    assert per_container == {(name, s): 2 for name in ("disk1", "disk2") for s in range(3)}
    assert len(set(rcs)) == 12
    for rc in rcs:
        assert re.fullmatch(r"\d{13}-\d+", rc.identifier)
        assert repo.path(rc) == repo.containers[rc.container] / str(rc.section) / rc.identifier
        assert repo.path(rc).is_file()
        assert repo.archive_path(rc) == repo.path(rc).parent / "archive" / rc.identifier
    assert [repo.read_bytes(c) for c in written] == [b"%d" % i for i in range(12)]


def test_sections_exist_from_the_start(make_repo: RepoFactory, tmp_path: Path) -> None:
    make_repo(containers=("a", "b"), sections=5)
    for name in ("a", "b"):
        assert sorted(p.name for p in (tmp_path / name).iterdir()) == ["0", "1", "2", "3", "4"]


def test_streaming_writer_and_reader(make_repo: RepoFactory) -> None:
    repo = make_repo()
    payload = os.urandom(3 * READ_CHUNK_SIZE + 12345)
    with repo.open_writer() as writer:
        for start in range(0, len(payload), 7777):
            assert writer.write(payload[start : start + 7777]) == len(payload[start : start + 7777])
        assert writer.bytes_written == len(payload)
        claim = writer.close()
    assert writer.claim == claim and claim.length == len(payload)

    with repo.open_reader(claim) as reader:
        assert reader.read(10) == payload[:10]
        buffer = bytearray(100)
        assert reader.readinto(buffer) == 100 and bytes(buffer) == payload[10:110]
        assert reader.tell() == 110
        assert reader.read() == payload[110:]
        assert reader.read() == b"" and reader.readinto(buffer) == 0
        reader.seek(-5, io.SEEK_END)
        assert reader.read() == payload[-5:]
    assert reader.closed

    with repo.open_reader(claim) as reader:
        chunks = list(reader)
    assert all(len(chunk) <= READ_CHUNK_SIZE for chunk in chunks) and len(chunks) == 4
    assert b"".join(chunks) == payload


def test_reader_is_bounded_to_its_claim(make_repo: RepoFactory) -> None:
    repo = make_repo()
    first = repo.write_bytes(b"first-content")
    second = repo.write_bytes(b"SECOND")
    assert first.resource_claim == second.resource_claim
    with repo.open_reader(second) as reader:
        assert reader.read(1000) == b"SECOND"
        assert reader.read(1000) == b""
    with repo.open_reader(first) as reader:
        assert reader.read() == b"first-content"
    assert io.BufferedReader(repo.open_reader(second)).read() == b"SECOND"


def test_zero_length_content(make_repo: RepoFactory, claims: ResourceClaimManager) -> None:
    repo = make_repo()
    repo.write_bytes(b"before")
    with repo.open_writer() as writer:
        empty = writer.close()
    assert empty.length == 0 and empty.offset == 6
    assert claims.count(empty.resource_claim) == 2
    assert repo.read_bytes(empty) == b""
    assert list(repo.open_reader(empty)) == []
    assert repo.exists(empty)
    assert repo.write_bytes(b"").length == 0


def test_slices_read_the_right_bytes(make_repo: RepoFactory) -> None:
    repo = make_repo()
    repo.write_bytes(b"padding")
    claim = repo.write_bytes(b"0123456789")
    part = claim.slice(3, 4)
    assert part == ContentClaim(claim.resource_claim, claim.offset + 3, 4)
    assert repo.read_bytes(part) == b"3456"
    assert repo.read_bytes(part.slice(1, 2)) == b"45"
    assert repo.read_bytes(claim.slice(10, 0)) == b""


def test_concurrent_writers_each_own_a_resource_claim(
    make_repo: RepoFactory, claims: ResourceClaimManager
) -> None:
    repo = make_repo(containers=("a", "b"), max_appendable_size=4096)
    threads, per_thread = 8, 150
    barrier = threading.Barrier(threads)
    held: list[ResourceClaim] = []
    results: dict[int, list[tuple[ContentClaim, bytes]]] = {}
    errors: list[BaseException] = []

    def work(number: int) -> None:
        try:
            out = []
            with repo.open_writer() as writer:
                held.append(writer.resource_claim)
                barrier.wait()
                writer.write(b"first-%d" % number)
                out.append((writer.close(), b"first-%d" % number))
            for i in range(per_thread):
                data = b"%d:%d;" % (number, i) * (i % 7 + 1)
                writer = repo.open_writer()
                writer.write(data[:3])
                writer.write(data[3:])
                out.append((writer.close(), data))
            results[number] = out
        except BaseException as error:
            errors.append(error)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    assert not errors
    assert len(set(held)) == threads
    everything = [item for out in results.values() for item in out]
    assert len(everything) == threads * (per_thread + 1)
    for claim, data in everything:
        assert repo.read_bytes(claim) == data
    # No two contents overlap inside a file.
    by_file: dict[ResourceClaim, list[ContentClaim]] = {}
    for claim, _ in everything:
        by_file.setdefault(claim.resource_claim, []).append(claim)
    for contents in by_file.values():
        contents.sort(key=lambda c: c.offset)
        for before, after in zip(contents, contents[1:]):
            assert before.offset + before.length <= after.offset
    assert sum(claims.counts().values()) == len(everything)


def test_abort_leaves_bytes_unreferenced_and_reuses_the_file(
    make_repo: RepoFactory, claims: ResourceClaimManager
) -> None:
    repo = make_repo(max_appendable_size=1 << 20)
    kept = repo.write_bytes(b"kept")
    writer = repo.open_writer()
    writer.write(b"x" * 100)
    writer.abort()
    writer.abort()
    assert claims.count(kept.resource_claim) == 1
    with pytest.raises(ValueError):
        writer.write(b"more")

    with pytest.raises(RuntimeError):
        with repo.open_writer() as failing:
            failing.write(b"y" * 70_000)
            raise RuntimeError("processor failed")
    assert failing.claim is None
    assert claims.count(kept.resource_claim) == 1

    after = repo.write_bytes(b"after")
    assert after.resource_claim == kept.resource_claim
    # The small aborted write never left the writer's buffer; the large one reached the file.
    assert after.offset == 4 + 70_000
    assert repo.read_bytes(after) == b"after"


def test_abort_of_a_full_file_freezes_it(make_repo: RepoFactory, claims: ResourceClaimManager) -> None:
    repo = make_repo(max_appendable_size=100)
    writer = repo.open_writer()
    writer.write(b"z" * 100_000)
    writer.abort()
    assert writer.resource_claim not in claims.writable()
    assert claims.drain_destructible() == [writer.resource_claim]


def test_missing_content_raises_a_clear_error(make_repo: RepoFactory) -> None:
    repo = make_repo()
    missing = ContentClaim(ResourceClaim("c0", 2, "1700000000000-7"), 0, 10)
    with pytest.raises(ContentNotFoundError) as caught:
        repo.open_reader(missing)
    message = str(caught.value)
    assert "c0/2/1700000000000-7" in message
    assert str(repo.path(missing.resource_claim)) in message
    assert str(repo.archive_path(missing.resource_claim)) in message
    assert not repo.exists(missing)
    with pytest.raises(ContentNotFoundError, match="unknown container 'elsewhere'"):
        repo.read_bytes(ContentClaim(ResourceClaim("elsewhere", 0, "1-1"), 0, 0))


def test_content_past_the_end_of_the_file_is_not_found(make_repo: RepoFactory) -> None:
    repo = make_repo()
    claim = repo.write_bytes(b"short")
    beyond = ContentClaim(claim.resource_claim, 0, 50)
    with pytest.raises(ContentNotFoundError, match="has 5 bytes, the claim ends at byte 50"):
        repo.read_bytes(beyond)
    assert not repo.exists(beyond)


def test_read_falls_back_to_the_archive(make_repo: RepoFactory) -> None:
    repo = make_repo()
    claim = repo.write_bytes(b"archived content")
    live = repo.path(claim.resource_claim)
    archived = repo.archive_path(claim.resource_claim)
    archived.parent.mkdir()
    os.rename(live, archived)
    with repo.open_reader(claim) as reader:
        assert reader.path == archived
        assert reader.read() == b"archived content"
    assert repo.exists(claim)
    assert repo.resource_claim_length(claim.resource_claim) == len(b"archived content")


def test_a_new_repository_never_appends_to_an_old_file(tmp_path: Path, make_repo: RepoFactory) -> None:
    first = make_repo(manager=ResourceClaimManager())
    old = first.write_bytes(b"old content")
    old_size = os.path.getsize(first.path(old.resource_claim))
    # No close(): a crash leaves the appendable file behind as it was.
    second = make_repo(manager=ResourceClaimManager())
    new = [second.write_bytes(b"new content %d" % i) for i in range(20)]
    assert all(c.resource_claim != old.resource_claim for c in new)
    assert os.path.getsize(first.path(old.resource_claim)) == old_size
    assert second.read_bytes(old) == b"old content"


def test_writers_are_readable_right_after_close_and_file_stays_open(make_repo: RepoFactory) -> None:
    repo = make_repo()
    for i in range(50):
        data = os.urandom(i * 13)
        assert repo.read_bytes(repo.write_bytes(memoryview(data))) == data


def test_sync_skips_files_already_durable(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(max_appendable_size=1 << 20)
    synced: list[int] = []
    real = os.fdatasync

    def counting(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", counting)
    first = repo.write_bytes(b"one")
    other = make_repo(containers=("c1",)).write_bytes(b"other")
    repo.sync([first.resource_claim, first.resource_claim])
    assert len(synced) == 1
    repo.sync([first.resource_claim])
    assert len(synced) == 1
    second = repo.write_bytes(b"two")
    assert second.resource_claim == first.resource_claim
    threads = [threading.Thread(target=repo.sync, args=([second.resource_claim],)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(synced) == 2
    del other


def test_sync_of_a_missing_file_fails(make_repo: RepoFactory) -> None:
    repo = make_repo()
    with pytest.raises(FileNotFoundError):
        repo.sync([ResourceClaim("c0", 0, "1-1")])


def test_close_freezes_pooled_claims(make_repo: RepoFactory, claims: ResourceClaimManager) -> None:
    repo = make_repo()
    pooled = repo.open_writer()
    held = repo.open_writer()
    claim = pooled.close()
    assert claims.writable() == {pooled.resource_claim, held.resource_claim}
    repo.close()
    assert claims.writable() == {held.resource_claim}
    held.write(b"late")
    late = held.close()
    assert claims.writable() == set()
    assert claims.count(claim.resource_claim) == 1
    assert repo.read_bytes(late) == b"late"
    with pytest.raises(RuntimeError, match="closed"):
        repo.open_writer()


def test_inspection(make_repo: RepoFactory) -> None:
    repo = make_repo(containers=("a", "b"), max_appendable_size=10)
    written = [repo.write_bytes(b"x" * 10) for _ in range(5)]
    assert sorted(repo.iter_resource_claims()) == sorted(c.resource_claim for c in written)
    assert repo.resource_claim_length(written[0].resource_claim) == 10
    assert repo.resource_claim_length(ResourceClaim("a", 0, "1-1")) is None
    (repo.containers["a"] / "0" / "stray.txt").write_bytes(b"not a claim")
    stats = repo.stats()
    assert stats.containers["a"].live_count == 3 and stats.containers["a"].live_bytes == 30
    assert stats.containers["b"].live_count == 2
    assert stats.total.live_count == 5 and stats.total.archived_count == 0


def test_sync_of_many_files_in_parallel(make_repo: RepoFactory) -> None:
    repo = make_repo(containers=("a", "b"), max_appendable_size=1)
    written = [repo.write_bytes(b"%d" % i) for i in range(40)]
    repo.sync([c.resource_claim for c in written])
    repo.close()
    repo.sync([c.resource_claim for c in written])
    assert [repo.read_bytes(c) for c in written] == [b"%d" % i for i in range(40)]
