"""The write-ahead log against an in-memory model: random updates, checkpoints and restarts."""

from __future__ import annotations

import errno as errnos
import shutil
import tempfile
from pathlib import Path

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from engine.testing.faults import FaultPlan
from engine.wal import SyncPolicy, UpdateType, WriteAheadLog
from tests.engine.wal.conftest import Rec, RecSerde

ids = st.integers(min_value=0, max_value=30)
values = st.text(max_size=20)


class WriteAheadLogModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="wal-model-"))
        self.records: dict[int, str] = {}
        self.swap: set[str] = set()
        self.wal = self._open(SyncPolicy.OS)

    def _open(self, policy: SyncPolicy) -> WriteAheadLog:
        wal = WriteAheadLog(self.directory, RecSerde(), sync_policy=policy)
        wal.recover()
        return wal

    @rule(changes=st.lists(st.tuples(st.sampled_from(["put", "delete"]), ids, values), min_size=1, max_size=8))
    def update(self, changes):
        records = []
        for op, key, value in changes:
            if op == "put":
                kind = UpdateType.UPDATE if key in self.records else UpdateType.CREATE
                records.append(Rec(kind, key, value))
                self.records[key] = value
            else:
                records.append(Rec(UpdateType.DELETE, key))
                self.records.pop(key, None)
        self.wal.update(records)

    @precondition(lambda self: self.records)
    @rule(data=st.data(), name=st.text(alphabet="abcdef", min_size=1, max_size=6))
    def swap_out(self, data, name):
        key = data.draw(st.sampled_from(sorted(self.records)))
        location = f"{name}.swap"
        self.wal.update([Rec(UpdateType.SWAP_OUT, key, location=location)], force_sync=True)
        del self.records[key]
        self.swap.add(location)

    @precondition(lambda self: self.swap)
    @rule(data=st.data(), key=ids, value=values)
    def swap_in_or_drop(self, data, key, value):
        location = data.draw(st.sampled_from(sorted(self.swap)))
        if key in self.records:
            self.wal.update([Rec(UpdateType.SWAP_FILE_DELETED, None, location=location)])
        else:
            self.wal.update([Rec(UpdateType.SWAP_IN, key, value, location=location)])
            self.records[key] = value
        self.swap.discard(location)

    @precondition(lambda self: self.swap)
    @rule(data=st.data())
    def rename_swap(self, data):
        location = data.draw(st.sampled_from(sorted(self.swap)))
        renamed = "renamed-" + location
        self.wal.update([Rec(UpdateType.SWAP_FILE_RENAMED, None, location=renamed, original_location=location)])
        self.swap.discard(location)
        self.swap.add(renamed)

    @rule()
    def checkpoint(self):
        self.wal.checkpoint()

    @rule(changes=st.lists(st.tuples(ids, values), min_size=1, max_size=4), fail_at=st.integers(1, 4),
          errno=st.sampled_from([errnos.ENOSPC, errnos.EIO]), partial=st.booleans(), also_truncate=st.booleans())
    def update_that_may_fail(self, changes, fail_at, errno, partial, also_truncate):
        """A write, sync or journal open fails: the update raises and changes nothing, or succeeds whole."""
        records = [Rec(UpdateType.UPDATE if key in self.records else UpdateType.CREATE, key, value)
                   for key, value in changes]
        operations = {"write", "sync", "open"} | ({"truncate"} if also_truncate else set())
        plan = FaultPlan(fail_at=fail_at, errno=errno, operations=operations, partial=partial,
                         matches=str(self.directory), persistent=also_truncate)
        try:
            with plan.installed():
                self.wal.update(records)
        except OSError:
            return
        for key, value in changes:
            self.records[key] = value

    @rule(fail_at=st.integers(1, 12), errno=st.sampled_from([errnos.ENOSPC, errnos.EIO]))
    def checkpoint_that_may_fail(self, fail_at, errno):
        """A checkpoint that fails anywhere leaves the log as it was, and the log keeps working."""
        plan = FaultPlan(fail_at=fail_at, errno=errno, matches=str(self.directory))
        try:
            with plan.installed():
                self.wal.checkpoint()
        except OSError:
            pass

    @rule(policy=st.sampled_from(list(SyncPolicy)))
    def crash_and_restart(self, policy):
        # The old instance is abandoned without closing, as a killed process leaves it.
        self.wal = self._open(policy)

    @rule()
    def clean_restart(self):
        self.wal.close()
        self.wal = self._open(SyncPolicy.GROUPED)

    @invariant()
    def state_matches_the_model(self):
        assert {k: r.value for k, r in self.wal.records.items()} == self.records
        assert self.wal.swap_locations == self.swap

    def teardown(self):
        shutil.rmtree(self.directory, ignore_errors=True)


WriteAheadLogModel.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestWriteAheadLogModel = WriteAheadLogModel.TestCase
