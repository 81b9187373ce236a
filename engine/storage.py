"""A node's repositories, opened, recovered and closed together over one data directory.

Data directory layout::

    flowfile_repository/    snapshot, journals/, swap/
    content_repository/     the default content container: <section>/<claim>, <section>/archive/
    provenance_repository/  journals and time shards of provenance events

Start-up order: the FlowFile repository recovers first (its snapshot and journals say which
FlowFiles exist); claimant counts are rebuilt from the recovered FlowFiles and swap files;
content that no FlowFile references (written by sessions that never committed) is collected;
then the provenance repository recovers, the provenance events of commits the node died too
early to register are registered (see ``commit``), and the background work starts.

One node per data directory: a ``NodeStorage`` takes the exclusive lock of the directory
(``engine.lock``) before it touches anything in it, and gives it back at ``close``.
"""

from __future__ import annotations

import functools
import gc
import logging
from pathlib import Path
from typing import Callable

from engine.config import StorageConfig
from engine.content.claims import ResourceClaimManager
from engine.content.repository import ContentRepository
from engine.damage import DamageLog, Quarantine
from engine.lock import DataDirectoryLock
from engine.provenance.event import ProvenanceEvent
from engine.provenance.repository import ProvenanceRepository
from engine.repository.flowfile_repository import FlowFileRepository, RecoveredFlowFiles
from engine.repository.records import RepositoryRecord
from engine.verify import Verification, verify
from engine.wal import SyncPolicy

__all__ = ["NodeStorage"]

log = logging.getLogger(__name__)


