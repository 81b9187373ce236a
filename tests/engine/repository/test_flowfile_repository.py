from engine.repository.records import RepositoryRecord
from tests.engine.repository.conftest import claim, make_flowfile


def test_recovery_returns_flowfiles_per_queue_and_rebuilds_claim_counts(open_repo):
    repo = open_repo()
    shared = claim("A")
    a = make_flowfile(repo, shared)
    b = make_flowfile(repo, shared._replace(offset=10))
    c = make_flowfile(repo, claim("B"))
    repo.update([RepositoryRecord.create(a, "q1"), RepositoryRecord.create(b, "q1"), RepositoryRecord.create(c, "q2")])
    moved = c.with_attributes({"x": "1"})
    repo.update([RepositoryRecord.update(moved, "q3", c.content_claim)])

    again = open_repo()
    queues = again.recovered.queues
    assert queues["q1"] == [a, b]
    assert queues["q3"] == [moved]
    assert "q2" not in queues
    assert again.claim_manager.counts() == {shared.resource_claim: 2, c.content_claim.resource_claim: 1}


def test_ids_continue_after_the_highest_recovered(open_repo):
    repo = open_repo()
    flowfiles = [make_flowfile(repo) for _ in range(5)]
    repo.update([RepositoryRecord.create(f, "q") for f in flowfiles])
    assert open_repo().next_id() == 5


def test_a_dropped_claim_is_released_only_after_the_next_checkpoint(open_repo, released):
    repo = open_repo()
    content = claim("gone")
    flowfile = make_flowfile(repo, content)
    repo.claim_manager.increment(content.resource_claim)  # as the content writer does
    repo.update([RepositoryRecord.create(flowfile, "q")])
    repo.update([RepositoryRecord.delete(flowfile)])
    assert repo.claim_manager.count(content.resource_claim) == 0
    assert released == []
    repo.checkpoint()
    assert released == [content.resource_claim]


def test_changed_content_releases_the_old_claim_but_not_a_shared_one(open_repo, released):
    repo = open_repo()
    old, new, shared = claim("old"), claim("new"), claim("shared")
    first = make_flowfile(repo, old)
    second = make_flowfile(repo, shared)
    third = make_flowfile(repo, shared._replace(offset=10))
    repo.claim_manager.increment_all([old.resource_claim, shared.resource_claim, shared.resource_claim])
    repo.update([RepositoryRecord.create(f, "q") for f in (first, second, third)])
    repo.claim_manager.increment(new.resource_claim)
    repo.update([RepositoryRecord.update(first._replace(content_claim=new), "q", old)])
    repo.update([RepositoryRecord.delete(second)])
    repo.checkpoint()
    assert released == [old.resource_claim]
    assert repo.claim_manager.count(shared.resource_claim) == 1


def test_a_claim_released_after_the_checkpoint_cut_waits_for_the_next_one(open_repo, released):
    repo = open_repo()
    content = claim("late")
    flowfile = make_flowfile(repo, content)
    repo.claim_manager.increment(content.resource_claim)
    repo.update([RepositoryRecord.create(flowfile, "q")])

    def drop_during_checkpoint():
        # runs at the cut: the drop below lands in the new journal, not in this snapshot
        drained = repo.claim_manager.drain_destructible()
        return drained

    report, token = repo.wal.checkpoint(on_cut=drop_during_checkpoint)
    repo.update([RepositoryRecord.delete(flowfile)])
    assert token == [] and released == []
    repo.checkpoint()
    assert released == [content.resource_claim]


def test_swap_locations_survive_checkpoint_and_recovery(open_repo):
    repo = open_repo()
    flowfiles = [make_flowfile(repo, claim("S", offset=i, length=1)) for i in range(20)]
    repo.claim_manager.increment(claim("S").resource_claim, 20)
    repo.update([RepositoryRecord.create(f, "q") for f in flowfiles])
    location = repo.swap.swap_out("q", flowfiles[10:])
    assert len(repo.wal.records) == 10
    repo.checkpoint()

    again = open_repo()
    assert again.swap_locations == {location}
    assert [f.id for f in again.recovered.queues["q"]] == [f.id for f in flowfiles[:10]]
    (swap_location, summary), = again.recovered.swap_files["q"]
    assert swap_location == location and summary.count == 10 and summary.max_id == flowfiles[-1].id
    assert summary.bytes == 10
    assert again.claim_manager.count(claim("S").resource_claim) == 20
    assert again.recovered.flowfile_count == 20
    assert again.next_id() == 20

    swapped_in = again.swap.swap_in(location)
    assert swapped_in == flowfiles[10:]
    assert not again.swap.path(location).exists()
    third = open_repo()
    assert third.swap_locations == set()
    assert len(third.recovered.queues["q"]) == 20


def test_unlogged_swap_files_and_parts_are_removed_at_recovery(open_repo):
    repo = open_repo()
    repo.swap.directory.mkdir()
    stray = repo.swap.directory / "123-q-stray.swap"
    part = repo.swap.directory / "124-q-x.swap.part"
    stray.write_bytes(b"FSSWAP1\n")
    part.write_bytes(b"partial")
    again = open_repo()
    assert again.recovered.swap_files == {}
    assert not stray.exists() and not part.exists()
