"""The file-system content repository: immutable content appended into resource-claim files.

Each container (a directory, typically one disk) is split into ``config.sections`` section
directories. A resource claim is one file ``<container>/<section>/<identifier>``; many small
contents are appended to the same file until it reaches ``max_appendable_size``, and each
content is addressed by a :class:`ContentClaim` (resource claim, offset, length).

Files are never rewritten. A file leaves the live tree only through :meth:`release` (after
the FlowFile repository's checkpoint made its last dereference durable) or
:meth:`collect_orphans` (at start-up), and goes to the archive or is deleted.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import shutil
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, TypeVar

from engine.checksums import crc32
from engine.content.archive import ARCHIVE_DIRECTORY, CleanupResult, ContainerArchive, DiskUsageProbe
from engine.content.claims import ResourceClaimManager
from engine.content.config import ContentConfig
from engine.content.handles import ReadHandles
from engine.content.inventory import ContainerStats, ContentStats, content_stats, live_claims
from engine.content.reader import FILE_MISSING, ClaimReader, ContentChecksumError, ContentNotFoundError, checksum_error
from engine.content.writer import AppendableClaim, ContentWriter
from engine import fileops
from engine.damage import Damage, DamageLog, Quarantine
from engine.flowfile import ContentClaim, ResourceClaim

__all__ = [
    "CleanupResult",
    "ContainerStats",
    "ContentChecksumError",
    "ContentNotFoundError",
    "ContentRepository",
    "ContentStats",
    "ContentWriter",
]

log = logging.getLogger(__name__)

_POOL_CAPACITY = 1024
_SYNC_STRIPES = 64
_SYNC_THREADS = 16
_T = TypeVar("_T")
_R = TypeVar("_R")


class ContentRepository:
    """Content repository over one or more container directories.

    Thread-safe: any number of threads may hold writers and readers at once. ``disk_usage``
    is the probe the archive cleaner asks for a container's disk usage.
    """

    def __init__(
        self,
        containers: Mapping[str, Path],
        claim_manager: ResourceClaimManager,
        config: ContentConfig | None = None,
        *,
        disk_usage: DiskUsageProbe = shutil.disk_usage,
        damage: DamageLog | None = None,
        quarantine: Quarantine | None = None,
        track_written: bool = False,
    ) -> None:
        if not containers:
            raise ValueError("the content repository needs at least one container")
        self._config = config or ContentConfig()
        self.damage = damage or DamageLog()
        self.quarantine = quarantine or Quarantine(Path(next(iter(containers.values()))).parent)
        self._claims = claim_manager
        self._roots = {name: Path(path) for name, path in containers.items()}
        self._names = list(self._roots)
        self._root_names = {name: str(root) for name, root in self._roots.items()}
        sections = self._config.sections
        for root in self._roots.values():
            for section in range(sections):
                fileops.make_directory(root / str(section))
        self._handles = ReadHandles()
        self._archives = {
            name: ContainerArchive(root, sections, disk_usage, on_delete=self._archived_file_deleted(name))
            for name, root in self._roots.items()
        }
        self._lock = threading.Lock()
        # Held while a claim is released or reclaimed: a claim found unused is archived before
        # a replay can count it again, and a replay never counts one that is being archived.
        self._release_lock = threading.Lock()
        self._pool: deque[AppendableClaim] = deque()
        self._index = itertools.count()
        self._next_container = itertools.count()
        self._section_counters = {name: itertools.count() for name in self._names}
        self._closed = False
        self._sync_locks = [threading.Lock() for _ in range(_SYNC_STRIPES)]
        # Bytes of each file known to be durable, its directory entry included.
        self._synced: dict[ResourceClaim, int] = {}
        # Files a writer finished with since ``sync_written`` last ran (guarded by ``_lock``);
        # kept only with ``track_written``: commits that sync their own content need none.
        self._track_written = track_written
        self._written: set[ResourceClaim] = set()
        # Files whose sync failed: what they got since their last good sync may never reach
        # the disk (a failed fsync may drop the dirty pages), so they are never synced again.
        self._sync_failed: dict[ResourceClaim, OSError] = {}
        self._sync_pool: ThreadPoolExecutor | None = None
        self._cleaner: threading.Thread | None = None
        self._stop = threading.Event()

    def _archived_file_deleted(self, container: str) -> Callable[[int, str], None]:
        def forget(section: int, identifier: str) -> None:
            self._handles.forget(ResourceClaim(container, section, identifier))
        return forget

    @property
    def config(self) -> ContentConfig:
        """The repository's settings."""
        return self._config

    @property
    def containers(self) -> dict[str, Path]:
        """Container names and their directories."""
        return dict(self._roots)

    # -- paths --------------------------------------------------------------------------

    def path(self, claim: ResourceClaim) -> Path:
        """The live path of a resource claim."""
        return self._root(claim) / str(claim.section) / claim.identifier

    def archive_path(self, claim: ResourceClaim) -> Path:
        """The path a resource claim has once archived."""
        return self._root(claim) / str(claim.section) / ARCHIVE_DIRECTORY / claim.identifier

    def _root(self, claim: ResourceClaim) -> Path:
        try:
            return self._roots[claim.container]
        except KeyError:
            raise ContentNotFoundError(
                f"resource claim {claim} names unknown container {claim.container!r}"
            ) from None

    # -- writing ------------------------------------------------------------------------

    def open_writer(self, *, checksum: bool = True) -> ContentWriter:
        """Start a new content on a writable resource claim taken from the pool or made anew.

        Without ``checksum`` the content gets none (its caller checksums the parts it cuts it into).
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("the content repository is closed")
            claim = self._pool.pop() if self._pool else None
        return ContentWriter(claim or self._create_claim(), self._finish_writer, checksum=checksum)

    def write_bytes(self, data: bytes | bytearray | memoryview) -> ContentClaim:
        """Store ``data`` as a new content and return its claim."""
        writer = self.open_writer()
        try:
            writer.write(data)
        except BaseException:
            writer.abort()
            raise
        return writer.close()

    def _create_claim(self) -> AppendableClaim:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
        while True:
            with self._lock:
                index = next(self._index)
                name = self._names[next(self._next_container) % len(self._names)]
                section = next(self._section_counters[name]) % self._config.sections
            claim = ResourceClaim(name, section, f"{time.time_ns() // 1_000_000}-{index}")
            path = self.path(claim)
            try:
                fd = fileops.open_fd(path, flags)
            except FileExistsError:
                continue
            except FileNotFoundError:
                fileops.make_directory(path.parent)
                continue
            # An archived file of an earlier run may hold this identifier; readers of that old
            # claim fall back to the archive only while no live file has the name.
            if self.archive_path(claim).exists():
                fileops.close(fd)
                fileops.unlink(path)
                continue
            self._claims.mark_writable(claim)
            return AppendableClaim(claim, path, fd)

    def _finish_writer(self, claim: AppendableClaim, *, referenced: bool, reusable: bool) -> None:
        resource = claim.resource_claim
        if referenced:
            self._claims.increment(resource)
        with self._lock:
            if referenced and self._track_written:
                self._written.add(resource)
            if (reusable and claim.length < self._config.max_appendable_size and not self._closed
                    and len(self._pool) < _POOL_CAPACITY and resource not in self._sync_failed):
                self._pool.append(claim)
                return
        self._freeze(claim)

    def _freeze(self, claim: AppendableClaim) -> None:
        try:
            os.close(claim.fd)
        finally:
            self._claims.freeze(claim.resource_claim)

    # -- reading ------------------------------------------------------------------------

    def open_reader(self, claim: ContentClaim) -> ClaimReader:
        """Open a streaming reader over the claim's bytes, from the archive if no longer live."""
        fd, path = self._open_content(claim)
        return ClaimReader(fd, claim, path)

    def read_bytes(self, claim: ContentClaim) -> bytes:
        """The whole content of ``claim`` (read through a cache of open files: most contents are
        small and many share a file)."""
        rc = claim.resource_claim
        handle = self._handles.acquire(rc)
        if handle is None:
            fd, path = self._open_content(claim)
            handle = self._handles.adopt(rc, fd, path)
        try:
            data = os.pread(handle.fd, claim.length, claim.offset)
        finally:
            self._handles.release(handle)
        if len(data) < claim.length:
            end = claim.offset + claim.length
            raise ContentNotFoundError(
                f"content of {claim} not found: {handle.path} ends before byte {end}",
                claim=claim, path=handle.path, found=f"the file ends before byte {end}",
            )
        if claim.checksum is not None:
            actual = crc32(data)
            if actual != claim.checksum:
                raise checksum_error(claim, handle.path, actual)
        return data

    def _open_content(self, claim: ContentClaim) -> tuple[int, str]:
        # Paths are plain strings here: pathlib would cost more than the read of a small content.
        rc = claim.resource_claim
        directory = f"{self._root_names.get(rc.container) or self._root(rc)}/{rc.section}"
        path = f"{directory}/{rc.identifier}"
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            live, path = path, f"{directory}/{ARCHIVE_DIRECTORY}/{rc.identifier}"
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                raise ContentNotFoundError(
                    f"content of {claim} not found: neither {live} nor {path} exists",
                    claim=claim, path=live, found=FILE_MISSING,
                ) from None
        try:
            size = os.fstat(fd).st_size
        except BaseException:
            os.close(fd)
            raise
        end = claim.offset + claim.length
        if size < end:
            os.close(fd)
            raise ContentNotFoundError(
                f"content of {claim} not found: {path} has {size} bytes, the claim ends at byte {end}",
                claim=claim, path=path, found=f"the file is cut short at {size} bytes",
            )
        return fd, path

    def exists(self, claim: ContentClaim) -> bool:
        """True when the claim's bytes can be read (live or archived)."""
        for path in (self.path(claim.resource_claim), self.archive_path(claim.resource_claim)):
            try:
                return path.stat().st_size >= claim.offset + claim.length
            except FileNotFoundError:
                continue
        return False

    # -- durability ---------------------------------------------------------------------

    def sync(self, resource_claims: Iterable[ResourceClaim]) -> None:
        """Make the files of ``resource_claims`` durable up to their current length.

        A file already synced up to its current length is skipped, so concurrent commits
        that touched the same file share one fdatasync. Many files are synced in parallel:
        the disk and the file system's journal merge concurrent flushes.

        Raises the ``OSError`` of the first file that failed. A file whose sync failed once
        fails every later sync (a failed fsync may have dropped its unwritten pages, so a
        later success would prove nothing) and takes no more content.
        """
        results = self._sync_all(list(dict.fromkeys(resource_claims)))
        for result in results:
            if isinstance(result, BaseException):
                raise result

    def sync_written(self) -> None:
        """Make every file a writer finished with since the last call durable.

        Under the ``os`` policy (the repository made with ``track_written``) the FlowFile
        repository calls it at every checkpoint, after it has taken its copy of the records and
        before it writes the snapshot, so the snapshot never names content a power loss could
        take; under ``always`` and ``grouped`` every commit synced its content already. On failure the first error is raised: that
        checkpoint must not go ahead. A file whose fsync failed is recorded as damage and not
        retried (see :meth:`sync`), so the next checkpoint can go ahead; a file that could not
        be opened is tried again next time.
        """
        with self._lock:
            pending, self._written = self._written, set()
        claims = list(pending)
        first: BaseException | None = None
        retry = set()
        for claim, result in zip(claims, self._sync_all(claims, missing_ok=True)):
            if result is None:
                continue
            first = first or result
            if claim not in self._sync_failed:
                retry.add(claim)  # it could not be opened, or its directory not synced: try again
                continue
            self.damage.record(Damage(
                "content claim", str(self.path(claim)), None, f"sync failed: {result}",
                "content written to the file since its last sync may be lost after a power failure",
                "check the disk; the node keeps running and writes new content to other files",
            ))
        if first is not None:
            with self._lock:
                self._written |= retry
            raise first

    def _sync_all(self, claims: list[ResourceClaim], *, missing_ok: bool = False) -> list[BaseException | None]:
        """Sync each file; return None or the error of each, in order."""
        def attempt(claim: ResourceClaim) -> tuple[ResourceClaim, int, bool] | BaseException | None:
            try:
                return self._sync_file(claim)
            except FileNotFoundError as error:
                if missing_ok and not self._claims.is_in_use(claim):
                    return None  # released since it was written: nothing left to make durable
                return error
            except OSError as error:
                return error

        results = list(self._map_parallel(attempt, claims))
        flushed = [r for r in results if isinstance(r, tuple)]
        # A new file survives a crash only once its directory entry is durable too, so a file
        # counts as synced only after that.
        directories = list({self.path(claim).parent for claim, _, new in flushed if new})
        failed_directories = {}
        for directory, error in zip(directories, self._map_parallel(_try_sync_directory, directories)):
            if error is not None:
                failed_directories[directory] = error
        errors: list[BaseException | None] = []
        for claim, result in zip(claims, results):
            if isinstance(result, tuple):
                error = failed_directories.get(self.path(claim).parent)
                if error is None:
                    self._synced[claim] = max(result[1], self._synced.get(claim, 0))
                errors.append(error)
            else:
                errors.append(result)
        return errors

    def _sync_file(self, claim: ResourceClaim) -> tuple[ResourceClaim, int, bool] | None:
        with self._sync_locks[hash(claim) % _SYNC_STRIPES]:
            path = self.path(claim)
            failed = self._sync_failed.get(claim)
            if failed is not None:
                raise OSError(errno.EIO, f"an earlier sync of this file failed ({failed.strerror})", str(path))
            known = self._synced.get(claim)
            fd = fileops.open_fd(path, os.O_RDONLY)
            try:
                size = os.fstat(fd).st_size
                if known is not None and known >= size:
                    return None
                try:
                    fileops.sync(fd, path, data_only=True)
                except OSError as error:
                    self._poison(claim, error)
                    raise
            finally:
                os.close(fd)
        return claim, size, known is None

    def _poison(self, claim: ResourceClaim, error: OSError) -> None:
        """Note that a sync of ``claim``'s file failed; no writer appends to it again."""
        log.error("sync of content file %s failed: %s; it takes no more content", self.path(claim), error)
        with self._lock:
            self._sync_failed[claim] = error
            pooled = [c for c in self._pool if c.resource_claim == claim]
            for appendable in pooled:
                self._pool.remove(appendable)
        for appendable in pooled:
            self._freeze(appendable)

    def _map_parallel(self, function: Callable[[_T], _R], items: list[_T]) -> Iterator[_R]:
        if len(items) <= 1:
            return map(function, items)
        with self._lock:
            if self._closed:
                return map(function, items)
            if self._sync_pool is None:
                self._sync_pool = ThreadPoolExecutor(_SYNC_THREADS, thread_name_prefix="content-sync")
            pool = self._sync_pool
        return pool.map(function, items)

    # -- releasing ----------------------------------------------------------------------

    def release(self, resource_claims: Iterable[ResourceClaim]) -> int:
        """Archive (or delete) each claim that is still unused; return how many were removed.

        Call only after the FlowFile repository's checkpoint made the claims' last
        dereference durable. Claims in use (writable or referenced) are left alone.
        """
        removed = 0
        for claim in dict.fromkeys(resource_claims):
            with self._release_lock:
                if self._claims.is_in_use(claim):
                    log.debug("not releasing %s: it is in use again", claim)
                    continue
                if self._remove(claim):
                    removed += 1
        return removed

    def reclaim(self, claim: ContentClaim) -> None:
        """Count one more claimant of ``claim``'s resource claim for content written long ago (a
        replayed FlowFile), bringing its file back from the archive if it was archived: archived
        files are deleted by age and disk usage whoever points at them, live ones only once
        unused.

        Raises ContentNotFoundError (and counts nothing) when the bytes can no longer be read.
        """
        resource = claim.resource_claim
        with self._release_lock:
            self._claims.increment(resource)
            try:
                live = self.path(resource)
                if not live.exists() and not self._archives[resource.container].restore(
                        live, resource.section, resource.identifier):
                    raise ContentNotFoundError(
                        f"content of {claim} not found: neither {live} nor {self.archive_path(resource)} exists",
                        claim=claim, path=live, found=FILE_MISSING)
                size = live.stat().st_size
                end = claim.offset + claim.length
                if size < end:
                    raise ContentNotFoundError(
                        f"content of {claim} not found: {live} has {size} bytes, the claim ends at byte {end}",
                        claim=claim, path=live, found=f"the file is cut short at {size} bytes")
            except BaseException:
                self._claims.decrement(resource)
                raise

    def _remove(self, claim: ResourceClaim) -> bool:
        self._synced.pop(claim, None)
        with self._lock:
            self._written.discard(claim)
            self._sync_failed.pop(claim, None)
        self._handles.forget(claim)
        live = self.path(claim)
        if self._config.archive_enabled:
            return self._archives[claim.container].archive(live, claim.section, claim.identifier)
        return fileops.unlink(live, missing_ok=True)

    def collect_orphans(self, referenced: set[ResourceClaim] | frozenset[ResourceClaim], *,
                        keep: bool = False) -> int:
        """Archive or delete every live file no recovered FlowFile references; return how many.

        Call at start-up, after the FlowFile repository recovered and before writing. With
        ``keep`` (a start that accepted a damaged log, whose lost transactions may have
        referenced them) the files are moved to the quarantine folder instead.
        """
        orphans = [
            claim
            for claim in self.iter_resource_claims()
            if claim not in referenced and not self._claims.is_in_use(claim)
        ]
        if keep:
            for claim in orphans:
                self.quarantine.move(self.path(claim))
            if orphans:
                log.warning("moved %d content file(s) no recovered FlowFile references to %s", len(orphans),
                            self.quarantine.folder)
            return len(orphans)
        removed = sum(1 for claim in orphans if self._remove(claim))
        if removed:
            log.info("archived or deleted %d orphaned resource claims", removed)
        return removed

    # -- archive cleanup ----------------------------------------------------------------

    def run_cleanup(self, now: float | None = None) -> CleanupResult:
        """Delete archived content past its retention, then the oldest while a disk is too full."""
        now = time.time() if now is None else now
        result = CleanupResult()
        for name, archive in self._archives.items():
            try:
                result += archive.cleanup(
                    now, self._config.archive_max_retention, self._config.archive_max_usage_percentage
                )
            except OSError:
                log.exception("archive cleanup of content container %r failed", name)
        return result

    def start(self) -> None:
        """Start the background thread that runs the archive cleanup every cleanup interval."""
        with self._lock:
            if self._cleaner is not None:
                return
            self._cleaner = threading.Thread(
                target=self._clean_periodically, name="content-archive-cleaner", daemon=True
            )
            self._cleaner.start()

    def _clean_periodically(self) -> None:
        while not self._stop.wait(self._config.cleanup_interval):
            try:
                result = self.run_cleanup()
            except Exception:
                log.exception("content archive cleanup failed")
                continue
            if result.expired or result.evicted:
                log.info(
                    "content archive cleanup: %d expired, %d evicted, %d bytes freed",
                    result.expired,
                    result.evicted,
                    result.bytes_freed,
                )

    def close(self) -> None:
        """Stop the cleaner and close the pooled claims (they stop being writable)."""
        self._stop.set()
        cleaner = self._cleaner
        if cleaner is not None and cleaner is not threading.current_thread():
            cleaner.join()
        with self._lock:
            self._closed = True
            pooled = list(self._pool)
            self._pool.clear()
            sync_pool, self._sync_pool = self._sync_pool, None
        if sync_pool is not None:
            sync_pool.shutdown()
        for claim in pooled:
            self._freeze(claim)
        self._handles.close()

    def __enter__(self) -> ContentRepository:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- inspection ---------------------------------------------------------------------

    def iter_resource_claims(self) -> Iterator[ResourceClaim]:
        """Every live resource-claim file on disk."""
        return live_claims(self._roots, self._config.sections)

    def resource_claim_length(self, claim: ResourceClaim) -> int | None:
        """The size of a resource claim's file (live, else archived), or None when it is gone."""
        for path in (self.path(claim), self.archive_path(claim)):
            try:
                return path.stat().st_size
            except FileNotFoundError:
                continue
        return None

    def stats(self) -> ContentStats:
        """Counts and sizes of live and archived files, per container."""
        return content_stats(self._roots, self._config.sections)

    def archive_scans(self, container: str) -> int:
        """How many times the archive of ``container`` was listed to refill its oldest entries."""
        return self._archives[container].scan_count


def _try_sync_directory(path: Path) -> OSError | None:
    try:
        fileops.sync_directory(path)
    except OSError as error:
        return error
    return None
