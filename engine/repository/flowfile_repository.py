"""The FlowFile repository: every FlowFile's latest state, durable through the write-ahead log."""

from __future__ import annotations

import itertools
import logging
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Callable, Iterable

from engine.content.claims import ResourceClaimManager
from engine.damage import DamageLog, Quarantine
from engine.flowfile import FlowFile, ResourceClaim
from engine.memory import gc_paused
from engine.repository.records import FlowFileRecordSerde, RepositoryRecord
from engine.repository.swap import SwapManager, SwapSummary
from engine.wal import SyncPolicy, WriteAheadLog
from engine.wal.log import CheckpointReport, RecoveryReport
from engine.wal.serde import UpdateType

__all__ = ["FlowFileRepository", "RecoveredFlowFiles"]

log = logging.getLogger(__name__)

_DELETE = int(UpdateType.DELETE)
_by_id = itemgetter(0)


def _content_claim(record: RepositoryRecord):
    return record.flowfile.content_claim


@dataclass
class RecoveredFlowFiles:
    """The FlowFiles found at start-up, per queue, and the swap files of each queue."""

    queues: dict[str, list[FlowFile]] = field(default_factory=dict)
    swap_files: dict[str, list[tuple[str, SwapSummary]]] = field(default_factory=dict)
    wal: RecoveryReport | None = None

    @property
    def flowfile_count(self) -> int:
        """FlowFiles in memory plus those in swap files."""
        in_memory = sum(len(flowfiles) for flowfiles in self.queues.values())
        swapped = sum(summary.count for files in self.swap_files.values() for _, summary in files)
        return in_memory + swapped


class FlowFileRepository:
    """Keeps FlowFile state in a write-ahead log and counts the content claims it references.

    ``update`` takes the records of one session commit as one transaction. Content claims whose
    last reference an update removes are released (through ``release_claims``) only after the
    next checkpoint has made that removal durable.
    """

    def __init__(
        self,
        directory: Path,
        claim_manager: ResourceClaimManager,
        *,
        sync_policy: SyncPolicy = SyncPolicy.GROUPED,
        accept_damage: bool = False,
        release_claims: Callable[[list[ResourceClaim]], None] = lambda claims: None,
        sync_content: Callable[[], None] | None = None,
        damage: DamageLog | None = None,
        quarantine: Quarantine | None = None,
        transfer_mark_window: float = 24 * 3600.0,
    ) -> None:
        self.directory = Path(directory)
        self.damage = damage or DamageLog()
        self.quarantine = quarantine or Quarantine(self.directory.parent)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.claim_manager = claim_manager
        self.release_claims = release_claims
        self.sync_content = sync_content
        self.wal: WriteAheadLog[RepositoryRecord] = WriteAheadLog(
            self.directory, FlowFileRecordSerde(), sync_policy=sync_policy, accept_damage=accept_damage,
            damage=self.damage, quarantine=self.quarantine,
            transfer_mark_window_ms=int(transfer_mark_window * 1000),
        )
        self.swap = SwapManager(self)
        self._ids = itertools.count()
        self._checkpoint_thread: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def sync_policy(self) -> SyncPolicy:
        """The write-ahead log's sync policy."""
        return self.wal.sync_policy

    @property
    def swap_locations(self) -> set[str]:
        """Swap files the log knows of."""
        return self.wal.swap_locations

    def was_received(self, key: str) -> bool:
        """Whether a committed transfer mark ``key`` (a peer's FlowFile) is still remembered."""
        return key in self.wal.transfer_marks

    def recover(self, *, read_only: bool = False) -> RecoveredFlowFiles:
        """Load the log, rebuild claimant counts, and return the FlowFiles per queue.

        ``read_only`` changes no file (for inspection); the repository then accepts no update.
        """
        with gc_paused():
            return self._recover(read_only)

    def _recover(self, read_only: bool) -> RecoveredFlowFiles:
        report = self.wal.recover(read_only=read_only)
        recovered = RecoveredFlowFiles(wal=report)
        # Before the records are read: a damaged swap file gives its readable FlowFiles back to them.
        recovered.swap_files = self.swap.recover(read_only=read_only, keep_strays=bool(report.damages))
        records = self.wal.records
        max_id = max(records, default=-1)
        queues: dict[str, list[FlowFile]] = defaultdict(list)
        for record in records.values():
            queues[record.queue_id].append(record.flowfile)
        for flowfiles in queues.values():
            flowfiles.sort(key=_by_id)
        recovered.queues = dict(queues)
        self.claim_manager.increment_all(
            claim.resource_claim for claim in map(_content_claim, records.values()) if claim is not None
        )
        for files in recovered.swap_files.values():
            for _, summary in files:
                max_id = max(max_id, summary.max_id)
                for claim, count in summary.claims.items():
                    self.claim_manager.increment(claim, count)
        self._ids = itertools.count(max_id + 1)
        return recovered

    def next_id(self) -> int:
        """A FlowFile id never used before on this node."""
        return next(self._ids)

    def update(self, records: Iterable[RepositoryRecord], *, force_sync: bool = False) -> None:
        """Write ``records`` as one transaction, then drop the claimants they gave up."""
        if type(records) is not list:
            records = list(records)
        self.wal.update(records, force_sync=force_sync)
        released = [
            record.original_claim.resource_claim
            for record in records
            if record.original_claim is not None
            and (record.update_type == _DELETE or record.flowfile.content_claim != record.original_claim)
        ]
        if released:
            self.claim_manager.decrement_all(released)

    def checkpoint(self) -> CheckpointReport:
        """Snapshot the log, then release the content claims the snapshot no longer references.

        Under the ``os`` policy the content written since the last checkpoint is synced first
        (``sync_content``), so the snapshot never names content a power loss could take; the
        other policies sync content with each commit. If the checkpoint fails, the
        claims it took stay queued for the next one.
        """
        taken: list[list[ResourceClaim]] = []

        def cut() -> list[ResourceClaim]:
            taken.append(self.claim_manager.drain_destructible())
            return taken[0]

        try:
            report, destructible = self.wal.checkpoint(on_cut=cut, before_snapshot=self.sync_content)
        except BaseException:
            if taken:
                self.claim_manager.requeue_destructible(taken[0])
            raise
        if destructible:
            self.release_claims(destructible)
        return report

    def live_flowfiles(self) -> list[tuple[str, FlowFile]]:
        """(queue id, FlowFile) for every FlowFile held in memory by the log."""
        return [(record.queue_id, record.flowfile) for record in list(self.wal.records.values())]

    def start(self, checkpoint_interval: float) -> None:
        """Checkpoint every ``checkpoint_interval`` seconds on a background thread."""
        def run() -> None:
            while not self._stop.wait(checkpoint_interval):
                try:
                    self.checkpoint()
                except OSError as error:
                    log.error("FlowFile repository checkpoint failed: %s; retrying at the next interval", error)
                except Exception:
                    log.exception("FlowFile repository checkpoint failed; retrying at the next interval")

        self._checkpoint_thread = threading.Thread(target=run, name="flowfile-checkpoint", daemon=True)
        self._checkpoint_thread.start()

    def close(self) -> None:
        """Stop checkpointing, take a final checkpoint and close the log (idempotent).

        The log is closed even when the final checkpoint fails (a full disk); the checkpoint's
        error is raised afterwards: every committed transaction is in the journals and is
        recovered at the next start.
        """
        if self.wal.closed:
            return
        self._stop.set()
        if self._checkpoint_thread is not None:
            self._checkpoint_thread.join()
        try:
            self.checkpoint()
        finally:
            self.wal.close(checkpoint=False)
