"""The outbox of the FlowFile repository's log: entries committed with a transaction, settled
once their work is done, and after a crash only the unsettled ones come back."""

from __future__ import annotations

from engine.repository.records import RepositoryRecord
from tests.engine.repository.conftest import make_flowfile


def commit_entry(repo, value: bytes, *, flowfile=True) -> int:
    key, still_open = repo.wal.open_outbox_entry()
    records = [RepositoryRecord.create(make_flowfile(repo), "q")] if flowfile else []
    repo.update([*records, RepositoryRecord.outbox(key, [value], still_open)])
    return key


def test_after_a_crash_only_the_entries_left_unsettled_come_back(open_repo):
    repo = open_repo()
    keys = []
    for i in range(300):
        keys.append(commit_entry(repo, b"event %d" % i))
        if i not in (50, 298, 299):
            repo.wal.settle_outbox(keys[-1])
    assert repo.wal.outbox == {keys[i]: [b"event %d" % i] for i in (50, 298, 299)}

    again = open_repo()  # the first one never closed: its journal is what a killed node leaves
    assert again.wal.outbox == {keys[i]: [b"event %d" % i] for i in (50, 298, 299)}
    assert again.recovered.wal.outbox == 3
    assert len(again.recovered.queues["q"]) == 300


def test_an_entry_settled_after_the_last_record_comes_back_its_work_done(open_repo):
    repo = open_repo()
    keys = [commit_entry(repo, b"event %d" % i) for i in range(3)]
    for key in keys:
        repo.wal.settle_outbox(key)
    # Nothing was written after they were settled: the log cannot know. The work is done
    # again only if it is not found done (NodeStorage checks the provenance repository).
    assert set(open_repo().wal.outbox) == set(keys)


def test_an_entry_committed_after_a_higher_key_is_not_taken_for_settled(open_repo):
    repo = open_repo()
    low, low_open = repo.wal.open_outbox_entry()
    high, high_open = repo.wal.open_outbox_entry()
    assert high > low and high_open == [low, low]  # one run, from low to low
    repo.update([RepositoryRecord.outbox(high, [b"high"], high_open)])
    repo.wal.settle_outbox(high)
    repo.update([RepositoryRecord.outbox(low, [b"low"], low_open)])  # journaled after the higher key

    assert open_repo().wal.outbox[low] == [b"low"]


def test_an_open_entry_survives_replay_past_later_entries_and_a_checkpoint(open_repo):
    repo = open_repo()
    stuck = commit_entry(repo, b"stuck")  # its work failed: never settled
    for i in range(20):
        repo.wal.settle_outbox(commit_entry(repo, b"done %d" % i))
    last = commit_entry(repo, b"last")
    again = open_repo()
    assert again.wal.outbox == {stuck: [b"stuck"], last: [b"last"]}
    again.wal.settle_outbox(last)
    again.checkpoint()
    later = []
    for i in range(3):
        later.append(commit_entry(again, b"after %d" % i))
        again.wal.settle_outbox(later[-1])
    third = open_repo()
    assert third.wal.outbox == {stuck: [b"stuck"], later[-1]: [b"after 2"]}, \
        "kept by the snapshot and by every later record"
    assert later[0] > stuck, "keys taken after a restart are higher than the recovered ones"


def test_settled_entries_are_left_out_of_the_snapshot(open_repo):
    repo = open_repo()
    kept = commit_entry(repo, b"kept")
    repo.wal.settle_outbox(commit_entry(repo, b"settled"))
    assert repo.checkpoint().outbox == 1
    again = open_repo()
    assert again.wal.outbox == {kept: [b"kept"]}
    assert again.recovered.wal.snapshot_max_txn_id >= 0


def test_entries_kept_open_for_long_are_named_by_runs_and_come_back_around_the_settled_ones(open_repo):
    repo = open_repo()
    keys = [commit_entry(repo, b"held %d" % i) for i in range(2000)]  # a provenance disk refusing writes
    settled = set(keys[500:700]) | {keys[1000]}
    for key in settled:
        repo.wal.settle_outbox(key)
    key, still_open = repo.wal.open_outbox_entry()
    assert still_open == [keys[0], keys[499], keys[700], keys[999], keys[1001], keys[1999]]
    repo.update([RepositoryRecord.outbox(key, [b"last"], still_open)])

    again = open_repo()
    expected = {k: [b"held %d" % i] for i, k in enumerate(keys) if k not in settled}
    assert again.wal.outbox == {**expected, key: [b"last"]}
