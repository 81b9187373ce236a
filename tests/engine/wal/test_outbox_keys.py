"""The runs of open outbox keys: what an OUTBOX record names, checked against a plain set."""

from __future__ import annotations

import random

from engine.wal.outbox_keys import OpenKeys, in_runs


def test_runs_match_a_set_through_random_adds_and_discards():
    rng = random.Random(7)
    keys, expected, next_key = OpenKeys(), set(), 1000
    for _ in range(5000):
        if expected and rng.random() < 0.45:
            key = rng.choice(sorted(expected)) if rng.random() < 0.9 else next_key + 5  # absent keys too
            keys.discard(key)
            expected.discard(key)
        else:
            next_key += rng.choice((1, 1, 1, 2, 7))
            keys.add(next_key)
            expected.add(next_key)
        runs = keys.runs()
        assert runs == sorted(runs) and all(a <= b for a, b in zip(runs[::2], runs[1::2]))
        assert all(runs[i] + 1 < runs[i + 1] for i in range(1, len(runs) - 1, 2)), "runs are maximal"
        covered = {k for first, last in zip(runs[::2], runs[1::2]) for k in range(first, last + 1)}
        assert covered == expected
    for key in range(990, next_key + 10):
        assert in_runs(keys.runs(), key) == (key in expected) == (key in keys)


def test_consecutive_keys_make_one_run_whatever_their_number():
    keys = OpenKeys(range(10, 100_010))
    assert keys.runs() == [10, 100_009]
    keys.discard(10)
    keys.discard(100_009)
    keys.discard(500)
    assert keys.runs() == [11, 499, 501, 100_008]
    assert not in_runs([], 5) and in_runs([5, 5], 5) and not in_runs([5, 5], 6) and not in_runs([5, 5], 4)
