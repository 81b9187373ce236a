"""FlowFile updates per second through the write-ahead log, beside bare append loops.

Run with ``python -m bench.wal_throughput [--seconds S]``. Each committing thread updates its
own FlowFiles, one FlowFile per transaction (the worst case for the log: every commit pays the
framing and, under ``always``/``grouped``, a sync). The bare loops append the very same framed
bytes with one ``os.write`` per record, one with an ``fdatasync`` after each record and one
without any sync, in the same run on the same disk.

Targets: ``always`` (1 thread) ≥ 70 % of the sync-per-record loop; ``grouped`` with 16 threads
≥ 5× the sync-per-record loop; ``os`` (1 thread) ≥ 25 % of the no-sync loop.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import msgpack

from bench.machine import describe_machine
from engine.content.claims import ResourceClaimManager
from engine.flowfile import ContentClaim, FlowFile, ResourceClaim
from engine.repository.flowfile_repository import FlowFileRepository
from engine.repository.records import FlowFileRecordSerde, RepositoryRecord
from engine.wal import SyncPolicy
from engine.wal.journal import encode_transaction

THREADS = (1, 4, 16)


def sample_flowfile(flowfile_id: int) -> FlowFile:
    """A FlowFile shaped like a real one: five attributes and a content claim."""
    claim = ContentClaim(ResourceClaim("default", flowfile_id % 1024, "1795000000000-17"), 1024 * flowfile_id, 1024)
    attributes = {
        "uuid": f"6f1c1a52-0d7e-4c1f-9b1e-{flowfile_id:012d}",
        "filename": f"file-{flowfile_id}.json",
        "path": "./",
        "mime.type": "application/json",
        "http.status.code": "200",
    }
    return FlowFile(flowfile_id, attributes["uuid"], attributes, claim, 1795000000000, 1795000000000, flowfile_id)


def bench_log(directory: Path, policy: SyncPolicy, threads: int, seconds: float) -> float:
    """Updates per second with ``threads`` committing threads for about ``seconds``."""
    repo = FlowFileRepository(directory, ResourceClaimManager(), sync_policy=policy)
    repo.recover()
    per_thread = [[sample_flowfile(t * 1_000_000 + i) for i in range(64)] for t in range(threads)]
    for flowfiles in per_thread:
        repo.update([RepositoryRecord.create(f, "queue-1") for f in flowfiles])
    counts = [0] * threads
    stop = time.perf_counter() + seconds
    barrier = threading.Barrier(threads + 1)

    def commit_loop(index: int) -> None:
        flowfiles = per_thread[index]
        update = repo.update
        done = 0
        barrier.wait()
        while time.perf_counter() < stop:
            for flowfile in flowfiles:
                update([RepositoryRecord(2, flowfile, "queue-2", original_claim=flowfile.content_claim)])
            done += len(flowfiles)
        counts[index] = done

    workers = [threading.Thread(target=commit_loop, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    barrier.wait()
    started = time.perf_counter()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - started
    repo.wal.close(checkpoint=False)
    return sum(counts) / elapsed


def sample_frame() -> bytes:
    """The bytes one single-FlowFile update transaction appends to a journal."""
    record = RepositoryRecord(2, sample_flowfile(7), "queue-2")
    return encode_transaction(12345, msgpack.packb([FlowFileRecordSerde().to_wire(record)]))


def bench_raw(directory: Path, seconds: float, sync: bool) -> float:
    """Records per second of a bare loop appending ``sample_frame()`` with ``os.write``."""
    frame = sample_frame()
    fd = os.open(directory / f"raw-{sync}", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    done = 0
    started = time.perf_counter()
    stop = started + seconds
    try:
        while time.perf_counter() < stop:
            for _ in range(64):
                os.write(fd, frame)
                if sync:
                    os.fdatasync(fd)
            done += 64
    finally:
        os.close(fd)
    return done / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each measurement")
    parser.add_argument("--dir", type=Path, default=Path(".data/bench-wal"), help="scratch directory on the disk to test")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="wal-", dir=args.dir))
    try:
        print(describe_machine(scratch))
        print(f"record: {len(sample_frame())} bytes per single-FlowFile transaction")
        raw_sync = bench_raw(scratch, args.seconds, sync=True)
        raw_nosync = bench_raw(scratch, args.seconds, sync=False)
        print(f"raw append + fdatasync per record: {raw_sync:12,.0f} records/s")
        print(f"raw append, no sync:               {raw_nosync:12,.0f} records/s")
        results = {}
        for policy in SyncPolicy:
            for threads in THREADS:
                directory = scratch / f"{policy.value}-{threads}"
                results[policy, threads] = rate = bench_log(directory, policy, threads, args.seconds)
                shutil.rmtree(directory)
                base = raw_nosync if policy is SyncPolicy.OS else raw_sync
                base_name = "no-sync loop" if policy is SyncPolicy.OS else "sync-per-record loop"
                print(f"{policy.value:8} {threads:2} thread(s): {rate:12,.0f} updates/s = {rate / base:6.2f} x {base_name}")
        print("targets:")
        checks = [
            ("always, 1 thread ≥ 0.70 x sync-per-record", results[SyncPolicy.ALWAYS, 1] / raw_sync, 0.70),
            ("grouped, 16 threads ≥ 5 x sync-per-record", results[SyncPolicy.GROUPED, 16] / raw_sync, 5.0),
            ("os, 1 thread ≥ 0.25 x no-sync loop", results[SyncPolicy.OS, 1] / raw_nosync, 0.25),
        ]
        for name, ratio, target in checks:
            print(f"  {name}: {ratio:.2f} -> {'met' if ratio >= target else 'MISSED'}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