class NodeStorage:
    """The FlowFile, content and provenance repositories of one node, and their claim counts.

    Use ``open()`` (or the context manager) to recover, and ``close()`` to checkpoint and stop.
    Making one locks the data directory (``node`` names the holder in the lock file); raises
    ``engine.lock.DataDirectoryInUseError`` while another holds it.
    """

    def __init__(self, data_dir: str | Path, config: StorageConfig | None = None, *, node: str | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.lock = DataDirectoryLock(self.data_dir, node)
        try:
            self._make_repositories(config)
        except BaseException:
            self.lock.release()
            raise

    def _make_repositories(self, config: StorageConfig | None) -> None:
        self.config = config or StorageConfig()
        self.claims = ResourceClaimManager()
        #: Damage found in the data directory since the node started (see ``engine.damage``).
        self.damage = DamageLog()
        #: Where damaged files, and files given up to start anyway, are kept for the operator.
        self.quarantine = Quarantine(self.data_dir)
        flowfile_config = self.config.flowfile_repository
        self.content = ContentRepository(
            self.config.container_paths(self.data_dir), self.claims, self.config.content_repository,
            damage=self.damage, quarantine=self.quarantine,
            track_written=flowfile_config.sync_policy is SyncPolicy.OS,
        )
        self.flowfiles = FlowFileRepository(
            self.data_dir / "flowfile_repository",
            self.claims,
            sync_policy=flowfile_config.sync_policy,
            accept_damage=flowfile_config.accept_damage,
            release_claims=self.content.release,
            sync_content=self.content.sync_written if flowfile_config.sync_policy is SyncPolicy.OS else None,
            damage=self.damage,
            quarantine=self.quarantine,
            transfer_mark_window=flowfile_config.transfer_mark_window,
        )
        self.provenance = ProvenanceRepository(
            self.data_dir / "provenance_repository", self.config.provenance_repository,
            damage=self.damage, quarantine=self.quarantine,
        )
        self.recovered: RecoveredFlowFiles | None = None

    def open(self, *, background: bool = True) -> RecoveredFlowFiles:
        """Recover every repository; with ``background``, start checkpoints, cleanup and rollover.

        When recovery fails (a damaged log refuses to start), the data directory is unlocked
        and this storage is done with: nothing was changed on disk.
        """
        try:
            self.recovered = self.flowfiles.recover()
        except BaseException:
            self.lock.release()
            raise
        referenced = set(self.claims.counts())
        orphans = self.content.collect_orphans(referenced, keep=bool(self.recovered.wal.damages))
        if orphans:
            log.info("collected %d content claim(s) that no committed FlowFile references", orphans)
        self.provenance.open()
        self._register_outbox()
        # The recovered FlowFiles live long and hold no cycles: keep every later collection of
        # the cyclic garbage collector from scanning them again (a million FlowFiles would make
        # each full collection a pause of seconds).
        gc.freeze()
        if background:
            self.flowfiles.start(self.config.flowfile_repository.checkpoint_interval)
            self.content.start()
            self.provenance.start()
        return self.recovered

    def commit(self, records: list[RepositoryRecord], events: list[ProvenanceEvent], *,
               force_sync: bool = False) -> int | None:
        """Commit ``records`` to the FlowFile repository, then register ``events``, so that a
        node killed in between still registers them, once, when it starts again.

        The events ride in the WAL transaction as an outbox entry, settled once they are in
        a provenance journal (events the journal refuses wait in its backlog, and are settled
        when it takes them); recovery registers every entry the provenance repository does
        not hold. Returns the id of the first event, or None when there were none or
        they could not be registered now. Raises what ``FlowFileRepository.update`` raises
        (nothing is registered then); an event that cannot be registered is logged, never
        raised: the commit stands.
        """
        if not events:
            if records:
                self.flowfiles.update(records, force_sync=force_sync)
            return None
        provenance = self.provenance
        encoded = provenance.encode(events)
        wal = self.flowfiles.wal
        key, still_open = wal.open_outbox_entry()
        try:
            self.flowfiles.update([*records, RepositoryRecord.outbox(key, encoded.blobs, still_open)],
                                  force_sync=force_sync)
        except BaseException:
            wal.settle_outbox(key)
            raise
        try:
            return provenance.append_encoded(encoded, functools.partial(wal.settle_outbox, key))
        except Exception:
            log.exception("%d provenance event(s) of a commit could not be registered; they are registered "
                          "when the node starts again", len(events))
            return None

    def _register_outbox(self) -> None:
        """Register the events of the outbox entries the provenance repository does not hold."""
        outbox = self.flowfiles.wal.outbox
        if not outbox:
            return
        provenance, settle = self.provenance, self.flowfiles.wal.settle_outbox
        entries = sorted(outbox.items())
        held = provenance.holding(blobs[0] for _, blobs in entries if blobs)
        missing = 0
        for key, blobs in entries:
            if blobs and blobs[0] not in held:
                provenance.append_encoded(provenance.encoded_from_stored(blobs), functools.partial(settle, key))
                missing += len(blobs)
            else:
                settle(key)
        if missing:
            log.warning("registered %d provenance event(s) of commits made just before the node stopped", missing)

    def verify(self) -> Verification:
        """Check content existence and claimant counts (call while no session is open)."""
        return verify(self.flowfiles, self.content, self.claims.counts())

    def close(self) -> list[str]:
        """Checkpoint the FlowFile repository, release what it freed, close every repository and
        unlock the data directory (idempotent).

        A repository that cannot be closed cleanly (a full disk, an I/O error) does not keep the
        others open: each such failure is logged as one line saying what it means for the data,
        and the lines are returned.
        """
        failures: list[str] = []

        def attempt(close: Callable[[], None], what: str, meaning: str) -> bool:
            try:
                close()
            except Exception as error:  # SQLite reports a full disk as its own error, not an OSError
                reason = error.strerror if isinstance(error, OSError) and error.strerror else \
                    f"{type(error).__name__}: {error}"
                failures.append(f"{what}: {reason}; {meaning}")
                log.error("%s", failures[-1])
                log.debug("why %s failed", what, exc_info=True)
                return False
            return True

        if self.recovered is not None:
            attempt(self.flowfiles.close, f"could not write the checkpoint of {self.flowfiles.directory}",
                    "every committed FlowFile is in the journals and will be recovered at the next start")
        attempt(self.provenance.close, f"could not close the provenance repository {self.provenance.directory}",
                "events not yet rolled over stay in its journals and are rolled over at the next start")
        attempt(self.content.close, "could not close the content repository",
                "the content of committed FlowFiles stays on disk")
        self.lock.release()
        return failures

    def __enter__(self) -> NodeStorage:
        self.open()
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
